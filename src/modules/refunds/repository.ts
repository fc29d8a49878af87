import { QueryTypes } from 'sequelize';
import type { Database } from '../../platform/db';
import type { NewRefund } from '../orders';
import { refundModels, type Refund } from './model';
import type { RefundStatus } from './rules';

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
