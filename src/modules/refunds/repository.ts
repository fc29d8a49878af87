import { QueryTypes } from 'sequelize';
import type { Database } from '../../platform/db';
import {
  keysetAt,
  keysetPageOf,
  SearchConditions,
  type KeysetPage,
  type KeysetResult,
} from '../../platform/pagination';
import type { NewRefund } from '../orders';
import { DAYS_IN_ZONE } from '../../platform/dates';
import { refundModels, type Refund } from './model';
import type { RefundStatus } from './rules';

/** What an operator looks refunds up by, across apps (the console); every field narrows. */
export interface RefundSearch {
  refundNo?: string;
  tradeNo?: string;
  appId?: string;
  status?: RefundStatus;
  /** Created at or after. */
  from?: string;
  /** Created before. */
  to?: string;
}

/** One day's refunds by their orders' channel and pay method (the console's overview). */
export interface RefundTally {
  /** The day in the time zone asked for, YYYY-MM-DD. */
  day: string;
  channelCode: string;
  payMethod: string;
  /** Refunds asked that day, whatever became of them. */
  refunds: number;
  /** The amount of those that succeeded. */
  refundedAmount: number;
}

/**
 * The refunds read model. Only activities write it (each write idempotent on its key and
 * guarded by the state it moves from); the API reads it.
 */
export class RefundRepository {
  constructor(private readonly db: Database) {}

  private get models() {
    return refundModels(this.db.sequelize);
  }

  async findRefund(appId: string, refundNo: string): Promise<Refund | null> {
    return this.models.Refund.findOne({ where: { appId, refundNo } });
  }

  async findRefundByNo(refundNo: string): Promise<Refund | null> {
    return this.models.Refund.findByPk(refundNo);
  }

  async findRefundByMerchantRefundNo(appId: string, merchantRefundNo: string): Promise<Refund | null> {
    return this.models.Refund.findOne({ where: { appId, merchantRefundNo } });
  }

  /** The refunds of an order, oldest first. */
  async ofOrder(tradeNo: string): Promise<Refund[]> {
    return this.models.Refund.findAll({
      where: { tradeNo },
      order: [
        ['createdAt', 'ASC'],
        ['refundNo', 'ASC'],
      ],
    });
  }

  /** Refunds of every app, newest first by (created_at, refund_no), a keyset page at a time. */
  async search(filter: RefundSearch, page: KeysetPage): Promise<KeysetResult<Refund>> {
    const where = new SearchConditions({ limit: page.limit + 1 })
      .equals('r.refund_no', 'refundNo', filter.refundNo)
      .equals('r.trade_no', 'tradeNo', filter.tradeNo)
      .equals('r.app_id', 'appId', filter.appId)
      .equals('r.status', 'status', filter.status)
      .compare('r.created_at', '>=', 'from', filter.from, 'timestamptz')
      .compare('r.created_at', '<', 'to', filter.to, 'timestamptz')
      .after('r.created_at', [{ column: 'r.refund_no', value: page.after?.key ?? '' }], page.after?.at);
    const rows = await this.db.sequelize.query(
      `SELECT r.*, ${keysetAt('r.created_at')} AS cursor_at FROM refunds r ${where.sql()}
        ORDER BY r.created_at DESC, r.refund_no DESC LIMIT :limit`,
      { replacements: where.replacements, model: this.models.Refund, mapToModel: true },
    );
    return keysetPageOf(rows, page.limit, (r) => ({ at: r.get('cursor_at') as string, key: r.refundNo }));
  }

  /** How many refunds are in `status` now (the console's exceptions: `abnormal`). */
  async countInStatus(status: RefundStatus): Promise<number> {
    return this.models.Refund.count({ where: { status } });
  }

  /**
   * The refunds asked since the start of the day `days - 1` days before today, in `timeZone`,
   * counted by day and by their orders' channel and pay method, in one aggregate.
   */
  async tallySince(timeZone: string, days: number): Promise<RefundTally[]> {
    const rows = await this.db.sequelize.query<{
      day: string;
      channel_code: string;
      pay_method: string;
      refunds: string;
      refunded_amount: string;
    }>(
      `WITH ${DAYS_IN_ZONE}
       SELECT days.day, o.channel_code, o.pay_method,
              count(*) AS refunds,
              COALESCE(sum(r.refund_amount) FILTER (WHERE r.status = 'success'), 0) AS refunded_amount
         FROM days JOIN refunds r ON r.created_at >= days.starts AND r.created_at < days.ends
         JOIN orders o ON o.trade_no = r.trade_no
        GROUP BY 1, 2, 3`,
      { replacements: { timeZone, back: days - 1 }, type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({
      day: r.day,
      channelCode: r.channel_code,
      payMethod: r.pay_method,
      refunds: Number(r.refunds),
      refundedAmount: Number(r.refunded_amount),
    }));
  }

  /** Records a created refund; whether this call inserted it. */
  async insertRefund(r: NewRefund): Promise<boolean> {
    const rows = await this.db.sequelize.query(
      `INSERT INTO refunds (refund_no, app_id, trade_no, merchant_refund_no, refund_amount, reason, notify_url,
                            status, created_at, updated_at)
       VALUES (:refundNo, :appId, :tradeNo, :merchantRefundNo, :refundAmount, :reason, :notifyUrl,
               'processing', :createdAt, now())
       ON CONFLICT (refund_no) DO NOTHING
       RETURNING refund_no`,
      { replacements: { ...r }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  async setRefundChannelNo(refundNo: string, channelRefundNo: string | null): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE refunds SET channel_refund_no = COALESCE(:channelRefundNo, channel_refund_no), updated_at = now()
        WHERE refund_no = :refundNo`,
      { replacements: { refundNo, channelRefundNo } },
    );
  }

  /**
   * processing → success | failed | abnormal, and abnormal → success | abnormal (an abnormal
   * refund paid out another way, or still abnormal with the channel's new reason). A success or
   * a failure never changes again. Returns the status this call moved it from, or null.
   */
  async settleRefund(
    refundNo: string,
    outcome: {
      status: Exclude<RefundStatus, 'processing'>;
      channelRefundNo: string | null;
      refundTime: string | null;
      failReason: string | null;
    },
  ): Promise<RefundStatus | null> {
    const [row] = await this.db.sequelize.query<{ previous: RefundStatus }>(
      `WITH prev AS (SELECT refund_no, status FROM refunds
                      WHERE refund_no = :refundNo
                        AND (status = 'processing' OR (status = 'abnormal' AND :status <> 'failed'))
                      FOR UPDATE)
       UPDATE refunds r
          SET status = :status, channel_refund_no = COALESCE(:channelRefundNo, r.channel_refund_no),
              refund_time = :refundTime, fail_reason = :failReason, updated_at = now()
         FROM prev
        WHERE r.refund_no = prev.refund_no
       RETURNING prev.status AS previous`,
      { replacements: { refundNo, ...outcome }, type: QueryTypes.SELECT },
    );
    return row?.previous ?? null;
  }
}
