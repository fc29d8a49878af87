// Longer than 400 lines: the orders module's one data-access place (STYLE: a module's repository is
// the only code on its tables): orders, their polls, saved states and share steps, and the
// console's cross-app search and counts over them.
import { QueryTypes } from 'sequelize';
import type { CloseReason, OrderStatus, ProfitSharingStatus } from './rules';
import type { Database } from '../../platform/db';
import { DAYS_IN_ZONE } from '../../platform/dates';
import {
  keysetAt,
  keysetPageOf,
  SearchConditions,
  type KeysetPage,
  type KeysetResult,
} from '../../platform/pagination';
import { orderModels, type Order } from './model';

export interface NewOrder {
  tradeNo: string;
  appId: string;
  merchantOrderNo: string;
  merchantId: string | null;
  /** The merchant's sub_merchant_no when the order was created (absent in older histories). */
  subMerchantNo?: string | null;
  /** The merchant's channel account it was created with (absent in older histories). */
  channelAccountId?: number | null;
  /** Null for a `checkout` order until its buyer picks a channel (bindChannel). */
  channelCode: string | null;
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
  /** A barcode order's (SPEC §14): its buyer code's hash, its till and shop. */
  barcode?: { authCodeSha256: string; deviceId: string | null; storeId: string | null };
  /** The payment link a buyer made the order through (SPEC §15). */
  paymentLinkId?: string;
  /** The standing code a buyer paid at, and the note the buyer left (SPEC §15). */
  standingCodeId?: string;
  buyerNote?: string;
  /**
   * The polls the payment sweeper makes while the order is pending: the gaps between them and
   * when they stop (the order's expiry, whose final check is its workflow's close). Absent for
   * orders whose workflow polls the channel itself.
   */
  poll?: { gapsMs: number[]; until: string };
}

/** The steps of a profit share at the channel: the share, the unfreeze of the rest, a return. */
export const SHARE_STEP_KINDS = ['share', 'unfreeze', 'return'] as const;

/** A share, unfreeze or return an order asked of its channel (SPEC §3.7), keyed by durapay's number. */
export interface ShareStep {
  stepNo: string;
  kind: (typeof SHARE_STEP_KINDS)[number];
  refundNo?: string | null;
  receivers: { type: string; account: string; amount: number }[];
  amount: number;
  status: 'processing' | 'success' | 'failed';
  channelNo?: string | null;
  failReason?: string | null;
}

/** A poll the sweeper claimed: the order it asks about and where its answer goes. */
export interface DuePoll {
  tradeNo: string;
  channelCode: string;
  appId: string;
  merchantOrderNo: string;
}

/** What an operator looks orders up by, across apps (the console); every field narrows. */
export interface OrderSearch {
  tradeNo?: string;
  merchantOrderNo?: string;
  merchantId?: string;
  appId?: string;
  status?: OrderStatus;
  channelCode?: string;
  /** Created at or after. */
  from?: string;
  /** Created before. */
  to?: string;
  minAmount?: number;
  maxAmount?: number;
  /** Only orders flagged for a refund review (paid after they closed) with something left to refund. */
  needsRefundReview?: boolean;
}

/** One day's (or one channel's) orders as the console's overview counts them. */
export interface OrderTally {
  /** The day in the time zone asked for, YYYY-MM-DD. */
  day: string;
  channelCode: string;
  payMethod: string;
  orders: number;
  paidOrders: number;
  paidAmount: number;
}

/** The statuses of an order that was paid. */
const PAID_STATUSES = `('paid', 'partially_refunded', 'refunded')`;
/** A flagged order an operator still has to refund (partial index orders_refund_review). */
const NEEDS_REFUND_REVIEW = `o.needs_refund_review AND o.status IN ('paid', 'partially_refunded')
  AND o.refunded_amount < o.amount`;

/** Which decision a saved state is (saveState). */
export interface SaveVersion {
  runId: string;
  runStartedAt: Date;
  historyLength: number;
  saveSeq: number;
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

  /**
   * The order a channel knows by its own trade number (a callback that names only the
   * channel's ids). Unindexed: a channel that identifies its callbacks so at volume wants an
   * index on (channel_code, channel_trade_no).
   */
  async findOrderByChannelTradeNo(channelCode: string, channelTradeNo: string): Promise<Order | null> {
    return this.models.Order.findOne({ where: { channelCode, channelTradeNo } });
  }

  async findOrderByMerchantOrderNo(appId: string, merchantOrderNo: string): Promise<Order | null> {
    return this.models.Order.findOne({ where: { appId, merchantOrderNo } });
  }

  /** Records a created order; whether this call inserted it (a retried one finds it there). */
  async insertOrder(o: NewOrder): Promise<boolean> {
    const inserted = await this.db.sequelize.query(
      `INSERT INTO orders (trade_no, app_id, merchant_order_no, merchant_id, sub_merchant_no, channel_account_id, channel_code, pay_method,
                           amount, currency,
                           subject, notify_url, status, channel_trade_no, pay_credential, expire_time,
                           profit_sharing_amount, profit_sharing_status, extra, auth_code_sha256, device_id,
                           store_id, payment_link_id, standing_code_id, buyer_note, created_at, updated_at)
       VALUES (:tradeNo, :appId, :merchantOrderNo, :merchantId, :subMerchantNo, :channelAccountId, :channelCode, :payMethod, :amount, :currency,
               :subject, :notifyUrl, 'pending', :channelTradeNo, CAST(:payCredential AS jsonb), :expireTime,
               :profitSharingAmount, CASE WHEN :profitSharingAmount > 0 THEN 'pending' ELSE 'none' END,
               CAST(:extra AS jsonb), :authCodeSha256, :deviceId, :storeId, :paymentLinkId, :standingCodeId, :buyerNote, :createdAt, now())
       ON CONFLICT (trade_no) DO NOTHING
       RETURNING trade_no`,
      {
        type: QueryTypes.SELECT,
        replacements: {
          ...o,
          subMerchantNo: o.subMerchantNo ?? null,
          channelAccountId: o.channelAccountId ?? null,
          payCredential: JSON.stringify(o.payCredential),
          extra: o.extra === null ? null : JSON.stringify(o.extra),
          authCodeSha256: o.barcode?.authCodeSha256 ?? null,
          deviceId: o.barcode?.deviceId ?? null,
          storeId: o.barcode?.storeId ?? null,
          paymentLinkId: o.paymentLinkId ?? null,
          standingCodeId: o.standingCodeId ?? null,
          buyerNote: o.buyerNote ?? null,
        },
      },
    );
    if (o.poll) await this.addPoll(o.tradeNo, o.poll);
    return inserted.length > 0;
  }

  /**
   * The payment sweeper's polls of an order, while it is pending at a channel: a create recorded
   * again after a callback paid it adds none, nor does an order with no channel yet.
   */
  private async addPoll(tradeNo: string, poll: { gapsMs: number[]; until: string }): Promise<void> {
    if (poll.gapsMs.length === 0) return;
    await this.db.sequelize.query(
      `INSERT INTO payment_polls (trade_no, channel_code, gaps_ms, gap_index, next_poll_at, poll_until)
       SELECT trade_no, channel_code, CAST(:gaps AS integer[]), 0,
              now() + make_interval(secs => :firstGapMs / 1000.0), :until
         FROM orders WHERE trade_no = :tradeNo AND status = 'pending' AND channel_code IS NOT NULL
       ON CONFLICT (trade_no) DO NOTHING`,
      {
        replacements: {
          tradeNo,
          gaps: `{${poll.gapsMs.map((g) => Math.max(1, Math.round(g))).join(',')}}`,
          firstGapMs: poll.gapsMs[0]!,
          until: poll.until,
        },
      },
    );
  }

  /**
   * A `checkout` order made at the channel its buyer picked (SPEC §15): its channel, how it is
   * paid there and the channel's answer, written once (a repeat finds them written), and from
   * then on polled like any other order.
   */
  async bindChannel(b: {
    tradeNo: string;
    channelCode: string;
    channelPayMethod: string;
    channelTradeNo: string | null;
    payCredential: Record<string, unknown>;
    subMerchantNo: string | null;
    channelAccountId: number | null;
    extra: Record<string, unknown>;
    poll: { gapsMs: number[]; until: string };
  }): Promise<boolean> {
    const bound = await this.db.sequelize.query(
      `UPDATE orders SET channel_code = :channelCode, channel_pay_method = :channelPayMethod,
              channel_trade_no = :channelTradeNo, pay_credential = CAST(:payCredential AS jsonb),
              sub_merchant_no = :subMerchantNo, channel_account_id = :channelAccountId,
              extra = COALESCE(extra, '{}'::jsonb) || CAST(:extra AS jsonb), updated_at = now()
        WHERE trade_no = :tradeNo AND channel_code IS NULL AND status = 'pending'
       RETURNING trade_no`,
      {
        type: QueryTypes.SELECT,
        replacements: {
          ...b,
          payCredential: JSON.stringify(b.payCredential),
          extra: JSON.stringify(b.extra),
        },
      },
    );
    await this.addPoll(b.tradeNo, b.poll);
    return bound.length > 0;
  }

  /**
   * Claims up to `limit` polls that are due, and moves each to its next gap in the same
   * statement: concurrent sweepers (one per worker) skip each other's rows. A poll whose next gap
   * reaches past its end is not claimed again; the order's close at expiry is its last check.
   */
  async claimDuePolls(limit: number): Promise<DuePoll[]> {
    const rows = await this.db.sequelize.query<{
      trade_no: string;
      channel_code: string;
      app_id: string;
      merchant_order_no: string;
    }>(
      `WITH due AS (
         SELECT trade_no FROM payment_polls
          WHERE next_poll_at <= now() AND next_poll_at < poll_until
          ORDER BY next_poll_at
          LIMIT :limit
          FOR UPDATE SKIP LOCKED
       ), moved AS (
         UPDATE payment_polls p
            SET gap_index = p.gap_index + 1,
                next_poll_at = now() + make_interval(
                  secs => p.gaps_ms[LEAST(p.gap_index + 2, cardinality(p.gaps_ms))] / 1000.0)
           FROM due WHERE p.trade_no = due.trade_no
         RETURNING p.trade_no, p.channel_code
       )
       SELECT m.trade_no, m.channel_code, o.app_id, o.merchant_order_no
         FROM moved m JOIN orders o ON o.trade_no = m.trade_no`,
      { replacements: { limit }, type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({
      tradeNo: r.trade_no,
      channelCode: r.channel_code,
      appId: r.app_id,
      merchantOrderNo: r.merchant_order_no,
    }));
  }

  /** Stops polling an order (its workflow has ended). */
  async dropPoll(tradeNo: string): Promise<void> {
    await this.db.sequelize.query('DELETE FROM payment_polls WHERE trade_no = :tradeNo', {
      replacements: { tradeNo },
    });
  }

  /**
   * pending (or closed: a late payment) → paid; its polls end. Returns the status it was paid
   * from, or null when this call changed nothing (already paid, or refunded since).
   */
  async markPaid(
    tradeNo: string,
    channelTradeNo: string | null,
    payTime: string,
  ): Promise<OrderStatus | null> {
    const [row] = await this.db.sequelize.query<{ previous: OrderStatus }>(
      `WITH stopped AS (DELETE FROM payment_polls WHERE trade_no = :tradeNo),
            prev AS (SELECT trade_no, status FROM orders
                      WHERE trade_no = :tradeNo AND status IN ('pending', 'closed') FOR UPDATE)
       UPDATE orders o
          SET needs_refund_review = (prev.status = 'closed'),
              status = 'paid', channel_trade_no = COALESCE(:channelTradeNo, o.channel_trade_no),
              pay_time = :payTime, updated_at = now()
         FROM prev
        WHERE o.trade_no = prev.trade_no
       RETURNING prev.status AS previous`,
      { replacements: { tradeNo, channelTradeNo, payTime }, type: QueryTypes.SELECT },
    );
    return row?.previous ?? null;
  }

  /** pending → closed (a barcode order saying why); its polls end. Whether this call closed it. */
  async markClosed(
    tradeNo: string,
    closedAt: string,
    closeReason: CloseReason | null = null,
  ): Promise<boolean> {
    const rows = await this.db.sequelize.query(
      `WITH stopped AS (DELETE FROM payment_polls WHERE trade_no = :tradeNo)
       UPDATE orders SET status = 'closed', closed_at = :closedAt, close_reason = :closeReason, updated_at = now()
        WHERE trade_no = :tradeNo AND status = 'pending'
       RETURNING trade_no`,
      { replacements: { tradeNo, closedAt, closeReason }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /**
   * Keeps the state an order's run decided with, sealed, for its next run (SPEC §7), unless a
   * later decision is saved already; false when this one was older and is dropped. Within a run,
   * saves are ordered by its history's length, then by how many it made before; a run's saves
   * replace another run's when it started no earlier (a later run, or a run reset from it, which
   * keeps its start). The same decision saved again (a workflow task run twice) replaces itself.
   */
  async saveState(tradeNo: string, sealed: string, version: SaveVersion): Promise<boolean> {
    const rows = await this.db.sequelize.query(
      `INSERT INTO order_saved_states AS s
              (trade_no, state, saved_at, run_id, run_started_at, history_length, save_seq)
       VALUES (:tradeNo, :sealed, now(), :runId, :runStartedAt, :historyLength, :saveSeq)
       ON CONFLICT (trade_no) DO UPDATE
          SET state = EXCLUDED.state, saved_at = EXCLUDED.saved_at, run_id = EXCLUDED.run_id,
              run_started_at = EXCLUDED.run_started_at, history_length = EXCLUDED.history_length,
              save_seq = EXCLUDED.save_seq
        WHERE s.run_id IS NULL
           OR (s.run_id <> EXCLUDED.run_id AND s.run_started_at <= EXCLUDED.run_started_at)
           OR (s.run_id = EXCLUDED.run_id
               AND (s.history_length, s.save_seq) <= (EXCLUDED.history_length, EXCLUDED.save_seq))
       RETURNING s.trade_no`,
      { replacements: { tradeNo, sealed, ...version }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** The state the order's last run saved, sealed, with the read model's figures to check it by. */
  async savedState(
    tradeNo: string,
  ): Promise<{ sealed: string; status: OrderStatus; refundedAmount: number } | null> {
    const [row] = await this.db.sequelize.query<{
      state: string;
      status: OrderStatus;
      refunded_amount: string;
    }>(
      `SELECT s.state, o.status, o.refunded_amount
         FROM order_saved_states s JOIN orders o ON o.trade_no = s.trade_no
        WHERE s.trade_no = :tradeNo`,
      { replacements: { tradeNo }, type: QueryTypes.SELECT },
    );
    return row
      ? { sealed: row.state, status: row.status, refundedAmount: Number(row.refunded_amount) }
      : null;
  }

  /** Returns the status the order had before, or null when it is not in a refundable status. */
  async setRefundTotals(
    tradeNo: string,
    refundedAmount: number,
    status: OrderStatus,
    sharing?: { status: ProfitSharingStatus; returnedAmount: number },
  ): Promise<OrderStatus | null> {
    const [row] = await this.db.sequelize.query<{ previous: OrderStatus }>(
      `WITH prev AS (SELECT trade_no, status FROM orders
                      WHERE trade_no = :tradeNo AND status IN ('paid', 'partially_refunded', 'refunded') FOR UPDATE)
       UPDATE orders o SET refunded_amount = :refundedAmount, status = :status,
              profit_sharing_status = COALESCE(:sharingStatus, o.profit_sharing_status),
              profit_returned_amount = COALESCE(:returnedAmount, o.profit_returned_amount),
              updated_at = now()
         FROM prev
        WHERE o.trade_no = prev.trade_no
       RETURNING prev.status AS previous`,
      {
        replacements: {
          tradeNo,
          refundedAmount,
          status,
          sharingStatus: sharing?.status ?? null,
          returnedAmount: sharing?.returnedAmount ?? null,
        },
        type: QueryTypes.SELECT,
      },
    );
    return row?.previous ?? null;
  }

  async setProfitSharingStatus(
    tradeNo: string,
    status: ProfitSharingStatus,
    sharedAmount?: number,
  ): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE orders SET profit_sharing_status = :status,
              profit_shared_amount = COALESCE(:sharedAmount, profit_shared_amount), updated_at = now()
        WHERE trade_no = :tradeNo`,
      { replacements: { tradeNo, status, sharedAmount: sharedAmount ?? null } },
    );
  }

  /**
   * Records a share step and the order's sharing totals together. A step recorded again (a
   * retried activity) takes its latest state; a final state is never changed back.
   */
  async recordShareStep(
    tradeNo: string,
    step: ShareStep,
    order: { status: ProfitSharingStatus; sharedAmount: number; returnedAmount: number },
  ): Promise<void> {
    await this.db.sequelize.transaction(async (transaction) => {
      await this.db.sequelize.query(
        `INSERT INTO profit_share_steps (step_no, trade_no, kind, refund_no, receivers, amount, status,
                                         channel_no, fail_reason)
         VALUES (:stepNo, :tradeNo, :kind, :refundNo, CAST(:receivers AS jsonb), :amount, :status,
                 :channelNo, :failReason)
         ON CONFLICT (step_no) DO UPDATE
            SET status = EXCLUDED.status,
                channel_no = COALESCE(EXCLUDED.channel_no, profit_share_steps.channel_no),
                fail_reason = EXCLUDED.fail_reason, updated_at = now()
          WHERE profit_share_steps.status = 'processing'`,
        {
          transaction,
          replacements: {
            tradeNo,
            stepNo: step.stepNo,
            kind: step.kind,
            refundNo: step.refundNo ?? null,
            receivers: JSON.stringify(step.receivers),
            amount: step.amount,
            status: step.status,
            channelNo: step.channelNo ?? null,
            failReason: step.failReason ?? null,
          },
        },
      );
      await this.db.sequelize.query(
        `UPDATE orders SET profit_sharing_status = :status, profit_shared_amount = :sharedAmount,
                profit_returned_amount = :returnedAmount, updated_at = now()
          WHERE trade_no = :tradeNo`,
        { transaction, replacements: { tradeNo, ...order } },
      );
    });
  }

  /**
   * Orders of every app, newest first by (created_at, trade_no), a keyset page at a time: each
   * filter has an index to walk (migration 0021), so a page costs the same deep in the table.
   */
  async search(filter: OrderSearch, page: KeysetPage): Promise<KeysetResult<Order>> {
    const where = new SearchConditions({ limit: page.limit + 1 })
      .equals('o.trade_no', 'tradeNo', filter.tradeNo)
      .equals('o.merchant_order_no', 'merchantOrderNo', filter.merchantOrderNo)
      .equals('o.merchant_id', 'merchantId', filter.merchantId)
      .equals('o.app_id', 'appId', filter.appId)
      .equals('o.status', 'status', filter.status)
      .equals('o.channel_code', 'channelCode', filter.channelCode)
      .compare('o.created_at', '>=', 'from', filter.from, 'timestamptz')
      .compare('o.created_at', '<', 'to', filter.to, 'timestamptz')
      .compare('o.amount', '>=', 'minAmount', filter.minAmount)
      .compare('o.amount', '<=', 'maxAmount', filter.maxAmount)
      .after('o.created_at', [{ column: 'o.trade_no', value: page.after?.key ?? '' }], page.after?.at);
    if (filter.needsRefundReview) where.where(`(${NEEDS_REFUND_REVIEW})`);
    const rows = await this.db.sequelize.query(
      `SELECT o.*, ${keysetAt('o.created_at')} AS cursor_at FROM orders o ${where.sql()}
        ORDER BY o.created_at DESC, o.trade_no DESC LIMIT :limit`,
      { replacements: where.replacements, model: this.models.Order, mapToModel: true },
    );
    return keysetPageOf(rows, page.limit, (o) => ({ at: o.get('cursor_at') as string, key: o.tradeNo }));
  }

  /** How many orders an operator still has to refund after they were paid late (the console). */
  async countNeedingRefundReview(): Promise<number> {
    const [row] = await this.db.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM orders o WHERE ${NEEDS_REFUND_REVIEW}`,
      { type: QueryTypes.SELECT },
    );
    return Number(row?.n ?? 0);
  }

  /**
   * The orders created since the start of the day `days - 1` days before today, in `timeZone`,
   * counted by day, channel and pay method in one aggregate (the console's overview): the
   * number, those paid and their amount.
   */
  async tallySince(timeZone: string, days: number): Promise<OrderTally[]> {
    const rows = await this.db.sequelize.query<{
      day: string;
      channel_code: string;
      pay_method: string;
      orders: string;
      paid_orders: string;
      paid_amount: string;
    }>(
      `WITH ${DAYS_IN_ZONE}
       SELECT days.day,
              -- A checkout order whose buyer picked no channel is at none yet.
              COALESCE(o.channel_code, 'none') AS channel_code, o.pay_method,
              count(*) AS orders,
              count(*) FILTER (WHERE o.status IN ${PAID_STATUSES}) AS paid_orders,
              COALESCE(sum(o.amount) FILTER (WHERE o.status IN ${PAID_STATUSES}), 0) AS paid_amount
         FROM days JOIN orders o ON o.created_at >= days.starts AND o.created_at < days.ends
        GROUP BY 1, 2, 3`,
      { replacements: { timeZone, back: days - 1 }, type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({
      day: r.day,
      channelCode: r.channel_code,
      payMethod: r.pay_method,
      orders: Number(r.orders),
      paidOrders: Number(r.paid_orders),
      paidAmount: Number(r.paid_amount),
    }));
  }

  /** The order's share steps, oldest first. */
  async shareSteps(tradeNo: string): Promise<(ShareStep & { createdAt: Date })[]> {
    const rows = await this.db.sequelize.query<{
      step_no: string;
      kind: ShareStep['kind'];
      refund_no: string | null;
      receivers: ShareStep['receivers'];
      amount: string;
      status: ShareStep['status'];
      channel_no: string | null;
      fail_reason: string | null;
      created_at: Date;
    }>(
      `SELECT step_no, kind, refund_no, receivers, amount, status, channel_no, fail_reason, created_at
         FROM profit_share_steps WHERE trade_no = :tradeNo ORDER BY created_at, step_no`,
      {
        replacements: { tradeNo },
        type: QueryTypes.SELECT,
      },
    );
    return rows.map((r) => ({
      stepNo: r.step_no,
      kind: r.kind,
      refundNo: r.refund_no,
      receivers: r.receivers,
      amount: Number(r.amount),
      status: r.status,
      channelNo: r.channel_no,
      failReason: r.fail_reason,
      createdAt: r.created_at,
    }));
  }
}
