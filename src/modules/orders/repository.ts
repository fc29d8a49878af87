import { QueryTypes } from 'sequelize';
import type { OrderStatus, ProfitSharingStatus } from './rules';
import type { Database } from '../../platform/db';
import { orderModels, type Order } from './model';

export interface NewOrder {
  tradeNo: string;
  appId: string;
  merchantOrderNo: string;
  merchantId: string | null;
  /** The merchant's sub_merchant_no when the order was created (absent in older histories). */
  subMerchantNo?: string | null;
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

/**
 * The orders read model and the channel callback log. Only activities write orders (each
 * write idempotent on its key and guarded by the state it moves from); the API reads them.
 */
export class OrderRepository {
  constructor(private readonly db: Database) {}

  private get models() {
    return orderModels(this.db.sequelize);
  }

  async findOrder(appId: string, tradeNo: string): Promise<Order | null> {
    return this.models.Order.findOne({ where: { appId, tradeNo } });
  }

  async findOrderByTradeNo(tradeNo: string): Promise<Order | null> {
    return this.models.Order.findByPk(tradeNo);
  }

  async findOrderByMerchantOrderNo(appId: string, merchantOrderNo: string): Promise<Order | null> {
    return this.models.Order.findOne({ where: { appId, merchantOrderNo } });
  }

  async insertOrder(o: NewOrder): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO orders (trade_no, app_id, merchant_order_no, merchant_id, sub_merchant_no, channel_code, pay_method,
                           amount, currency,
                           subject, notify_url, status, channel_trade_no, pay_credential, expire_time,
                           profit_sharing_amount, profit_sharing_status, extra, created_at, updated_at)
       VALUES (:tradeNo, :appId, :merchantOrderNo, :merchantId, :subMerchantNo, :channelCode, :payMethod, :amount, :currency,
               :subject, :notifyUrl, 'pending', :channelTradeNo, CAST(:payCredential AS jsonb), :expireTime,
               :profitSharingAmount, CASE WHEN :profitSharingAmount > 0 THEN 'pending' ELSE 'none' END,
               CAST(:extra AS jsonb), :createdAt, now())
       ON CONFLICT (trade_no) DO NOTHING`,
      {
        replacements: {
          ...o,
          subMerchantNo: o.subMerchantNo ?? null,
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
