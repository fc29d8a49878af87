import { QueryTypes } from 'sequelize';
import {
  isoOrNull,
  type OrderStatus,
  type ProfitSharingStatus,
  type RefundStatus,
} from '../../domain/orders';
import type { Database } from '../index';
import type { Order, Refund } from '../models/order';

/** The order as GET /api/v1/pay/query shows it (SPEC §3.3). */
export function orderView(o: Order) {
  return {
    trade_no: o.tradeNo,
    merchant_order_no: o.merchantOrderNo,
    pay_method: o.payMethod,
    amount: Number(o.amount),
    status: o.status,
    channel_trade_no: o.channelTradeNo,
    pay_time: isoOrNull(o.payTime),
    created_at: isoOrNull(o.createdAt),
    channel_code: o.channelCode,
    subject: o.subject,
    merchant_id: o.merchantId,
    refunded_amount: Number(o.refundedAmount),
    profit_sharing_amount: Number(o.profitSharingAmount),
    profit_sharing_status: o.profitSharingStatus,
    expire_time: isoOrNull(o.expireTime),
    closed_at: isoOrNull(o.closedAt),
  };
}

/** The refund as GET /api/v1/pay/refund/query shows it (SPEC §3.6). */
export function refundView(r: Refund) {
  return {
    refund_no: r.refundNo,
    trade_no: r.tradeNo,
    refund_amount: Number(r.refundAmount),
    status: r.status,
    channel_refund_no: r.channelRefundNo,
    refund_time: isoOrNull(r.refundTime),
    reason: r.reason,
    merchant_refund_no: r.merchantRefundNo,
    created_at: isoOrNull(r.createdAt),
  };
}

export interface NewOrder {
  tradeNo: string;
  appId: string;
  merchantOrderNo: string;
  merchantId: string | null;
  channelCode: string;
  payMethod: string;
  amount: number;
  currency: string;
  subject: string;
  notifyUrl: string;
  channelTradeNo: string | null;
  payCredential: Record<string, unknown>;
  expireTime: string;
  profitSharingAmount: number;
  extra: Record<string, unknown> | null;
  createdAt: string;
}

export interface NewRefund {
  refundNo: string;
  appId: string;
  tradeNo: string;
  merchantRefundNo: string | null;
  refundAmount: number;
  reason: string | null;
  notifyUrl: string | null;
  createdAt: string;
}

/**
 * The payments read model. Only activities write it (each write idempotent on its key and
 * guarded by the state it moves from); the API reads it.
 */
export class PaymentRepository {
  constructor(private readonly db: Database) {}

  async findOrder(appId: string, tradeNo: string): Promise<Order | null> {
    return this.db.models.Order.findOne({ where: { appId, tradeNo } });
  }

  async findOrderByTradeNo(tradeNo: string): Promise<Order | null> {
    return this.db.models.Order.findByPk(tradeNo);
  }

  async findOrderByMerchantOrderNo(appId: string, merchantOrderNo: string): Promise<Order | null> {
    return this.db.models.Order.findOne({ where: { appId, merchantOrderNo } });
  }

  async findRefund(appId: string, refundNo: string): Promise<Refund | null> {
    return this.db.models.Refund.findOne({ where: { appId, refundNo } });
  }

  async findRefundByNo(refundNo: string): Promise<Refund | null> {
    return this.db.models.Refund.findByPk(refundNo);
  }

  async findRefundByMerchantRefundNo(appId: string, merchantRefundNo: string): Promise<Refund | null> {
    return this.db.models.Refund.findOne({ where: { appId, merchantRefundNo } });
  }

  async insertOrder(o: NewOrder): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO orders (trade_no, app_id, merchant_order_no, merchant_id, channel_code, pay_method, amount, currency,
                           subject, notify_url, status, channel_trade_no, pay_credential, expire_time,
                           profit_sharing_amount, profit_sharing_status, extra, created_at, updated_at)
       VALUES (:tradeNo, :appId, :merchantOrderNo, :merchantId, :channelCode, :payMethod, :amount, :currency,
               :subject, :notifyUrl, 'pending', :channelTradeNo, CAST(:payCredential AS jsonb), :expireTime,
               :profitSharingAmount, CASE WHEN :profitSharingAmount > 0 THEN 'pending' ELSE 'none' END,
               CAST(:extra AS jsonb), :createdAt, now())
       ON CONFLICT (trade_no) DO NOTHING`,
      {
        replacements: {
          ...o,
          payCredential: JSON.stringify(o.payCredential),
          extra: o.extra === null ? null : JSON.stringify(o.extra),
        },
      },
    );
  }

  /** pending (or closed: a late payment) → paid. */
  async markPaid(tradeNo: string, channelTradeNo: string | null, payTime: string): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE orders
          SET needs_refund_review = (status = 'closed'),
              status = 'paid', channel_trade_no = COALESCE(:channelTradeNo, channel_trade_no),
              pay_time = :payTime, updated_at = now()
        WHERE trade_no = :tradeNo AND status IN ('pending', 'closed')`,
      { replacements: { tradeNo, channelTradeNo, payTime } },
    );
  }

  async markClosed(tradeNo: string, closedAt: string): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE orders SET status = 'closed', closed_at = :closedAt, updated_at = now()
        WHERE trade_no = :tradeNo AND status = 'pending'`,
      { replacements: { tradeNo, closedAt } },
    );
  }

  async setRefundTotals(tradeNo: string, refundedAmount: number, status: OrderStatus): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE orders SET refunded_amount = :refundedAmount, status = :status, updated_at = now()
        WHERE trade_no = :tradeNo AND status IN ('paid', 'partially_refunded', 'refunded')`,
      { replacements: { tradeNo, refundedAmount, status } },
    );
  }

  async setProfitSharingStatus(tradeNo: string, status: ProfitSharingStatus): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE orders SET profit_sharing_status = :status, updated_at = now() WHERE trade_no = :tradeNo`,
      { replacements: { tradeNo, status } },
    );
  }

  async insertRefund(r: NewRefund): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO refunds (refund_no, app_id, trade_no, merchant_refund_no, refund_amount, reason, notify_url,
                            status, created_at, updated_at)
       VALUES (:refundNo, :appId, :tradeNo, :merchantRefundNo, :refundAmount, :reason, :notifyUrl,
               'processing', :createdAt, now())
       ON CONFLICT (refund_no) DO NOTHING`,
      { replacements: { ...r } },
    );
  }

  async setRefundChannelNo(refundNo: string, channelRefundNo: string | null): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE refunds SET channel_refund_no = COALESCE(:channelRefundNo, channel_refund_no), updated_at = now()
        WHERE refund_no = :refundNo`,
      { replacements: { refundNo, channelRefundNo } },
    );
  }

  /** processing → success | failed; a settled refund never changes again. */
  async settleRefund(
    refundNo: string,
    outcome: {
      status: Exclude<RefundStatus, 'processing'>;
      channelRefundNo: string | null;
      refundTime: string | null;
      failReason: string | null;
    },
  ): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE refunds
          SET status = :status, channel_refund_no = COALESCE(:channelRefundNo, channel_refund_no),
              refund_time = :refundTime, fail_reason = :failReason, updated_at = now()
        WHERE refund_no = :refundNo AND status = 'processing'`,
      { replacements: { refundNo, ...outcome } },
    );
  }

  async logCallback(entry: {
    channelCode: string;
    headers: Record<string, string>;
    rawBody: string;
  }): Promise<number> {
    const [row] = await this.db.sequelize.query<{ id: string }>(
      `INSERT INTO channel_callbacks (channel_code, received_at, headers, raw_body, verified, outcome)
       VALUES (:channelCode, now(), CAST(:headers AS jsonb), :rawBody, false, 'received')
       RETURNING id`,
      {
        replacements: { ...entry, headers: JSON.stringify(entry.headers) },
        type: QueryTypes.SELECT,
      },
    );
    return Number(row!.id);
  }

  async finishCallback(
    id: number,
    result: {
      verified: boolean;
      outcome: string;
      error?: string;
      eventId?: string;
      tradeNo?: string;
      refundNo?: string;
    },
  ): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE channel_callbacks
          SET verified = :verified, outcome = :outcome, error = :error, channel_event_id = :eventId,
              trade_no = :tradeNo, refund_no = :refundNo
        WHERE id = :id`,
      {
        replacements: {
          id,
          verified: result.verified,
          outcome: result.outcome,
          error: result.error ?? null,
          eventId: result.eventId ?? null,
          tradeNo: result.tradeNo ?? null,
          refundNo: result.refundNo ?? null,
        },
      },
    );
  }
}
