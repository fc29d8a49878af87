import { QueryTypes } from 'sequelize';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import {
  keysetAt,
  keysetPageOf,
  SearchConditions,
  type KeysetPage,
  type KeysetResult,
} from '../../platform/pagination';
import { SEALED_FIELD_PREFIX, SealedColumn } from '../../platform/crypto/sealed-column';
import { isFinalStatus, type TransferStatus, type TransferStep } from './rules';

/** The payee as it is sealed in its row: personal data (an Alipay logon id is a phone or an email). */
export interface SealedPayee {
  account: string;
  name: string | null;
}

/** A transfer as its row holds it; the payee still sealed. */
export interface Transfer {
  transferNo: string;
  appId: string;
  merchantTransferNo: string;
  channelCode: string;
  merchantId: string | null;
  channelAccountId: string | null;
  subMerchantNo: string | null;
  amount: number;
  currency: string;
  payeeType: string;
  payee: string;
  payeeHint: string;
  remark: string;
  scene: unknown;
  notifyUrl: string;
  status: TransferStatus;
  channelStatus: string | null;
  channelTransferNo: string | null;
  packageInfo: string | null;
  failReason: string | null;
  refusedAtCreate: boolean;
  createSentAt: Date | null;
  cancelRequestedAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewTransfer = Omit<
  Transfer,
  | 'status'
  | 'channelStatus'
  | 'channelTransferNo'
  | 'packageInfo'
  | 'failReason'
  | 'refusedAtCreate'
  | 'createSentAt'
  | 'cancelRequestedAt'
  | 'finishedAt'
  | 'createdAt'
  | 'updatedAt'
  | 'payee'
> & { payee: SealedPayee };

/** What an operator looks transfers up by, across apps (the console); every field narrows. */
export interface TransferSearch {
  transferNo?: string;
  appId?: string;
  status?: TransferStatus;
  channelCode?: string;
  /** Created at or after. */
  from?: string;
  /** Created before. */
  to?: string;
}

const COLUMNS = `transfer_no AS "transferNo", app_id AS "appId", merchant_transfer_no AS "merchantTransferNo",
  channel_code AS "channelCode", merchant_id AS "merchantId", channel_account_id AS "channelAccountId",
  sub_merchant_no AS "subMerchantNo", amount::float8 AS amount, currency, payee_type AS "payeeType", payee,
  payee_hint AS "payeeHint", remark, scene, notify_url AS "notifyUrl", status, channel_status AS "channelStatus",
  channel_transfer_no AS "channelTransferNo", package_info AS "packageInfo", fail_reason AS "failReason",
  refused_at_create AS "refusedAtCreate", create_sent_at AS "createSentAt", cancel_requested_at AS "cancelRequestedAt", finished_at AS "finishedAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * The transfers read model (SPEC §11). The API inserts a transfer's row when it first takes the
 * request (the unique (app_id, merchant_transfer_no) makes every repeat the same transfer); after
 * that only the transfer's workflow moves it, and a final status never changes.
 */
export class TransferRepository {
  private readonly payees: SealedColumn<SealedPayee>;

  constructor(
    private readonly db: Database,
    keyring: Keyring | undefined,
  ) {
    this.payees = new SealedColumn<SealedPayee>(keyring, 'transfers.payee', () => {
      throw new Error('is not sealed');
    });
  }

  private async one(sql: string, replacements: Record<string, unknown>): Promise<Transfer | null> {
    const [row] = await this.db.sequelize.query<Transfer>(sql, { replacements, type: QueryTypes.SELECT });
    return row ?? null;
  }

  /** Transfers of every app, newest first by (created_at, transfer_no), a keyset page at a time. */
  async search(filter: TransferSearch, page: KeysetPage): Promise<KeysetResult<Transfer>> {
    const where = new SearchConditions({ limit: page.limit + 1 })
      .equals('transfer_no', 'transferNo', filter.transferNo)
      .equals('app_id', 'appId', filter.appId)
      .equals('status', 'status', filter.status)
      .equals('channel_code', 'channelCode', filter.channelCode)
      .compare('created_at', '>=', 'from', filter.from, 'timestamptz')
      .compare('created_at', '<', 'to', filter.to, 'timestamptz')
      .after('created_at', [{ column: 'transfer_no', value: page.after?.key ?? '' }], page.after?.at);
    const rows = await this.db.sequelize.query<Transfer & { cursorAt: string }>(
      `SELECT ${COLUMNS}, ${keysetAt('created_at')} AS "cursorAt" FROM transfers ${where.sql()}
        ORDER BY created_at DESC, transfer_no DESC LIMIT :limit`,
      { replacements: where.replacements, type: QueryTypes.SELECT },
    );
    const page_ = keysetPageOf(rows, page.limit, (t) => ({ at: t.cursorAt, key: t.transferNo }));
    return { rows: page_.rows.map(({ cursorAt: _cursor, ...t }) => t), next: page_.next };
  }

  /** Inserts the transfer unless the app already has its merchant_transfer_no; whether this call did. */
  async insert(t: NewTransfer): Promise<boolean> {
    const rows = await this.db.sequelize.query(
      `INSERT INTO transfers (transfer_no, app_id, merchant_transfer_no, channel_code, merchant_id,
                              channel_account_id, sub_merchant_no, amount, currency, payee_type, payee,
                              payee_hint, remark, scene, notify_url)
       VALUES (:transferNo, :appId, :merchantTransferNo, :channelCode, :merchantId, :channelAccountId,
               :subMerchantNo, :amount, :currency, :payeeType, :payee, :payeeHint, :remark,
               CAST(:scene AS jsonb), :notifyUrl)
       ON CONFLICT (app_id, merchant_transfer_no) DO NOTHING
       RETURNING transfer_no`,
      {
        replacements: {
          ...t,
          payee: this.payees.seal(t.payee, t.transferNo),
          scene: t.scene === undefined || t.scene === null ? null : JSON.stringify(t.scene),
        },
        type: QueryTypes.SELECT,
      },
    );
    return rows.length > 0;
  }

  /** The payee of a transfer, opened (for its channel call, or to compare a repeat with). */
  payeeOf(t: Transfer): SealedPayee {
    return this.payees.open(t.payee, t.transferNo)!;
  }

  find(appId: string, transferNo: string): Promise<Transfer | null> {
    return this.one(`SELECT ${COLUMNS} FROM transfers WHERE app_id = :appId AND transfer_no = :transferNo`, {
      appId,
      transferNo,
    });
  }

  findByNo(transferNo: string): Promise<Transfer | null> {
    return this.one(`SELECT ${COLUMNS} FROM transfers WHERE transfer_no = :transferNo`, { transferNo });
  }

  findByMerchantTransferNo(appId: string, merchantTransferNo: string): Promise<Transfer | null> {
    return this.one(
      `SELECT ${COLUMNS} FROM transfers WHERE app_id = :appId AND merchant_transfer_no = :merchantTransferNo`,
      { appId, merchantTransferNo },
    );
  }

  /**
   * Records the channel's state of a transfer that has not ended; answers the status this call
   * moved it from, or null when it had ended already (a final status never changes).
   */
  async recordStep(
    transferNo: string,
    step: TransferStep & { refusedAtCreate?: boolean },
    status: TransferStatus,
  ): Promise<TransferStatus | null> {
    const [row] = await this.db.sequelize.query<{ previous: TransferStatus }>(
      `WITH prev AS (SELECT transfer_no, status FROM transfers
                      WHERE transfer_no = :transferNo
                        AND status NOT IN ('success', 'failed', 'cancelled')
                      FOR UPDATE)
       UPDATE transfers t
          SET status = :status, channel_status = :channelStatus,
              channel_transfer_no = COALESCE(:channelTransferNo, t.channel_transfer_no),
              package_info = COALESCE(:packageInfo, t.package_info),
              fail_reason = :failReason,
              refused_at_create = :refusedAtCreate,
              finished_at = CASE WHEN :final THEN COALESCE(CAST(:finishedAt AS timestamptz), now()) END,
              updated_at = now()
         FROM prev
        WHERE t.transfer_no = prev.transfer_no
       RETURNING prev.status AS previous`,
      {
        replacements: {
          transferNo,
          status,
          channelStatus: step.status,
          channelTransferNo: step.channelTransferNo,
          packageInfo: step.packageInfo ?? null,
          failReason: step.status === 'failed' || step.status === 'cancelled' ? (step.reason ?? null) : null,
          refusedAtCreate: step.refusedAtCreate === true,
          final: isFinalStatus(status),
          finishedAt: step.finishedAt ?? null,
        },
        type: QueryTypes.SELECT,
      },
    );
    return row?.previous ?? null;
  }

  /**
   * Claims the transfer's one create at its channel: true for the one caller that may send it;
   * false when it was claimed before (by an earlier attempt or run), whose outcome is then asked.
   */
  async claimCreate(transferNo: string): Promise<boolean> {
    const rows = await this.db.sequelize.query(
      `UPDATE transfers SET create_sent_at = now(), updated_at = now()
        WHERE transfer_no = :transferNo AND create_sent_at IS NULL
       RETURNING transfer_no`,
      { replacements: { transferNo }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** Transfers recorded more than `olderThanMs` ago whose create was never claimed: never started. */
  async neverSent(olderThanMs: number, limit = 100): Promise<Transfer[]> {
    return this.db.sequelize.query<Transfer>(
      `SELECT ${COLUMNS} FROM transfers
        WHERE create_sent_at IS NULL AND status = 'processing'
          AND created_at < now() - make_interval(secs => :seconds)
        ORDER BY created_at LIMIT :limit`,
      { replacements: { seconds: olderThanMs / 1000, limit }, type: QueryTypes.SELECT },
    );
  }

  /** When a client first asked to cancel the transfer (kept for people; the channel decides). */
  async markCancelRequested(transferNo: string): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE transfers SET cancel_requested_at = COALESCE(cancel_requested_at, now()), updated_at = now()
        WHERE transfer_no = :transferNo`,
      { replacements: { transferNo } },
    );
  }
}

/** How many transfers' payees the payload key `keyId` sealed (`durapay keys retire` refuses while any). */
export async function transferPayeesSealedWith(db: Database, keyId: string): Promise<number> {
  const [row] = await db.sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM transfers WHERE starts_with(payee, :prefix)',
    { replacements: { prefix: `${SEALED_FIELD_PREFIX}${keyId}:` }, type: QueryTypes.SELECT },
  );
  return Number(row?.n ?? 0);
}

/**
 * Seals the payees an older key sealed again with the current one (`durapay keys reseal
 * --rotate`), in batches, compare-and-set. One that does not open is left as it is and named
 * (its transfer, never the value). Returns how many were sealed again.
 */
export async function resealTransferPayees(
  db: Database,
  keyring: Keyring,
  options: { batchSize?: number } = {},
): Promise<{ resealed: number; unopened: { transferNo: string; reason: string }[] }> {
  const column = new SealedColumn<SealedPayee>(keyring, 'transfers.payee', () => {
    throw new Error('is not sealed');
  });
  const current = `${SEALED_FIELD_PREFIX}${keyring.current.id}:`;
  let after = '';
  let resealed = 0;
  const unopened: { transferNo: string; reason: string }[] = [];
  for (;;) {
    const rows = await db.sequelize.query<{ transfer_no: string; payee: string }>(
      `SELECT transfer_no, payee FROM transfers
        WHERE transfer_no > :after AND NOT starts_with(payee, :current)
        ORDER BY transfer_no LIMIT :limit`,
      { replacements: { after, current, limit: options.batchSize ?? 500 }, type: QueryTypes.SELECT },
    );
    if (rows.length === 0) return { resealed, unopened };
    for (const row of rows) {
      let sealed: string | null | undefined;
      try {
        sealed = column.reseal(row.payee, row.transfer_no, true);
      } catch (err) {
        unopened.push({ transferNo: row.transfer_no, reason: (err as Error).message });
        continue;
      }
      if (!sealed) continue;
      const [, changed] = await db.sequelize.query(
        'UPDATE transfers SET payee = :sealed WHERE transfer_no = :t AND payee = :old',
        { replacements: { t: row.transfer_no, old: row.payee, sealed }, type: QueryTypes.UPDATE },
      );
      resealed += Number(changed ?? 0);
    }
    after = rows[rows.length - 1]!.transfer_no;
  }
}
