import { QueryTypes } from 'sequelize';
import type { ApplicationState } from '../../channels/ports';
import type { ApplicationStatus } from './rules';
import { FINAL_APPLICATION_STATUSES } from './rules';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import {
  SEALED_FIELD_PREFIX,
  SealedColumn,
  legacyJson,
  sealedPrefix,
} from '../../platform/crypto/sealed-column';

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
  notify_url: string | null;
  submitted_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/**
 * Every column but the applicant's data (submit_data, channel_last_answer), which is sealed and
 * opened only where it is needed.
 */
const ROW_COLUMNS = `application_id, app_id, merchant_id, channel_code, status, channel_application_no,
  sub_merchant_no, sign_url, reject_reason, audit_detail, notify_url, submitted_at, updated_at, finished_at`;

/** A row that still holds applicant data not sealed as `:prefix` says (see sealLegacy). */
const NEEDS_SEALING = `((submit_data IS NOT NULL AND NOT starts_with(submit_data, :prefix))
  OR (channel_last_answer IS NOT NULL AND NOT starts_with(channel_last_answer, :prefix)))`;

/**
 * Merchant applications (SPEC §5.6–5.7). Written only by the application workflow's
 * activities, except the row the apply endpoint opens. The applicant's data (submit_data, and
 * the channel's last answer, which may echo it) is sealed with the payload keys, bound to its
 * column and application; rows written before hold it in plain JSON until sealLegacy runs.
 */
export class ApplicationRepository {
  private readonly submitData: SealedColumn<Record<string, unknown>>;
  private readonly lastAnswer: SealedColumn<ApplicationState>;

  constructor(
    private readonly db: Database,
    private readonly keyring: Keyring,
  ) {
    this.submitData = new SealedColumn<Record<string, unknown>>(
      keyring,
      'merchant_applications.submit_data',
      legacyJson,
    );
    this.lastAnswer = new SealedColumn<ApplicationState>(
      keyring,
      'merchant_applications.channel_last_answer',
      legacyJson,
    );
  }

  private async one(sql: string, replacements: Record<string, unknown>): Promise<ApplicationRow | undefined> {
    const rows = await this.db.sequelize.query<ApplicationRow>(sql, {
      replacements,
      type: QueryTypes.SELECT,
    });
    return rows[0];
  }

  async find(applicationId: string): Promise<ApplicationRow | undefined> {
    return this.one(
      `SELECT ${ROW_COLUMNS} FROM merchant_applications WHERE application_id = :applicationId`,
      { applicationId },
    );
  }

  /** The application's submit_data, opened; undefined when there is no such application. */
  async submitDataOf(applicationId: string): Promise<Record<string, unknown> | null | undefined> {
    const rows = await this.db.sequelize.query<{ submit_data: string | null }>(
      'SELECT submit_data FROM merchant_applications WHERE application_id = :applicationId',
      { replacements: { applicationId }, type: QueryTypes.SELECT },
    );
    return rows[0] && this.submitData.open(rows[0].submit_data, applicationId);
  }

  /** The channel's last answer as recorded (for an operator), opened. */
  async channelLastAnswerOf(applicationId: string): Promise<ApplicationState | null | undefined> {
    const rows = await this.db.sequelize.query<{ channel_last_answer: string | null }>(
      'SELECT channel_last_answer FROM merchant_applications WHERE application_id = :applicationId',
      { replacements: { applicationId }, type: QueryTypes.SELECT },
    );
    return rows[0] && this.lastAnswer.open(rows[0].channel_last_answer, applicationId);
  }

  async latestFor(appId: string, merchantId: string): Promise<ApplicationRow | undefined> {
    return this.one(
      `SELECT ${ROW_COLUMNS} FROM merchant_applications WHERE app_id = :appId AND merchant_id = :merchantId
        ORDER BY submitted_at DESC, application_id DESC LIMIT 1`,
      { appId, merchantId },
    );
  }

  /** Every application of a merchant, newest first (the console's merchant page). */
  async ofMerchant(appId: string, merchantId: string): Promise<ApplicationRow[]> {
    return this.db.sequelize.query<ApplicationRow>(
      `SELECT ${ROW_COLUMNS} FROM merchant_applications WHERE app_id = :appId AND merchant_id = :merchantId
        ORDER BY submitted_at DESC, application_id DESC`,
      { replacements: { appId, merchantId }, type: QueryTypes.SELECT },
    );
  }

  /**
   * How many applications stand rejected: rejected, with no later application of the same
   * merchant at the same channel (a merchant that applied again is not an exception any more).
   */
  async countStandingRejected(): Promise<number> {
    const [row] = await this.db.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM merchant_applications a
        WHERE a.status = 'rejected'
          AND NOT EXISTS (SELECT 1 FROM merchant_applications b
                           WHERE b.app_id = a.app_id AND b.merchant_id = a.merchant_id
                             AND b.channel_code = a.channel_code AND b.submitted_at > a.submitted_at)`,
      { type: QueryTypes.SELECT },
    );
    return Number(row?.n ?? 0);
  }

  /** The application of this merchant at this channel that is not final yet, if any. */
  async openFor(appId: string, merchantId: string, channelCode: string): Promise<ApplicationRow | undefined> {
    return this.one(
      `SELECT ${ROW_COLUMNS} FROM merchant_applications
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
       VALUES (:applicationId, :appId, :merchantId, :channelCode, 'submitted', :submitData,
               :notifyUrl, now(), now())
       ON CONFLICT DO NOTHING
       RETURNING application_id`,
      {
        replacements: { ...a, submitData: this.submitData.seal(a.submitData, a.applicationId) },
        type: QueryTypes.SELECT,
      },
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
              channel_last_answer = :answer,
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
          answer: this.lastAnswer.seal(state, applicationId),
          changed,
          final,
        },
      },
    );
    return changed;
  }

  /**
   * Seals the applicant data of rows that still hold it in plain text (written before it was
   * sealed), and with `rotate` also what an older key sealed, with the current key; returns how
   * many rows it sealed. In batches, each a short transaction that locks only its rows and
   * checks them again under the lock, so that writers running meanwhile are neither lost nor
   * overwritten; a second run finds nothing to do.
   */
  async sealLegacy(options: { rotate: boolean; batchSize: number }): Promise<number> {
    const prefix = sealedPrefix(this.keyring, options.rotate);
    let after = '';
    let sealed = 0;
    for (;;) {
      // The cursor moves on with every batch, so the run ends even while rows keep changing.
      const keys = await this.db.sequelize.query<{ application_id: string }>(
        `SELECT application_id FROM merchant_applications
          WHERE application_id > :after AND ${NEEDS_SEALING}
          ORDER BY application_id LIMIT :limit`,
        { replacements: { after, prefix, limit: options.batchSize }, type: QueryTypes.SELECT },
      );
      if (keys.length === 0) return sealed;
      after = keys[keys.length - 1]!.application_id;
      sealed += await this.db.sequelize.transaction(async (transaction) => {
        const rows = await this.db.sequelize.query<{
          application_id: string;
          submit_data: string | null;
          channel_last_answer: string | null;
        }>(
          `SELECT application_id, submit_data, channel_last_answer FROM merchant_applications
            WHERE application_id IN (:ids) AND ${NEEDS_SEALING}
            ORDER BY application_id FOR UPDATE`,
          {
            replacements: { ids: keys.map((k) => k.application_id), prefix },
            type: QueryTypes.SELECT,
            transaction,
          },
        );
        for (const row of rows) {
          const id = row.application_id;
          const submitData = this.submitData.reseal(row.submit_data, id, options.rotate);
          const answer = this.lastAnswer.reseal(row.channel_last_answer, id, options.rotate);
          await this.db.sequelize.query(
            `UPDATE merchant_applications SET submit_data = :submitData, channel_last_answer = :answer
              WHERE application_id = :id`,
            {
              replacements: {
                id,
                submitData: submitData === undefined ? row.submit_data : submitData,
                answer: answer === undefined ? row.channel_last_answer : answer,
              },
              transaction,
            },
          );
        }
        return rows.length;
      });
    }
  }
}

/** Applications holding a value sealed with `keyId` (`durapay keys retire` refuses while any do). */
export async function applicationsSealedWith(db: Database, keyId: string): Promise<number> {
  const [row] = await db.sequelize.query<{ n: string }>(
    `SELECT count(*) AS n FROM merchant_applications
      WHERE starts_with(submit_data, :prefix) OR starts_with(channel_last_answer, :prefix)`,
    { replacements: { prefix: `${SEALED_FIELD_PREFIX}${keyId}:` }, type: QueryTypes.SELECT },
  );
  return Number(row?.n ?? 0);
}

/** `durapay keys reseal` and the migration step: see ApplicationRepository.sealLegacy. */
export function sealLegacyApplicationData(
  db: Database,
  keyring: Keyring,
  options: { rotate?: boolean; batchSize?: number } = {},
): Promise<number> {
  return new ApplicationRepository(db, keyring).sealLegacy({
    rotate: options.rotate ?? false,
    batchSize: options.batchSize ?? 200,
  });
}
