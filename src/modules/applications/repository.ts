import { QueryTypes } from 'sequelize';
import type { ApplicationState } from '../../channels/ports';
import type { ApplicationStatus } from './rules';
import { FINAL_APPLICATION_STATUSES } from './rules';
import type { Database } from '../../platform/db';

export interface ApplicationRow {
  application_id: string;
  app_id: string;
  merchant_id: string;
  channel_code: string;
  status: ApplicationStatus;
  channel_application_no: string | null;
  sub_merchant_no: string | null;
  sign_url: string | null;
  reject_reason: string | null;
  audit_detail: Record<string, unknown> | null;
  submit_data: Record<string, unknown> | null;
  notify_url: string | null;
  submitted_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/**
 * Merchant applications (SPEC §5.6–5.7). Written only by the application workflow's
 * activities, except the row the apply endpoint opens.
 */
export class ApplicationRepository {
  constructor(private readonly db: Database) {}

  private async one(sql: string, replacements: Record<string, unknown>): Promise<ApplicationRow | undefined> {
    const rows = await this.db.sequelize.query<ApplicationRow>(sql, {
      replacements,
      type: QueryTypes.SELECT,
    });
    return rows[0];
  }

  async find(applicationId: string): Promise<ApplicationRow | undefined> {
    return this.one('SELECT * FROM merchant_applications WHERE application_id = :applicationId', {
      applicationId,
    });
  }

  async latestFor(appId: string, merchantId: string): Promise<ApplicationRow | undefined> {
    return this.one(
      `SELECT * FROM merchant_applications WHERE app_id = :appId AND merchant_id = :merchantId
        ORDER BY submitted_at DESC, application_id DESC LIMIT 1`,
      { appId, merchantId },
    );
  }

  /** The application of this merchant at this channel that is not final yet, if any. */
  async openFor(appId: string, merchantId: string, channelCode: string): Promise<ApplicationRow | undefined> {
    return this.one(
      `SELECT * FROM merchant_applications
        WHERE app_id = :appId AND merchant_id = :merchantId AND channel_code = :channelCode
          AND status NOT IN ('finished', 'rejected', 'canceled')
        ORDER BY submitted_at DESC LIMIT 1`,
      { appId, merchantId, channelCode },
    );
  }

  /**
   * Opens an application, unless one is already open for this merchant and channel (a unique
   * partial index decides between concurrent applies). Returns the open application's id.
   */
  async open(a: {
    applicationId: string;
    appId: string;
    merchantId: string;
    channelCode: string;
    submitData: Record<string, unknown>;
    notifyUrl: string | null;
  }): Promise<{ applicationId: string; created: boolean }> {
    const rows = await this.db.sequelize.query<{ application_id: string }>(
      `INSERT INTO merchant_applications (application_id, app_id, merchant_id, channel_code, status, submit_data,
                                          notify_url, submitted_at, updated_at)
       VALUES (:applicationId, :appId, :merchantId, :channelCode, 'submitted', CAST(:submitData AS jsonb),
               :notifyUrl, now(), now())
       ON CONFLICT DO NOTHING
       RETURNING application_id`,
      { replacements: { ...a, submitData: JSON.stringify(a.submitData) }, type: QueryTypes.SELECT },
    );
    if (rows[0]) return { applicationId: rows[0].application_id, created: true };
    const open = await this.openFor(a.appId, a.merchantId, a.channelCode);
    if (!open) throw new Error('an application was open a moment ago and is gone');
    return { applicationId: open.application_id, created: false };
  }

  /** Records the channel's view; returns whether anything a merchant cares about changed. */
  async recordState(applicationId: string, state: ApplicationState): Promise<boolean> {
    const before = await this.find(applicationId);
    if (!before) throw new Error(`application ${applicationId} does not exist`);
    const changed =
      before.status !== state.status ||
      before.sub_merchant_no !== state.subMerchantNo ||
      before.sign_url !== state.signUrl ||
      before.reject_reason !== state.rejectReason ||
      before.channel_application_no !== state.channelApplicationNo;
    const final = FINAL_APPLICATION_STATUSES.includes(state.status);
    await this.db.sequelize.query(
      `UPDATE merchant_applications
          SET status = :status, channel_application_no = :channelApplicationNo, sub_merchant_no = :subMerchantNo,
              sign_url = :signUrl, reject_reason = :rejectReason, audit_detail = CAST(:detail AS jsonb),
              channel_last_answer = CAST(:answer AS jsonb),
              updated_at = CASE WHEN :changed THEN now() ELSE updated_at END,
              finished_at = CASE WHEN :final AND finished_at IS NULL THEN now() ELSE finished_at END
        WHERE application_id = :applicationId`,
      {
        replacements: {
          applicationId,
          status: state.status,
          channelApplicationNo: state.channelApplicationNo,
          subMerchantNo: state.subMerchantNo,
          signUrl: state.signUrl,
          rejectReason: state.rejectReason,
          detail: JSON.stringify(state.detail ?? {}),
          answer: JSON.stringify(state),
          changed,
          final,
        },
      },
    );
    return changed;
  }
}
