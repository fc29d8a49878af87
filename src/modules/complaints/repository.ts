// Longer than 400 lines: the complaints module's one data-access place (STYLE: a module's
// repository is the only code on its tables): the record and its sealed personal data, the events
// it owes, its deadlines, its refund, the action log, and the lists with their filters.
/**
 * Consumer complaints (SPEC §16): the only code that touches `complaints` and
 * `complaint_actions`. Rows are written by the complaint workflow's activities from what the
 * channel answers; the payer's words, phone, images and the negotiation history are personal
 * data, sealed with the payload keys and bound to their column and complaint. One data-access
 * style: SQL through sequelize.query, as the reconciliation's repository.
 */
import { QueryTypes } from 'sequelize';
import type { ChannelComplaint, ComplaintStep } from '../../channels/ports';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { SealedColumn } from '../../platform/crypto/sealed-column';
import { keysetAt, keysetPageOf, type KeysetPage, type KeysetResult } from '../../platform/pagination';
import type { Complaint, ComplaintActionRow, ComplaintStepView } from './model';
import type { ComplaintActor } from './messages';
import { latestRound } from './rules';
import { refuseLegacy } from './sealed';

interface Row {
  channel_code: string;
  complaint_id: string;
  account: string;
  app_id: string | null;
  merchant_id: string | null;
  trade_no: string | null;
  out_trade_no: string | null;
  channel_trade_no: string | null;
  order_amount: string | null;
  sub_merchant_no: string;
  state: Complaint['state'];
  problem_type: Complaint['problemType'];
  apply_refund_amount: string | null;
  sealed_detail: string | null;
  sealed_payer_phone: string | null;
  sealed_images: string | null;
  sealed_history: string | null;
  complaint_times: number;
  awaits_reply: boolean;
  full_refunded: boolean;
  complained_at: Date;
  reply_due_at: Date;
  complete_due_at: Date;
  replied_at: Date | null;
  completed_at: Date | null;
  refund_no: string | null;
  refund_amount: string | null;
  reply_due_notified_at: Date | null;
  overdue_at: Date | null;
  version: number;
  unpublished_event: 'created' | 'updated' | null;
  unpublished_version: number | null;
  created_at: Date;
  updated_at: Date;
  /** The keyset position of a list's row. */
  position?: string;
}

/** When the merchant first replied since the payer last complained (created or continued). */
const repliedThisRound = (steps: ComplaintStepView[]): string | null =>
  latestRound(steps).find((s) => s.type === 'MERCHANT_RESPONSE')?.at ?? null;

const num = (v: string | null) => (v === null ? null : Number(v));

/** What a complaint's record is found by in a list (SPEC §16). */
export interface ComplaintFilter {
  /** Absent: every app's (operators). */
  appId?: string;
  state?: Complaint['state'];
  /** Past a deadline (reply or completion) and not processed. */
  overdue?: boolean;
  merchantId?: string;
  tradeNo?: string;
  channelCode?: string;
  /** Only complaints naming no order durapay has (operators). */
  unknownOrder?: boolean;
}

/** A complaint as the channel answered it, with the order it names as durapay has it. */
export interface ComplaintWrite {
  channelCode: string;
  account: string;
  complaint: ChannelComplaint;
  history: ComplaintStep[];
  order: { appId: string; merchantId: string | null; tradeNo: string; amount: number } | null;
  /** How long the channel gives for a first reply and for completion, already scaled. */
  replyWithinMs: number;
  completeWithinMs: number;
}

export class ComplaintRepository {
  private readonly detail: SealedColumn<string>;
  private readonly phone: SealedColumn<string>;
  private readonly images: SealedColumn<string[]>;
  private readonly history: SealedColumn<ComplaintStepView[]>;

  constructor(
    private readonly db: Database,
    keyring: Keyring,
  ) {
    this.detail = new SealedColumn<string>(keyring, 'complaints.sealed_detail', refuseLegacy);
    this.phone = new SealedColumn<string>(keyring, 'complaints.sealed_payer_phone', refuseLegacy);
    this.images = new SealedColumn<string[]>(keyring, 'complaints.sealed_images', refuseLegacy);
    this.history = new SealedColumn<ComplaintStepView[]>(keyring, 'complaints.sealed_history', refuseLegacy);
  }

  private toComplaint(r: Row): Complaint {
    const key = `${r.channel_code}:${r.complaint_id}`;
    return {
      channelCode: r.channel_code,
      complaintId: r.complaint_id,
      account: r.account,
      appId: r.app_id,
      merchantId: r.merchant_id,
      tradeNo: r.trade_no,
      outTradeNo: r.out_trade_no,
      channelTradeNo: r.channel_trade_no,
      orderAmount: num(r.order_amount),
      subMerchantNo: r.sub_merchant_no,
      state: r.state,
      problemType: r.problem_type,
      applyRefundAmount: num(r.apply_refund_amount),
      detail: this.detail.open(r.sealed_detail, key) ?? '',
      payerPhone: this.phone.open(r.sealed_payer_phone, key),
      images: this.images.open(r.sealed_images, key) ?? [],
      history: this.history.open(r.sealed_history, key) ?? [],
      complaintTimes: r.complaint_times,
      awaitsReply: r.awaits_reply,
      fullRefunded: r.full_refunded,
      complainedAt: r.complained_at,
      replyDueAt: r.reply_due_at,
      completeDueAt: r.complete_due_at,
      repliedAt: r.replied_at,
      completedAt: r.completed_at,
      refundNo: r.refund_no,
      refundAmount: num(r.refund_amount),
      replyDueNotifiedAt: r.reply_due_notified_at,
      overdueAt: r.overdue_at,
      version: r.version,
      unpublished:
        r.unpublished_event === null
          ? null
          : { event: r.unpublished_event, version: r.unpublished_version ?? r.version },
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
  }

  async find(channelCode: string, complaintId: string): Promise<Complaint | null> {
    const [row] = await this.db.sequelize.query<Row>(
      'SELECT * FROM complaints WHERE channel_code = :channelCode AND complaint_id = :complaintId',
      { replacements: { channelCode, complaintId }, type: QueryTypes.SELECT },
    );
    return row ? this.toComplaint(row) : null;
  }

  /** The app's complaint by its id (ids are the channel's, unique there): another app's is none. */
  async findOfApp(appId: string | undefined, complaintId: string): Promise<Complaint | null> {
    const rows = await this.db.sequelize.query<Row>(
      `SELECT * FROM complaints WHERE complaint_id = :complaintId
         ${appId === undefined ? '' : 'AND app_id = :appId'}
       ORDER BY channel_code LIMIT 1`,
      { replacements: { complaintId, appId: appId ?? null }, type: QueryTypes.SELECT },
    );
    return rows[0] ? this.toComplaint(rows[0]) : null;
  }

  /**
   * The order a complaint names: durapay's number is the channel's out_trade_no, which only the
   * merchant's own orders make unique, so the order must also be of this channel and, where both
   * are known, the channel's transaction: a number another merchant of the provider happened to
   * use binds no complaint to an app.
   */
  async orderNamed(
    channelCode: string,
    named: { tradeNo: string; channelTradeNo: string },
  ): Promise<Awaited<ReturnType<ComplaintRepository['orderOf']>>> {
    const order = await this.orderOf(named.tradeNo);
    if (!order || order.channelCode !== channelCode) return null;
    if (order.channelTradeNo && named.channelTradeNo && order.channelTradeNo !== named.channelTradeNo)
      return null;
    return order;
  }

  /** The order of this number, as the orders' table has it. */
  async orderOf(tradeNo: string): Promise<{
    appId: string;
    merchantId: string | null;
    tradeNo: string;
    amount: number;
    notifyUrl: string | null;
    channelCode: string | null;
    channelTradeNo: string | null;
  } | null> {
    const [row] = await this.db.sequelize.query<{
      app_id: string;
      merchant_id: string | null;
      trade_no: string;
      amount: string;
      notify_url: string | null;
      channel_code: string | null;
      channel_trade_no: string | null;
    }>(
      `SELECT app_id, merchant_id, trade_no, amount, notify_url, channel_code, channel_trade_no
         FROM orders WHERE trade_no = :tradeNo`,
      { replacements: { tradeNo }, type: QueryTypes.SELECT },
    );
    return row
      ? {
          appId: row.app_id,
          merchantId: row.merchant_id,
          tradeNo: row.trade_no,
          amount: Number(row.amount),
          notifyUrl: row.notify_url,
          channelCode: row.channel_code,
          channelTradeNo: row.channel_trade_no,
        }
      : null;
  }

  /**
   * Writes the channel's answer. A new complaint, or one the payer complained about again
   * (its count went up), is given its deadlines from now; any change moves `version` on.
   * Answers the row and whether it is new or changed.
   */
  async record(w: ComplaintWrite): Promise<{ complaint: Complaint; created: boolean; changed: boolean }> {
    return this.db.sequelize.transaction(async (transaction) => {
      const c = w.complaint;
      const key = `${w.channelCode}:${c.complaintId}`;
      const [before] = await this.db.sequelize.query<Row>(
        'SELECT * FROM complaints WHERE channel_code = :channelCode AND complaint_id = :complaintId FOR UPDATE',
        {
          replacements: { channelCode: w.channelCode, complaintId: c.complaintId },
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      const steps: ComplaintStepView[] = w.history.map((s) => ({
        id: s.id,
        operator: s.operator,
        at: s.at.toISOString(),
        type: s.type,
        details: s.details,
        image_count: s.imageUrls.length,
      }));
      const named = c.orders[0];
      const values = {
        channelCode: w.channelCode,
        complaintId: c.complaintId,
        account: w.account,
        appId: w.order?.appId ?? null,
        merchantId: w.order?.merchantId ?? null,
        tradeNo: w.order?.tradeNo ?? null,
        outTradeNo: named?.tradeNo ?? null,
        channelTradeNo: named?.channelTradeNo || null,
        orderAmount: w.order?.amount ?? named?.amount ?? null,
        subMerchantNo: c.subMerchantNo,
        state: c.state,
        problemType: c.problemType,
        applyRefundAmount: c.applyRefundAmount ?? null,
        detail: this.detail.seal(c.detail, key),
        phone: this.phone.seal(c.payerPhone ?? null, key),
        images: this.images.seal(c.imageUrls, key),
        history: this.history.seal(steps, key),
        complaintTimes: c.complaintTimes,
        awaitsReply: c.awaitsReply,
        fullRefunded: c.fullRefunded,
        complainedAt: c.complainedAt,
        replyWithinMs: w.replyWithinMs,
        completeWithinMs: w.completeWithinMs,
        // The merchant's own steps say when it replied and completed, as the channel logged them.
        repliedAt: repliedThisRound(steps),
        completedAt:
          c.state === 'processed'
            ? ([...steps]
                .reverse()
                .find(
                  (s) =>
                    s.type.startsWith('MERCHANT_CONFIRM') || s.type.startsWith('COMPLAINT_FULL_REFUNDED'),
                )?.at ?? new Date().toISOString())
            : null,
      };
      if (!before) {
        const [rows] = (await this.db.sequelize.query(
          `INSERT INTO complaints (channel_code, complaint_id, account, app_id, merchant_id, trade_no,
             out_trade_no, channel_trade_no, order_amount, sub_merchant_no, state, problem_type,
             apply_refund_amount, sealed_detail, sealed_payer_phone, sealed_images, sealed_history,
             complaint_times, awaits_reply, full_refunded, complained_at, reply_due_at, complete_due_at,
             replied_at, completed_at, unpublished_event, unpublished_version)
           VALUES (:channelCode, :complaintId, :account, :appId, :merchantId, :tradeNo, :outTradeNo,
             :channelTradeNo, :orderAmount, :subMerchantNo, :state, :problemType, :applyRefundAmount,
             :detail, :phone, :images, :history, :complaintTimes, :awaitsReply, :fullRefunded,
             :complainedAt, CAST(:complainedAt AS timestamptz) + make_interval(secs => :replyWithinMs / 1000.0),
             CAST(:complainedAt AS timestamptz) + make_interval(secs => :completeWithinMs / 1000.0), :repliedAt, :completedAt,
             'created', 1)
           RETURNING *`,
          { replacements: values, transaction },
        )) as [Row[], unknown];
        return { complaint: this.toComplaint(rows[0]!), created: true, changed: true };
      }
      const old = this.toComplaint(before);
      const again = c.complaintTimes > old.complaintTimes;
      const changed =
        again ||
        old.state !== c.state ||
        old.awaitsReply !== c.awaitsReply ||
        old.fullRefunded !== c.fullRefunded ||
        old.history.length !== steps.length ||
        old.tradeNo !== values.tradeNo;
      if (!changed) return { complaint: old, created: false, changed: false };
      const [rows] = (await this.db.sequelize.query(
        `UPDATE complaints SET app_id = :appId, merchant_id = :merchantId, trade_no = :tradeNo,
           state = :state, apply_refund_amount = :applyRefundAmount, sealed_detail = :detail,
           sealed_payer_phone = :phone, sealed_images = :images, sealed_history = :history,
           complaint_times = :complaintTimes, awaits_reply = :awaitsReply, full_refunded = :fullRefunded,
           replied_at = CAST(:repliedAt AS timestamptz),
           completed_at = CASE WHEN :state = 'processed' THEN COALESCE(completed_at, CAST(:completedAt AS timestamptz)) ELSE NULL END,
           reply_due_at = CASE WHEN :again THEN now() + make_interval(secs => :replyWithinMs / 1000.0) ELSE reply_due_at END,
           complete_due_at = CASE WHEN :again THEN now() + make_interval(secs => :completeWithinMs / 1000.0) ELSE complete_due_at END,
           reply_due_notified_at = CASE WHEN :again THEN NULL ELSE reply_due_notified_at END,
           overdue_at = CASE WHEN :again THEN NULL ELSE overdue_at END,
           unpublished_event = COALESCE(unpublished_event, 'updated'), unpublished_version = version + 1,
           version = version + 1, updated_at = now()
         WHERE channel_code = :channelCode AND complaint_id = :complaintId RETURNING *`,
        { replacements: { ...values, again }, transaction },
      )) as [Row[], unknown];
      return { complaint: this.toComplaint(rows[0]!), created: false, changed: true };
    });
  }

  /** The change's event was published: nothing is owed until the next change (a later one stays owed). */
  async markPublished(channelCode: string, complaintId: string, version: number): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE complaints SET unpublished_event = NULL, unpublished_version = NULL
        WHERE channel_code = :channelCode AND complaint_id = :complaintId AND unpublished_version = :version`,
      { replacements: { channelCode, complaintId, version }, type: QueryTypes.UPDATE },
    );
  }

  /** Marks a deadline's notification raised; false when it already was (a retried activity). */
  async markDeadline(
    channelCode: string,
    complaintId: string,
    kind: 'reply_due' | 'overdue',
  ): Promise<boolean> {
    const column = kind === 'reply_due' ? 'reply_due_notified_at' : 'overdue_at';
    const [, count] = (await this.db.sequelize.query(
      `UPDATE complaints SET ${column} = now(), version = version + 1, updated_at = now()
        WHERE channel_code = :channelCode AND complaint_id = :complaintId AND ${column} IS NULL`,
      { replacements: { channelCode, complaintId }, type: QueryTypes.UPDATE },
    )) as [unknown, number];
    return count > 0;
  }

  /** A refund planned for the complaint (its amount) and, once the book made it, its number. */
  async recordRefund(
    channelCode: string,
    complaintId: string,
    refund: { amount: number | null; refundNo: string | null },
  ): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE complaints SET refund_amount = :amount, refund_no = :refundNo, version = version + 1, updated_at = now()
        WHERE channel_code = :channelCode AND complaint_id = :complaintId`,
      { replacements: { channelCode, complaintId, ...refund }, type: QueryTypes.UPDATE },
    );
  }

  /** The refund the order's book holds under the complaint's number, if it made one. */
  async refundByMerchantRefundNo(
    appId: string,
    merchantRefundNo: string,
  ): Promise<{ refundNo: string; status: string; amount: number } | null> {
    const [row] = await this.db.sequelize.query<{ refund_no: string; status: string; amount: string }>(
      `SELECT refund_no, status, refund_amount AS amount FROM refunds
        WHERE app_id = :appId AND merchant_refund_no = :merchantRefundNo`,
      { replacements: { appId, merchantRefundNo }, type: QueryTypes.SELECT },
    );
    return row ? { refundNo: row.refund_no, status: row.status, amount: Number(row.amount) } : null;
  }

  async appendAction(a: {
    channelCode: string;
    complaintId: string;
    actor: ComplaintActor;
    action: ComplaintActionRow['action'];
    outcome: ComplaintActionRow['outcome'];
    detail: Record<string, unknown>;
  }): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO complaint_actions (channel_code, complaint_id, actor, action, outcome, detail)
       VALUES (:channelCode, :complaintId, :actor, :action, :outcome, CAST(:detail AS jsonb))`,
      {
        replacements: {
          ...a,
          actor: a.actor.kind === 'app' ? `app:${a.actor.appId}` : `operator:${a.actor.operatorId}`,
          detail: JSON.stringify(a.detail),
        },
      },
    );
  }

  async actionsOf(channelCode: string, complaintId: string): Promise<ComplaintActionRow[]> {
    return this.db.sequelize.query<ComplaintActionRow>(
      `SELECT actor, action, outcome, detail, at FROM complaint_actions
        WHERE channel_code = :channelCode AND complaint_id = :complaintId ORDER BY id`,
      { replacements: { channelCode, complaintId }, type: QueryTypes.SELECT },
    );
  }

  /** Complaints newest first, by keyset (complaint time, then id). */
  async list(filter: ComplaintFilter, page: KeysetPage): Promise<KeysetResult<Complaint>> {
    const where: string[] = [];
    const replacements: Record<string, unknown> = { limit: page.limit + 1 };
    const add = (sql: string, values: Record<string, unknown> = {}) => {
      where.push(sql);
      Object.assign(replacements, values);
    };
    if (filter.appId !== undefined) add('app_id = :appId', { appId: filter.appId });
    if (filter.state) add('state = :state', { state: filter.state });
    if (filter.merchantId) add('merchant_id = :merchantId', { merchantId: filter.merchantId });
    if (filter.tradeNo) add('trade_no = :tradeNo', { tradeNo: filter.tradeNo });
    if (filter.channelCode) add('channel_code = :channelCode', { channelCode: filter.channelCode });
    if (filter.unknownOrder) add('trade_no IS NULL');
    if (filter.overdue === true) add(`(${OVERDUE_SQL})`);
    if (filter.overdue === false) add(`NOT (${OVERDUE_SQL})`);
    if (page.after) {
      add(`(complained_at, complaint_id) < (CAST(:afterAt AS timestamptz), :afterKey)`, {
        afterAt: page.after.at,
        afterKey: page.after.key,
      });
    }
    const rows = await this.db.sequelize.query<Row>(
      `SELECT *, ${keysetAt('complained_at')} AS position FROM complaints
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY complained_at DESC, complaint_id DESC LIMIT :limit`,
      { replacements, type: QueryTypes.SELECT },
    );
    const positions = new Map(rows.map((r) => [r.complaint_id, r.position!]));
    return keysetPageOf(
      rows.map((r) => this.toComplaint(r)),
      page.limit,
      (c) => ({ at: positions.get(c.complaintId)!, key: c.complaintId }),
    );
  }

  /** Open complaints past a deadline, for the console's home page. */
  async overdueCount(): Promise<number> {
    const [row] = await this.db.sequelize.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM complaints WHERE ${OVERDUE_SQL}`,
      { type: QueryTypes.SELECT },
    );
    return row?.n ?? 0;
  }
}

/** Not processed, and past the reply deadline without a reply or past the completion deadline. */
const OVERDUE_SQL = `state <> 'processed' AND ((replied_at IS NULL AND reply_due_at < now()) OR complete_due_at < now())`;
