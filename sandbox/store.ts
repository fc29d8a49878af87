// Longer than 400 lines on purpose: every conditional write of the simulator's tables, reviewed together for races.
/**
 * The simulator's state in Postgres (the tables of ./migrations). Every write that could
 * race another API process is a conditional UPDATE or an INSERT … ON CONFLICT on durapay's
 * reference, so a repeated or concurrent request never creates a second object or fires a
 * second state change.
 *
 * Longer than 300 lines: every table of the simulated channel behind one class, so that each
 * race-safe statement sits beside the others that touch the same rows.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from '../src/platform/db';
import { randomBase32 } from '../src/platform/ids';
import type {
  WireBarcodePayment,
  WireCreateOrder,
  WireCreateRefund,
  WireShareReturnRequest,
  WireUnfreezeRequest,
} from '../src/channels/sandbox/transformers';

export type OrderStatus = 'pending' | 'paid' | 'closed';
export type CallbackMode = 'normal' | 'drop' | 'duplicate' | 'delay';
export type RefundStatus = 'processing' | 'success' | 'failed' | 'abnormal';
export type AuditOutcome = 'finish' | 'reject' | 'sign';
export type AuditStatus = 'submitted' | 'auditing' | 'to_be_signed' | 'finished' | 'rejected';
export type TransferStatus = 'wait_user_confirm' | 'processing' | 'success' | 'failed' | 'cancelled';

export interface OrderRow {
  trade_no: string;
  channel_trade_no: string;
  amount: number;
  currency: string;
  pay_method: string;
  subject: string;
  expire_at: Date;
  notify_url: string;
  extra: Record<string, unknown>;
  sub_merchant_no: string | null;
  profit_sharing: boolean;
  callback_mode: CallbackMode;
  status: OrderStatus;
  paid_at: Date | null;
  closed_at: Date | null;
  /** A barcode payment's: the sha-256 of the buyer's code, what the buyer does, its reverse. */
  auth_code_sha256: string | null;
  buyer: string | null;
  reversed_at: Date | null;
  reverse_refunded: boolean;
  reverse_requests: number;
}

/** A barcode payment as the adapter asks for it, with what its buyer does (read off the code). */
export interface NewBarcodeOrder extends Omit<WireBarcodePayment, 'auth_code'> {
  auth_code_sha256: string;
  buyer: string;
  /** Charged at once (the buyer pays without confirming), or left pending for the buyer. */
  paid: boolean;
}

/** What a reverse left of a barcode payment: closed, and whether the money went back. */
export type ReverseOutcome =
  { kind: 'reversed'; order: OrderRow; refunded: boolean } | { kind: 'refused'; order: OrderRow };

export interface RefundRow {
  refund_no: string;
  channel_refund_no: string;
  trade_no: string;
  amount: number;
  reason: string | null;
  notify_url: string;
  status: RefundStatus;
  outcome: 'success' | 'failed' | 'abnormal';
  settle_at: Date;
  fail_reason: string | null;
  refunded_at: Date | null;
  /** How an abnormal refund was asked to be paid instead; null until then. */
  abnormal_method: string | null;
  abnormal_applied_at: Date | null;
}

export interface ShareReturnRow {
  return_no: string;
  channel_return_no: string;
  share_no: string;
  trade_no: string;
  receiver_type: string;
  receiver_account: string;
  amount: number;
  description: string;
  status: 'success';
}

export interface UnfreezeRow {
  unfreeze_no: string;
  channel_unfreeze_no: string;
  trade_no: string;
  description: string;
}

export interface ProfitShareRow {
  share_no: string;
  trade_no: string;
  amount: number;
  status: 'finished';
}

export interface ApplicationRow {
  application_id: string;
  application_no: string;
  merchant: Record<string, unknown>;
  submit_data: Record<string, unknown>;
  outcome: AuditOutcome;
  step: number;
  status: AuditStatus;
  sub_merchant_no: string;
  created_at: Date;
  updated_at: Date;
}

export interface TransferRow {
  transfer_no: string;
  channel_transfer_no: string;
  sub_merchant_no: string | null;
  amount: number;
  payee_type: string;
  payee_account: string;
  payee_name: string | null;
  remark: string;
  callback_url: string;
  status: TransferStatus;
  outcome: 'success' | 'failed';
  settle_at: Date | null;
  confirm_deadline: Date | null;
  confirmed_at: Date | null;
  fail_reason: string | null;
  finished_at: Date | null;
  create_requests: number;
  created_at: Date;
  updated_at: Date;
}

/**
 * A transfer as the simulator takes it: with a `confirmDeadline` it waits for the payee to
 * confirm until then; without one it is processing and settles at `settleAt`.
 */
export interface NewTransfer {
  transfer_no: string;
  sub_merchant_no: string | null;
  amount: number;
  payee_type: string;
  payee_account: string;
  payee_name: string | null;
  remark: string;
  callback_url: string;
  outcome: 'success' | 'failed';
  settleAt: Date | null;
  confirmDeadline: Date | null;
}

/** Why a transfer ended without the money arriving, as its query and callback say. */
export const TRANSFER_REASONS = {
  failed: 'transfer steered to fail by [transfer:fail]: the payee account cannot receive it',
  expired: 'OVERDUE_CLOSE: the payee did not confirm the transfer in time',
  cancelled: 'cancelled by the merchant',
} as const;

/** The statuses an audit passes through, one per poll, for each steered outcome. */
export const AUDIT_PATHS: Record<AuditOutcome, readonly AuditStatus[]> = {
  finish: ['submitted', 'auditing', 'finished'],
  reject: ['submitted', 'auditing', 'rejected'],
  sign: ['submitted', 'auditing', 'to_be_signed', 'finished'],
};

/** A request the simulated upstream turns down; the router answers it as JSON. */
export class SandboxRefusal extends Error {
  override name = 'SandboxRefusal';
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const REFUND_FAIL_MARKER = '[sandbox:fail]';
/** A refund whose reason holds this ends `abnormal`, as WeChat Pay's ABNORMAL, with its callback. */
export const REFUND_ABNORMAL_MARKER = '[sandbox:abnormal]';

// pg returns BIGINT as a string; amounts here never exceed 10^12, well within a safe integer.
function withAmount<T extends { amount: number | string }>(row: T): T & { amount: number } {
  return { ...row, amount: Number(row.amount) };
}

function upperId(prefix: string): string {
  return `${prefix}${randomBase32(20).toUpperCase()}`;
}

/** A create request as the adapter sends it, plus the callback fault it asked for. */
export interface NewOrder extends WireCreateOrder {
  callback_mode: CallbackMode;
}

/** A refund as the adapter asks for it. */
export type NewRefund = WireCreateRefund;

export interface NewProfitShare {
  share_no: string;
  trade_no: string;
  receivers: { type: string; account: string; name?: string | null; amount: number }[];
}

/** Part of a share taken back, as the adapter asks for it. */
export type NewShareReturn = WireShareReturnRequest;

/** What a payment froze for sharing, released as the adapter asks for it. */
export type NewUnfreeze = WireUnfreezeRequest;

export interface NewFile {
  file_name: string;
  media_type: string;
  size: number;
  sha256: string;
}

export interface NewApplication {
  application_id: string;
  merchant: Record<string, unknown>;
  submit_data: Record<string, unknown>;
  outcome: AuditOutcome;
}

/**
 * Refuses an order that froze nothing for sharing (unknown, not paid, or created without
 * profit_sharing), as a share or an unfreeze of it is refused; `unshared` ends the last refusal.
 */
function frozenFor(order: OrderRow | null, tradeNo: string, unshared: string): asserts order is OrderRow {
  if (!order) throw new SandboxRefusal(404, 'order_not_found', `order ${tradeNo} does not exist`);
  if (order.status !== 'paid') {
    throw new SandboxRefusal(422, 'order_not_paid', `order ${order.trade_no} is ${order.status}, not paid`);
  }
  if (!order.profit_sharing) {
    throw new SandboxRefusal(
      422,
      'profit_sharing_not_enabled',
      `order ${order.trade_no} was not created with profit_sharing${unshared}`,
    );
  }
}

export class SandboxStore {
  constructor(private readonly db: Database) {}

  private async rows<T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction?: Transaction,
  ) {
    return this.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });
  }

  // ---- orders ----

  /** Creates the order once per trade_no; a repeat returns the stored one. */
  async createOrder(order: NewOrder): Promise<{ order: OrderRow; created: boolean }> {
    const inserted = await this.rows<OrderRow>(
      `INSERT INTO sandbox_orders (trade_no, channel_trade_no, amount, currency, pay_method, subject, expire_at,
                                   notify_url, extra, sub_merchant_no, profit_sharing, callback_mode, status,
                                   created_at, updated_at)
       VALUES (:trade_no, :channelTradeNo, :amount, :currency, :pay_method, :subject, :expire_at, :notify_url,
               CAST(:extra AS jsonb), :sub_merchant_no, :profit_sharing, :callback_mode, 'pending', now(), now())
       ON CONFLICT (trade_no) DO NOTHING
       RETURNING *`,
      { ...order, channelTradeNo: upperId('SBXT'), extra: JSON.stringify(order.extra) },
    );
    if (inserted[0]) return { order: withAmount(inserted[0]), created: true };
    await this.db.sequelize.query(
      'UPDATE sandbox_orders SET create_requests = create_requests + 1 WHERE trade_no = :tradeNo',
      { replacements: { tradeNo: order.trade_no } },
    );
    const existing = await this.findOrder(order.trade_no);
    if (!existing) throw new Error(`sandbox order ${order.trade_no} vanished during insert`);
    return { order: existing, created: false };
  }

  /** The order as of now: a pending order past its expiry is closed on the way. */
  async findOrder(tradeNo: string, transaction?: Transaction): Promise<OrderRow | null> {
    await this.db.sequelize.query(
      `UPDATE sandbox_orders SET status = 'closed', closed_at = expire_at, updated_at = now()
        WHERE trade_no = :tradeNo AND status = 'pending' AND expire_at <= now()`,
      { replacements: { tradeNo }, transaction },
    );
    const [row] = await this.rows<OrderRow>(
      `SELECT * FROM sandbox_orders WHERE trade_no = :tradeNo${transaction ? ' FOR UPDATE' : ''}`,
      { tradeNo },
      transaction,
    );
    return row ? withAmount(row) : null;
  }

  /** The buyer pays. `changed` is true only for the one request that moved pending → paid. */
  async payOrder(tradeNo: string): Promise<{ order: OrderRow; changed: boolean } | null> {
    const [paid] = await this.rows<OrderRow>(
      `UPDATE sandbox_orders SET status = 'paid', paid_at = now(), updated_at = now()
        WHERE trade_no = :tradeNo AND status = 'pending' AND expire_at > now()
        RETURNING *`,
      { tradeNo },
    );
    if (paid) return { order: withAmount(paid), changed: true };
    const order = await this.findOrder(tradeNo);
    return order ? { order, changed: false } : null;
  }

  /**
   * Takes a barcode payment once per trade_no (a repeat answers the stored one, the caller
   * compares its code): pending while its buyer confirms, or paid at once. Barcode orders are
   * decided within minutes; one left pending closes after ten, as the channels' do.
   */
  async createBarcodeOrder(order: NewBarcodeOrder): Promise<{ order: OrderRow; created: boolean }> {
    const inserted = await this.rows<OrderRow>(
      `INSERT INTO sandbox_orders (trade_no, channel_trade_no, amount, currency, pay_method, subject, expire_at,
                                   notify_url, extra, sub_merchant_no, profit_sharing, callback_mode, status,
                                   paid_at, auth_code_sha256, buyer, created_at, updated_at)
       VALUES (:trade_no, :channelTradeNo, :amount, :currency, 'barcode', :subject, now() + interval '10 minutes',
               :notify_url, CAST(:extra AS jsonb), :sub_merchant_no, :profit_sharing, 'normal',
               CASE WHEN :paid THEN 'paid' ELSE 'pending' END, CASE WHEN :paid THEN now() END,
               :auth_code_sha256, :buyer, now(), now())
       ON CONFLICT (trade_no) DO NOTHING
       RETURNING *`,
      {
        ...order,
        currency: order.currency ?? 'CNY',
        channelTradeNo: upperId('SBXB'),
        extra: JSON.stringify({
          ...(order.device_id ? { device_id: order.device_id } : {}),
          ...(order.store_id ? { store_id: order.store_id } : {}),
        }),
      },
    );
    if (inserted[0]) return { order: withAmount(inserted[0]), created: true };
    await this.db.sequelize.query(
      'UPDATE sandbox_orders SET create_requests = create_requests + 1 WHERE trade_no = :tradeNo',
      { replacements: { tradeNo: order.trade_no } },
    );
    const existing = await this.findOrder(order.trade_no);
    if (!existing) throw new Error(`sandbox order ${order.trade_no} vanished during insert`);
    return { order: existing, created: false };
  }

  /**
   * Reverses a barcode payment, once, under its row's lock: a pending one is closed, a paid one
   * closed with its money given back. `paysFirst`: the buyer's confirmation lands just before
   * the reverse does; `refusePaid`: the simulator will not reverse a payment it holds (the
   * payment stands). Asked again, a reversed payment answers as it was reversed. Null for an
   * unknown order.
   */
  async reverseOrder(
    tradeNo: string,
    opts: { paysFirst: boolean; refusePaid: boolean },
  ): Promise<ReverseOutcome | null> {
    return this.db.sequelize.transaction(async (transaction) => {
      await this.db.sequelize.query(
        'UPDATE sandbox_orders SET reverse_requests = reverse_requests + 1 WHERE trade_no = :tradeNo',
        { replacements: { tradeNo }, transaction },
      );
      let order = await this.findOrder(tradeNo, transaction);
      if (!order) return null;
      if (order.reversed_at) return { kind: 'reversed', order, refunded: order.reverse_refunded };
      if (opts.paysFirst && order.status === 'pending') {
        const [paid] = await this.rows<OrderRow>(
          `UPDATE sandbox_orders SET status = 'paid', paid_at = now(), updated_at = now()
            WHERE trade_no = :tradeNo RETURNING *`,
          { tradeNo },
          transaction,
        );
        order = withAmount(paid!);
      }
      if (opts.refusePaid && order.status === 'paid') return { kind: 'refused', order };
      const refunded = order.status === 'paid';
      const [reversed] = await this.rows<OrderRow>(
        `UPDATE sandbox_orders
            SET status = 'closed', closed_at = COALESCE(closed_at, now()), reversed_at = now(),
                reverse_refunded = :refunded, updated_at = now()
          WHERE trade_no = :tradeNo RETURNING *`,
        { tradeNo, refunded },
        transaction,
      );
      return { kind: 'reversed', order: withAmount(reversed!), refunded };
    });
  }

  /** Closes a pending order; a paid one stays paid (the caller reports that). */
  async closeOrder(tradeNo: string): Promise<OrderRow | null> {
    const [closed] = await this.rows<OrderRow>(
      `UPDATE sandbox_orders SET status = 'closed', closed_at = now(), updated_at = now()
        WHERE trade_no = :tradeNo AND status = 'pending'
        RETURNING *`,
      { tradeNo },
    );
    return closed ? withAmount(closed) : this.findOrder(tradeNo);
  }

  // ---- refunds ----

  private async findRefundRow(refundNo: string, transaction?: Transaction): Promise<RefundRow | null> {
    const [row] = await this.rows<RefundRow>(
      'SELECT * FROM sandbox_refunds WHERE refund_no = :refundNo',
      { refundNo },
      transaction,
    );
    return row ? withAmount(row) : null;
  }

  /**
   * Accepts a refund once per refund_no. The order row is locked while the remaining amount is
   * checked, so concurrent refunds of one order cannot together exceed it.
   */
  async createRefund(refund: NewRefund, delayMs: number): Promise<{ refund: RefundRow; created: boolean }> {
    const earlier = await this.findRefundRow(refund.refund_no);
    if (earlier) return { refund: await this.countRepeat(earlier), created: false };

    return this.db.sequelize.transaction(async (transaction) => {
      const order = await this.findOrder(refund.trade_no, transaction);
      if (!order) throw new SandboxRefusal(404, 'order_not_found', `order ${refund.trade_no} does not exist`);
      // Looked up again under the lock: a concurrent twin may have just been accepted.
      const twin = await this.findRefundRow(refund.refund_no, transaction);
      if (twin) return { refund: await this.countRepeat(twin, transaction), created: false };
      if (order.status !== 'paid') {
        throw new SandboxRefusal(
          422,
          'order_not_paid',
          `order ${order.trade_no} is ${order.status}, not paid`,
        );
      }
      if (refund.total_amount !== order.amount) {
        throw new SandboxRefusal(
          422,
          'total_amount_mismatch',
          `total_amount ${refund.total_amount} does not match the order amount ${order.amount}`,
        );
      }
      const [taken] = await this.rows<{ sum: string }>(
        `SELECT COALESCE(SUM(amount), 0) AS sum FROM sandbox_refunds
          WHERE trade_no = :tradeNo AND status IN ('processing', 'success', 'abnormal')`,
        { tradeNo: order.trade_no },
        transaction,
      );
      const remaining = order.amount - Number(taken?.sum ?? 0);
      if (refund.amount > remaining) {
        throw new SandboxRefusal(
          422,
          'refund_amount_exceed',
          `refund amount ${refund.amount} exceeds the ${remaining} left to refund`,
        );
      }
      const reason = refund.reason ?? '';
      const outcome = reason.includes(REFUND_ABNORMAL_MARKER)
        ? 'abnormal'
        : reason.includes(REFUND_FAIL_MARKER)
          ? 'failed'
          : 'success';
      const [row] = await this.rows<RefundRow>(
        `INSERT INTO sandbox_refunds (refund_no, channel_refund_no, trade_no, amount, reason, notify_url, status,
                                      outcome, settle_at, created_at, updated_at)
         VALUES (:refund_no, :channelRefundNo, :trade_no, :amount, :reason, :notify_url, 'processing',
                 :outcome, :settleAt, now(), now())
         RETURNING *`,
        {
          ...refund,
          channelRefundNo: upperId('SBXR'),
          outcome,
          settleAt: new Date(Date.now() + delayMs),
        },
        transaction,
      );
      if (!row) throw new Error(`sandbox refund ${refund.refund_no} was not stored`);
      return { refund: withAmount(row), created: true };
    });
  }

  /** A refund asked for again (answered with the first): counted, so tests see every request. */
  private async countRepeat(refund: RefundRow, transaction?: Transaction): Promise<RefundRow> {
    await this.db.sequelize.query(
      'UPDATE sandbox_refunds SET refund_requests = refund_requests + 1 WHERE refund_no = :refundNo',
      { replacements: { refundNo: refund.refund_no }, transaction },
    );
    return refund;
  }

  async findRefund(refundNo: string): Promise<RefundRow | null> {
    return this.findRefundRow(refundNo);
  }

  /**
   * Applies a refund's decided outcome once its time has come. Returns the row only to the one
   * caller that made the change (that caller posts the callback), whichever process it is in.
   */
  async settleRefund(refundNo: string): Promise<RefundRow | null> {
    const [row] = await this.rows<RefundRow>(
      `UPDATE sandbox_refunds
          SET status = outcome,
              refunded_at = CASE WHEN outcome = 'success' THEN now() ELSE NULL END,
              fail_reason = CASE WHEN outcome = 'failed' THEN :failReason
                                 WHEN outcome = 'abnormal' THEN :abnormalReason
                                 ELSE NULL END,
              updated_at = now()
        WHERE refund_no = :refundNo AND status = 'processing' AND settle_at <= :now
        RETURNING *`,
      {
        refundNo,
        now: new Date(),
        failReason: `refund steered to fail by ${REFUND_FAIL_MARKER}`,
        abnormalReason: `the buyer's account could not take the refund (${REFUND_ABNORMAL_MARKER}): apply to pay it to a bank card`,
      },
    );
    return row ? withAmount(row) : null;
  }

  /**
   * An abnormal refund paid another way: processing again, to succeed after `delayMs`. Asking
   * again the same way answers the refund as it stands; the `changed` row goes only to the one
   * caller that moved it. A refund that is not abnormal, or was applied for another way, is refused.
   */
  async applyAbnormal(
    refundNo: string,
    method: string,
    delayMs: number,
  ): Promise<{ refund: RefundRow; changed: boolean }> {
    const [applied] = await this.rows<RefundRow>(
      `UPDATE sandbox_refunds
          SET status = 'processing', outcome = 'success', fail_reason = NULL, settle_at = :settleAt,
              abnormal_method = :method, abnormal_applied_at = now(), updated_at = now()
        WHERE refund_no = :refundNo AND status = 'abnormal'
        RETURNING *`,
      { refundNo, method, settleAt: new Date(Date.now() + delayMs) },
    );
    if (applied) return { refund: withAmount(applied), changed: true };
    const refund = await this.findRefundRow(refundNo);
    if (!refund) throw new SandboxRefusal(404, 'refund_not_found', `refund ${refundNo} does not exist`);
    if (refund.abnormal_method === null) {
      throw new SandboxRefusal(
        422,
        'refund_not_abnormal',
        `refund ${refundNo} is ${refund.status}, not abnormal`,
      );
    }
    if (refund.abnormal_method !== method) {
      throw new SandboxRefusal(
        422,
        'abnormal_already_applied',
        `refund ${refundNo} was already applied for by ${refund.abnormal_method}`,
      );
    }
    return { refund, changed: false };
  }

  /**
   * What a day's statement lists, oldest first: orders paid and refunds accepted in [from, to),
   * of one sub-merchant (of every order, without one). Each refund carries its order's subject.
   */
  async statementEntries(
    subMerchantNo: string | null,
    from: Date,
    to: Date,
  ): Promise<{ orders: OrderRow[]; refunds: (RefundRow & { created_at: Date; order: OrderRow })[] }> {
    const scope = subMerchantNo === null ? '' : 'AND o.sub_merchant_no = :subMerchantNo';
    const orders = await this.rows<OrderRow>(
      `SELECT o.* FROM sandbox_orders o
        WHERE o.paid_at >= :from AND o.paid_at < :to ${scope}
        ORDER BY o.paid_at, o.trade_no`,
      { subMerchantNo, from, to },
    );
    const refunds = await this.rows<RefundRow & { created_at: Date; order: OrderRow }>(
      `SELECT r.*, to_jsonb(o) AS order FROM sandbox_refunds r JOIN sandbox_orders o ON o.trade_no = r.trade_no
        WHERE r.created_at >= :from AND r.created_at < :to ${scope}
        ORDER BY r.created_at, r.refund_no`,
      { subMerchantNo, from, to },
    );
    return {
      orders: orders.map(withAmount),
      refunds: refunds.map((r) => ({
        ...withAmount(r),
        order: { ...withAmount(r.order), paid_at: r.order.paid_at && new Date(r.order.paid_at) },
      })),
    };
  }

  /** Refunds whose time has passed without being settled (e.g. the process restarted). */
  async dueRefunds(): Promise<string[]> {
    const rows = await this.rows<{ refund_no: string }>(
      `SELECT refund_no FROM sandbox_refunds WHERE status = 'processing' AND settle_at <= :now LIMIT 1000`,
      { now: new Date() },
    );
    return rows.map((r) => r.refund_no);
  }

  // ---- profit sharing ----

  async createProfitShare(share: NewProfitShare): Promise<ProfitShareRow> {
    const total = share.receivers.reduce((sum, r) => sum + r.amount, 0);
    return this.db.sequelize.transaction(async (transaction) => {
      const order = await this.findOrder(share.trade_no, transaction);
      const [earlier] = await this.rows<ProfitShareRow>(
        'SELECT share_no, trade_no, amount, status FROM sandbox_profit_shares WHERE share_no = :shareNo',
        { shareNo: share.share_no },
        transaction,
      );
      if (earlier) return withAmount(earlier);
      frozenFor(order, share.trade_no, '');
      const [unfrozen] = await this.rows<UnfreezeRow>(
        'SELECT * FROM sandbox_unfreezes WHERE trade_no = :tradeNo',
        { tradeNo: order.trade_no },
        transaction,
      );
      if (unfrozen) {
        throw new SandboxRefusal(
          422,
          'order_unfrozen',
          `order ${order.trade_no} was unfrozen by ${unfrozen.unfreeze_no}: nothing is left to share`,
        );
      }
      const [shared] = await this.rows<{ sum: string }>(
        'SELECT COALESCE(SUM(amount), 0) AS sum FROM sandbox_profit_shares WHERE trade_no = :tradeNo',
        { tradeNo: order.trade_no },
        transaction,
      );
      const remaining = order.amount - Number(shared?.sum ?? 0);
      if (total > remaining) {
        throw new SandboxRefusal(
          422,
          'sharing_amount_exceed',
          `profit share of ${total} exceeds the ${remaining} left on the order`,
        );
      }
      const [row] = await this.rows<ProfitShareRow>(
        `INSERT INTO sandbox_profit_shares (share_no, trade_no, receivers, amount, status, created_at)
         VALUES (:shareNo, :tradeNo, CAST(:receivers AS jsonb), :amount, 'finished', now())
         RETURNING share_no, trade_no, amount, status`,
        {
          shareNo: share.share_no,
          tradeNo: order.trade_no,
          receivers: JSON.stringify(share.receivers),
          amount: total,
        },
        transaction,
      );
      if (!row) throw new Error(`sandbox profit share ${share.share_no} was not stored`);
      return withAmount(row);
    });
  }

  /**
   * Takes part of a share back from one of its receivers, once per return_no. The share row is
   * locked while what the receiver has left is summed, so concurrent returns cannot together take
   * back more than it was given.
   */
  async createShareReturn(ret: NewShareReturn): Promise<{ ret: ShareReturnRow; created: boolean }> {
    return this.db.sequelize.transaction(async (transaction) => {
      const [share] = await this.rows<ProfitShareRow & { receivers: NewProfitShare['receivers'] }>(
        'SELECT * FROM sandbox_profit_shares WHERE share_no = :shareNo FOR UPDATE',
        { shareNo: ret.share_no },
        transaction,
      );
      const [earlier] = await this.rows<ShareReturnRow>(
        'SELECT * FROM sandbox_share_returns WHERE return_no = :returnNo',
        { returnNo: ret.return_no },
        transaction,
      );
      if (earlier) {
        const same =
          earlier.share_no === ret.share_no &&
          earlier.receiver_type === ret.receiver.type &&
          earlier.receiver_account === ret.receiver.account &&
          Number(earlier.amount) === ret.amount;
        if (!same) {
          throw new SandboxRefusal(
            422,
            'return_no_conflict',
            `return_no ${ret.return_no} already used with different parameters`,
          );
        }
        return { ret: withAmount(earlier), created: false };
      }
      if (!share || share.trade_no !== ret.trade_no) {
        throw new SandboxRefusal(
          404,
          'share_not_found',
          `no profit share ${ret.share_no} of order ${ret.trade_no}`,
        );
      }
      const received = share.receivers
        .filter((r) => r.type === ret.receiver.type && r.account === ret.receiver.account)
        .reduce((sum, r) => sum + Number(r.amount), 0);
      if (received === 0) {
        throw new SandboxRefusal(
          422,
          'receiver_not_in_share',
          `${ret.receiver.type} ${ret.receiver.account} received nothing from share ${ret.share_no}`,
        );
      }
      const [returned] = await this.rows<{ sum: string }>(
        `SELECT COALESCE(SUM(amount), 0) AS sum FROM sandbox_share_returns
          WHERE share_no = :shareNo AND receiver_type = :type AND receiver_account = :account`,
        { shareNo: ret.share_no, type: ret.receiver.type, account: ret.receiver.account },
        transaction,
      );
      const left = received - Number(returned?.sum ?? 0);
      if (ret.amount > left) {
        throw new SandboxRefusal(
          422,
          'return_amount_exceed',
          `return of ${ret.amount} exceeds the ${left} of ${received} ${ret.receiver.account} has left to return`,
        );
      }
      const [row] = await this.rows<ShareReturnRow>(
        `INSERT INTO sandbox_share_returns (return_no, channel_return_no, share_no, trade_no, receiver_type,
                                            receiver_account, amount, description, status, created_at)
         VALUES (:return_no, :channelReturnNo, :share_no, :trade_no, :type, :account, :amount, :description,
                 'success', now())
         RETURNING *`,
        {
          ...ret,
          channelReturnNo: upperId('SBXB'),
          type: ret.receiver.type,
          account: ret.receiver.account,
        },
        transaction,
      );
      if (!row) throw new Error(`sandbox share return ${ret.return_no} was not stored`);
      return { ret: withAmount(row), created: true };
    });
  }

  async findShareReturn(returnNo: string): Promise<ShareReturnRow | null> {
    const [row] = await this.rows<ShareReturnRow>(
      'SELECT * FROM sandbox_share_returns WHERE return_no = :returnNo',
      { returnNo },
    );
    return row ? withAmount(row) : null;
  }

  /**
   * Releases what a paid order froze for sharing, once per order: the same unfreeze_no answers the
   * same unfreeze; another one for an order already unfrozen is refused, as is an order that froze
   * nothing (not paid, or not created for profit sharing).
   */
  async createUnfreeze(unfreeze: NewUnfreeze): Promise<{ unfreeze: UnfreezeRow; created: boolean }> {
    return this.db.sequelize.transaction(async (transaction) => {
      const order = await this.findOrder(unfreeze.trade_no, transaction);
      const [earlier] = await this.rows<UnfreezeRow>(
        'SELECT * FROM sandbox_unfreezes WHERE unfreeze_no = :unfreezeNo OR trade_no = :tradeNo',
        { unfreezeNo: unfreeze.unfreeze_no, tradeNo: unfreeze.trade_no },
        transaction,
      );
      if (earlier) {
        if (earlier.unfreeze_no === unfreeze.unfreeze_no && earlier.trade_no === unfreeze.trade_no) {
          return { unfreeze: earlier, created: false };
        }
        throw new SandboxRefusal(
          422,
          earlier.unfreeze_no === unfreeze.unfreeze_no ? 'unfreeze_no_conflict' : 'order_unfrozen',
          earlier.unfreeze_no === unfreeze.unfreeze_no
            ? `unfreeze_no ${unfreeze.unfreeze_no} was used for order ${earlier.trade_no}`
            : `order ${unfreeze.trade_no} was unfrozen already by ${earlier.unfreeze_no}`,
        );
      }
      frozenFor(order, unfreeze.trade_no, ': nothing is frozen');
      const [row] = await this.rows<UnfreezeRow>(
        `INSERT INTO sandbox_unfreezes (unfreeze_no, channel_unfreeze_no, trade_no, description, created_at)
         VALUES (:unfreeze_no, :channelUnfreezeNo, :trade_no, :description, now())
         RETURNING *`,
        { ...unfreeze, channelUnfreezeNo: upperId('SBXU') },
        transaction,
      );
      if (!row) throw new Error(`sandbox unfreeze ${unfreeze.unfreeze_no} was not stored`);
      return { unfreeze: row, created: true };
    });
  }

  // ---- onboarding ----

  async createFile(file: NewFile): Promise<string> {
    const fileId = `sbx_file_${randomBase32(24)}`;
    await this.db.sequelize.query(
      `INSERT INTO sandbox_files (file_id, file_name, media_type, size, sha256, created_at)
       VALUES (:fileId, :file_name, :media_type, :size, :sha256, now())`,
      { replacements: { fileId, ...file } },
    );
    return fileId;
  }

  async createApplication(app: NewApplication): Promise<ApplicationRow> {
    const [inserted] = await this.rows<ApplicationRow>(
      `INSERT INTO sandbox_applications (application_id, application_no, merchant, submit_data, outcome, step,
                                         status, sub_merchant_no, created_at, updated_at)
       VALUES (:application_id, :applicationNo, CAST(:merchant AS jsonb), CAST(:submitData AS jsonb), :outcome, 0,
               'submitted', :subMerchantNo, now(), now())
       ON CONFLICT (application_id) DO NOTHING
       RETURNING *`,
      {
        application_id: app.application_id,
        applicationNo: upperId('SBXA'),
        merchant: JSON.stringify(app.merchant),
        submitData: JSON.stringify(app.submit_data),
        outcome: app.outcome,
        subMerchantNo: upperId('SBXM'),
      },
    );
    if (inserted) return inserted;
    const [existing] = await this.rows<ApplicationRow>(
      'SELECT * FROM sandbox_applications WHERE application_id = :id',
      { id: app.application_id },
    );
    if (!existing) throw new Error(`sandbox application ${app.application_id} vanished during insert`);
    return existing;
  }

  async findApplicationByNo(applicationNo: string): Promise<ApplicationRow | null> {
    const [row] = await this.rows<ApplicationRow>(
      'SELECT * FROM sandbox_applications WHERE application_no = :applicationNo',
      { applicationNo },
    );
    return row ?? null;
  }

  /** One poll: moves the audit one step along its path (a final status stays put). */
  async advanceApplication(applicationId: string): Promise<ApplicationRow | null> {
    return this.db.sequelize.transaction(async (transaction) => {
      const [row] = await this.rows<ApplicationRow>(
        'SELECT * FROM sandbox_applications WHERE application_id = :id FOR UPDATE',
        { id: applicationId },
        transaction,
      );
      if (!row) return null;
      const path = AUDIT_PATHS[row.outcome];
      const next = Math.min(row.step + 1, path.length - 1);
      const status = path[next];
      if (next === row.step || status === undefined) return row;
      const [updated] = await this.rows<ApplicationRow>(
        `UPDATE sandbox_applications SET step = :step, status = :status, updated_at = now()
          WHERE application_id = :id RETURNING *`,
        { id: applicationId, step: next, status },
        transaction,
      );
      return updated ?? row;
    });
  }

  // ---- transfers ----

  /**
   * Takes a transfer once per transfer_no. A repeat answers the stored one (whatever it asked
   * for: the caller compares) and is counted, so that tests see every create request.
   */
  async createTransfer(transfer: NewTransfer): Promise<{ transfer: TransferRow; created: boolean }> {
    const [inserted] = await this.rows<TransferRow>(
      `INSERT INTO sandbox_transfers (transfer_no, channel_transfer_no, sub_merchant_no, amount, payee_type,
                                      payee_account, payee_name, remark, callback_url, status, outcome, settle_at,
                                      confirm_deadline, created_at, updated_at)
       VALUES (:transfer_no, :channelTransferNo, :sub_merchant_no, :amount, :payee_type, :payee_account,
               :payee_name, :remark, :callback_url, :status, :outcome, :settleAt, :confirmDeadline, now(), now())
       ON CONFLICT (transfer_no) DO NOTHING
       RETURNING *`,
      {
        ...transfer,
        channelTransferNo: upperId('SBXF'),
        status: transfer.confirmDeadline === null ? 'processing' : 'wait_user_confirm',
      },
    );
    if (inserted) return { transfer: withAmount(inserted), created: true };
    const [existing] = await this.rows<TransferRow>(
      `UPDATE sandbox_transfers SET create_requests = create_requests + 1
        WHERE transfer_no = :transferNo RETURNING *`,
      { transferNo: transfer.transfer_no },
    );
    if (!existing) throw new Error(`sandbox transfer ${transfer.transfer_no} vanished during insert`);
    return { transfer: withAmount(existing), created: false };
  }

  async findTransfer(transferNo: string): Promise<TransferRow | null> {
    const [row] = await this.rows<TransferRow>(
      'SELECT * FROM sandbox_transfers WHERE transfer_no = :transferNo',
      {
        transferNo,
      },
    );
    return row ? withAmount(row) : null;
  }

  /**
   * Applies what fell due: a processing transfer whose money left settles as decided; one whose
   * payee did not confirm in time fails, as WeChat Pay closes it (`FAIL`, `OVERDUE_CLOSE`). The row goes only to the one caller that changed
   * it (which posts the callback), whichever process it is in.
   */
  async advanceTransfer(transferNo: string): Promise<TransferRow | null> {
    const [row] = await this.rows<TransferRow>(
      `UPDATE sandbox_transfers
          SET status = CASE WHEN status = 'processing' THEN outcome ELSE 'failed' END,
              fail_reason = CASE WHEN status = 'wait_user_confirm' THEN :expired
                                 WHEN outcome = 'failed' THEN :failed
                                 ELSE NULL END,
              finished_at = now(), updated_at = now()
        WHERE transfer_no = :transferNo
          AND ((status = 'processing' AND settle_at <= :now)
               OR (status = 'wait_user_confirm' AND confirm_deadline <= :now))
        RETURNING *`,
      { transferNo, now: new Date(), expired: TRANSFER_REASONS.expired, failed: TRANSFER_REASONS.failed },
    );
    return row ? withAmount(row) : null;
  }

  /**
   * The payee confirms (`settleAt`: when the money then leaves) or lets the transfer expire now
   * (`settleAt` null). `changed` is true only for the one request that moved it; a transfer not
   * waiting any more comes back as it is, for the caller to judge.
   */
  async answerTransfer(
    transferNo: string,
    settleAt: Date | null,
  ): Promise<{ transfer: TransferRow; changed: boolean } | null> {
    const [row] = await this.rows<TransferRow>(
      settleAt === null
        ? `UPDATE sandbox_transfers
              SET status = 'failed', fail_reason = :expired, finished_at = now(), updated_at = now()
            WHERE transfer_no = :transferNo AND status = 'wait_user_confirm'
            RETURNING *`
        : `UPDATE sandbox_transfers
              SET status = 'processing', confirmed_at = now(), settle_at = :settleAt, updated_at = now()
            WHERE transfer_no = :transferNo AND status = 'wait_user_confirm' AND confirm_deadline > now()
            RETURNING *`,
      { transferNo, settleAt, expired: TRANSFER_REASONS.expired },
    );
    if (row) return { transfer: withAmount(row), changed: true };
    const transfer = await this.findTransfer(transferNo);
    return transfer ? { transfer, changed: false } : null;
  }

  /**
   * Cancels a transfer whose money has not left: one waiting for its payee (within the time to
   * confirm), or processing before it settles and without a payee's confirmation (a confirmed
   * transfer is on its way to the payee). `changed` as for answerTransfer.
   */
  async cancelTransfer(transferNo: string): Promise<{ transfer: TransferRow; changed: boolean } | null> {
    const [row] = await this.rows<TransferRow>(
      `UPDATE sandbox_transfers
          SET status = 'cancelled', fail_reason = :reason, finished_at = now(), updated_at = now()
        WHERE transfer_no = :transferNo
          AND ((status = 'wait_user_confirm' AND confirm_deadline > :now)
               OR (status = 'processing' AND confirmed_at IS NULL AND settle_at > :now))
        RETURNING *`,
      { transferNo, now: new Date(), reason: TRANSFER_REASONS.cancelled },
    );
    if (row) return { transfer: withAmount(row), changed: true };
    const transfer = await this.findTransfer(transferNo);
    return transfer ? { transfer, changed: false } : null;
  }

  /** Transfers still to settle or to expire: the process that starts takes over their timers. */
  /** The open transfers an earlier process made (created before `before`): this one watches its own. */
  async openTransfers(before: Date): Promise<TransferRow[]> {
    const rows = await this.rows<TransferRow>(
      `SELECT * FROM sandbox_transfers
        WHERE status IN ('wait_user_confirm', 'processing') AND created_at < :before LIMIT 1000`,
      { before },
    );
    return rows.map(withAmount);
  }
}
