// Longer than 300 lines: the merchants' tables have one repository (the only code that touches
// them), and the sealing of their personal data needs its private sealed columns.
import { Op, QueryTypes, UniqueConstraintError, type WhereOptions } from 'sequelize';
import type { MerchantProfitSharing, MerchantStatus } from './rules';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import {
  SEALED_FIELD_PREFIX,
  SealedColumn,
  legacyText,
  sealedPrefix,
} from '../../platform/crypto/sealed-column';
import {
  keysetAt,
  keysetPageOf,
  SearchConditions,
  type KeysetPage,
  type KeysetResult,
} from '../../platform/pagination';
import { merchantModels, type Merchant } from './model';
import { ChannelAccountRepository, accountsSealedWith } from './account-repository';

/** This app already has a merchant with this merchant_id. */
export class MerchantExistsError extends Error {
  override name = 'MerchantExistsError';
  constructor(readonly merchantId: string) {
    super('merchant_id already exists');
  }
}

export interface NewMerchant {
  appId: string;
  merchantId: string;
  merchantName: string;
  licenseNo: string | null;
  legalPerson: string | null;
  bankAccount: string | null;
  /** Stored as given; pass max_ratio explicitly (the API fills in its default 0.30). */
  profitSharing: MerchantProfitSharing | null;
}

/** A merchant as the repository answers it, without its personal data. */
export interface MerchantRecord {
  appId: string;
  merchantId: string;
  merchantName: string;
  licenseNo: string | null;
  status: MerchantStatus;
  channelCode: string | null;
  subMerchantNo: string | null;
  profitSharing: MerchantProfitSharing | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A merchant with its personal data opened: for its own record (GET) and its onboarding. */
export interface MerchantWithPersonalData extends MerchantRecord {
  legalPerson: string | null;
  /** The whole account. */
  bankAccount: string | null;
}

export interface NewMerchantFile {
  appId: string;
  channelCode: string;
  fileId: string;
  mediaType: string;
  size: number;
  /** Lower-case hex SHA-256 of the content. */
  sha256: string;
  /** The base name forwarded to the channel. */
  fileName: string;
}

export interface MerchantStatusChange {
  /** Only move a merchant currently in one of these states; any state when absent. */
  from?: readonly MerchantStatus[];
  /** Set with the status when given (undefined leaves the column as it is; null clears it). */
  channelCode?: string | null;
  subMerchantNo?: string | null;
}

/** What an operator looks merchants up by, across apps (the console); every field narrows. */
export interface MerchantSearch {
  merchantId?: string;
  status?: MerchantStatus;
  appId?: string;
}

/** The personal-data columns' attributes, left out of reads that do not need them. */
const PERSONAL_DATA = ['legalPerson', 'bankAccount'];

/** A row that still holds personal data not sealed as `:prefix` says (see sealLegacy). */
const NEEDS_SEALING = `((legal_person IS NOT NULL AND NOT starts_with(legal_person, :prefix))
  OR (bank_account IS NOT NULL AND NOT starts_with(bank_account, :prefix)))`;

function recordOf(m: Merchant): MerchantRecord {
  return {
    appId: m.appId,
    merchantId: m.merchantId,
    merchantName: m.merchantName,
    licenseNo: m.licenseNo,
    status: m.status,
    channelCode: m.channelCode,
    subMerchantNo: m.subMerchantNo,
    profitSharing: m.profitSharing,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
}

/** Binds a merchant's sealed values to it: app ids and merchant ids hold no `:`. */
const rowKey = (appId: string, merchantId: string) => `${appId}:${merchantId}`;

/**
 * Merchants (SPEC §5.1–5.4) and the record of their uploads (§5.5). Every read and write names
 * the owning app: another app's merchant is simply not found.
 *
 * The merchant's personal data (legal person, bank account) is sealed with the payload keys,
 * each value bound to its column and merchant; rows written before hold it in plain text until
 * sealLegacy runs. Only a repository given the keys writes or reads it: `find` leaves it out.
 */
export class MerchantRepository {
  private readonly legalPerson: SealedColumn<string>;
  private readonly bankAccount: SealedColumn<string>;

  /**
   * `keyring` is needed by what writes or opens personal data (create with it,
   * findWithPersonalData, list, sealLegacy); without it the rest works (find, statuses, files).
   */
  constructor(
    private readonly db: Database,
    private readonly keyring?: Keyring,
  ) {
    this.legalPerson = new SealedColumn(keyring, 'merchants.legal_person', legacyText);
    this.bankAccount = new SealedColumn(keyring, 'merchants.bank_account', legacyText);
  }

  private get models() {
    return merchantModels(this.db.sequelize);
  }

  private withPersonalData(m: Merchant): MerchantWithPersonalData {
    const key = rowKey(m.appId, m.merchantId);
    return {
      ...recordOf(m),
      legalPerson: this.legalPerson.open(m.legalPerson, key),
      bankAccount: this.bankAccount.open(m.bankAccount, key),
    };
  }

  /** Creates a merchant in status `created`; throws MerchantExistsError on a duplicate id. */
  async create(m: NewMerchant): Promise<void> {
    const key = rowKey(m.appId, m.merchantId);
    try {
      await this.models.Merchant.create({
        ...m,
        legalPerson: this.legalPerson.seal(m.legalPerson, key),
        bankAccount: this.bankAccount.seal(m.bankAccount, key),
        status: 'created',
      });
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw new MerchantExistsError(m.merchantId);
      throw err;
    }
  }

  /** The merchant without its personal data (profit sharing, sub-merchant, status). */
  async find(appId: string, merchantId: string): Promise<MerchantRecord | null> {
    const m = await this.models.Merchant.findOne({
      where: { appId, merchantId },
      attributes: { exclude: PERSONAL_DATA },
    });
    return m && recordOf(m);
  }

  /** The merchant with its personal data opened. */
  async findWithPersonalData(appId: string, merchantId: string): Promise<MerchantWithPersonalData | null> {
    const m = await this.models.Merchant.findOne({ where: { appId, merchantId } });
    return m && this.withPersonalData(m);
  }

  /** Newest first, personal data opened; `status` filters exactly (undefined: every status). */
  async list(
    appId: string,
    filter: { status?: string },
    page: { limit: number; offset: number },
  ): Promise<MerchantWithPersonalData[]> {
    if (page.limit === 0) return [];
    const where: WhereOptions = { appId };
    if (filter.status !== undefined) Object.assign(where, { status: filter.status });
    const rows = await this.models.Merchant.findAll({
      where,
      order: [
        ['createdAt', 'DESC'],
        ['merchantId', 'DESC'],
      ],
      limit: page.limit,
      offset: page.offset,
    });
    return rows.map((m) => this.withPersonalData(m));
  }

  /**
   * Merchants of every app without their personal data, newest first by (created_at, app_id,
   * merchant_id), a keyset page at a time; a position's key is `app_id:merchant_id` (neither
   * holds a `:`).
   */
  async search(filter: MerchantSearch, page: KeysetPage): Promise<KeysetResult<MerchantRecord>> {
    const split = page.after?.key.indexOf(':') ?? -1;
    const where = new SearchConditions({ limit: page.limit + 1 })
      .equals('m.merchant_id', 'merchantId', filter.merchantId)
      .equals('m.status', 'status', filter.status)
      .equals('m.app_id', 'appId', filter.appId)
      .after(
        'm.created_at',
        [
          {
            column: 'm.app_id',
            value: split < 0 ? (page.after?.key ?? '') : page.after!.key.slice(0, split),
          },
          { column: 'm.merchant_id', value: split < 0 ? '' : page.after!.key.slice(split + 1) },
        ],
        page.after?.at,
      );
    const rows = await this.db.sequelize.query(
      `SELECT m.app_id, m.merchant_id, m.merchant_name, m.license_no, m.status, m.channel_code,
              m.sub_merchant_no, m.profit_sharing, m.created_at, m.updated_at,
              ${keysetAt('m.created_at')} AS cursor_at
         FROM merchants m ${where.sql()}
        ORDER BY m.created_at DESC, m.app_id DESC, m.merchant_id DESC LIMIT :limit`,
      { replacements: where.replacements, model: this.models.Merchant, mapToModel: true },
    );
    const found = keysetPageOf(rows, page.limit, (m) => ({
      at: m.get('cursor_at') as string,
      key: `${m.appId}:${m.merchantId}`,
    }));
    return { rows: found.rows.map(recordOf), next: found.next };
  }

  /** Every app's merchant of this id, without personal data (merchant ids are unique per app only). */
  async findInEveryApp(merchantId: string): Promise<MerchantRecord[]> {
    const rows = await this.models.Merchant.findAll({
      where: { merchantId },
      attributes: { exclude: PERSONAL_DATA },
      order: [['appId', 'ASC']],
    });
    return rows.map(recordOf);
  }

  /**
   * Moves a merchant to `status` (with channel_code / sub_merchant_no when given), only from
   * the states in `change.from` when given. Touches updated_at only when something changes.
   * Returns whether the row changed.
   */
  async setStatus(
    appId: string,
    merchantId: string,
    status: MerchantStatus,
    change: MerchantStatusChange = {},
  ): Promise<boolean> {
    const sets = ['status = :status'];
    const differs = ['status IS DISTINCT FROM :status'];
    if (change.channelCode !== undefined) {
      sets.push('channel_code = :channelCode');
      differs.push('channel_code IS DISTINCT FROM :channelCode');
    }
    if (change.subMerchantNo !== undefined) {
      sets.push('sub_merchant_no = :subMerchantNo');
      differs.push('sub_merchant_no IS DISTINCT FROM :subMerchantNo');
    }
    const from = change.from ? 'AND status IN (:from)' : '';
    if (change.from && change.from.length === 0) return false;
    const rows = await this.db.sequelize.query<{ merchant_id: string }>(
      `UPDATE merchants SET ${sets.join(', ')}, updated_at = now()
        WHERE app_id = :appId AND merchant_id = :merchantId ${from} AND (${differs.join(' OR ')})
        RETURNING merchant_id`,
      {
        replacements: {
          appId,
          merchantId,
          status,
          channelCode: change.channelCode ?? null,
          subMerchantNo: change.subMerchantNo ?? null,
          from: change.from ?? [],
        },
        type: QueryTypes.SELECT,
      },
    );
    return rows.length > 0;
  }

  /** An application was submitted: created or rejected → auditing. */
  async markAuditing(appId: string, merchantId: string): Promise<boolean> {
    return this.setStatus(appId, merchantId, 'auditing', { from: ['created', 'rejected'] });
  }

  /** An application finished: → active at this channel with its sub-merchant number. */
  async markActive(
    appId: string,
    merchantId: string,
    channelCode: string,
    subMerchantNo: string | null,
  ): Promise<boolean> {
    return this.setStatus(appId, merchantId, 'active', { channelCode, subMerchantNo });
  }

  /** An application was rejected: auditing → rejected (an active merchant stays active). */
  async markRejected(appId: string, merchantId: string): Promise<boolean> {
    return this.setStatus(appId, merchantId, 'rejected', { from: ['auditing'] });
  }

  /** Records an upload (not its content); a repeated record of the same file_id is a no-op. */
  async recordFile(f: NewMerchantFile): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO merchant_files (channel_code, file_id, app_id, media_type, size, sha256, file_name, created_at)
       VALUES (:channelCode, :fileId, :appId, :mediaType, :size, :sha256, :fileName, now())
       ON CONFLICT (channel_code, file_id) DO NOTHING`,
      { replacements: { ...f } },
    );
  }

  /**
   * Which app uploaded each of `fileIds` at this channel (file ids unknown to durapay are
   * absent), so that an application can be checked to name only its own app's files.
   */
  async fileOwners(channelCode: string, fileIds: readonly string[]): Promise<Map<string, string>> {
    if (fileIds.length === 0) return new Map();
    const rows = await this.models.MerchantFile.findAll({
      where: { channelCode, fileId: { [Op.in]: [...new Set(fileIds)] } },
      attributes: ['fileId', 'appId'],
    });
    return new Map(rows.map((r) => [r.fileId, r.appId]));
  }

  /**
   * Seals the personal data of merchants that still hold it in plain text (written before it
   * was sealed), and with `rotate` also what an older key sealed, with the current key; returns
   * how many merchants it sealed. In batches, each a short transaction that locks only its rows
   * and checks them again under the lock, so that writers running meanwhile are neither lost
   * nor overwritten; a second run finds nothing to do.
   */
  async sealLegacy(options: { rotate: boolean; batchSize: number }): Promise<number> {
    if (!this.keyring) throw new Error('sealing merchants needs the payload keys');
    const prefix = sealedPrefix(this.keyring, options.rotate);
    let after = { appId: '', merchantId: '' };
    let sealed = 0;
    for (;;) {
      // The cursor moves on with every batch, so the run ends even while rows keep changing.
      const keys = await this.db.sequelize.query<{ app_id: string; merchant_id: string }>(
        `SELECT app_id, merchant_id FROM merchants
          WHERE (app_id, merchant_id) > (:appId, :merchantId) AND ${NEEDS_SEALING}
          ORDER BY app_id, merchant_id LIMIT :limit`,
        { replacements: { ...after, prefix, limit: options.batchSize }, type: QueryTypes.SELECT },
      );
      if (keys.length === 0) return sealed;
      const last = keys[keys.length - 1]!;
      after = { appId: last.app_id, merchantId: last.merchant_id };
      sealed += await this.db.sequelize.transaction(async (transaction) => {
        const rows = await this.db.sequelize.query<{
          app_id: string;
          merchant_id: string;
          legal_person: string | null;
          bank_account: string | null;
        }>(
          `SELECT app_id, merchant_id, legal_person, bank_account FROM merchants
            WHERE (app_id, merchant_id) IN (:keys) AND ${NEEDS_SEALING}
            ORDER BY app_id, merchant_id FOR UPDATE`,
          {
            replacements: { keys: keys.map((k) => [k.app_id, k.merchant_id]), prefix },
            type: QueryTypes.SELECT,
            transaction,
          },
        );
        for (const row of rows) {
          const key = rowKey(row.app_id, row.merchant_id);
          const legalPerson = this.legalPerson.reseal(row.legal_person, key, options.rotate);
          const bankAccount = this.bankAccount.reseal(row.bank_account, key, options.rotate);
          await this.db.sequelize.query(
            `UPDATE merchants SET legal_person = :legalPerson, bank_account = :bankAccount
              WHERE app_id = :appId AND merchant_id = :merchantId`,
            {
              replacements: {
                appId: row.app_id,
                merchantId: row.merchant_id,
                legalPerson: legalPerson === undefined ? row.legal_person : legalPerson,
                bankAccount: bankAccount === undefined ? row.bank_account : bankAccount,
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

/**
 * Merchants holding a value sealed with `keyId`, and their channel accounts' tokens (`durapay
 * keys retire` refuses while any do).
 */
export async function merchantsSealedWith(db: Database, keyId: string): Promise<number> {
  return (await personalDataSealedWith(db, keyId)) + (await accountsSealedWith(db, keyId));
}

async function personalDataSealedWith(db: Database, keyId: string): Promise<number> {
  const [row] = await db.sequelize.query<{ n: string }>(
    `SELECT count(*) AS n FROM merchants
      WHERE starts_with(legal_person, :prefix) OR starts_with(bank_account, :prefix)`,
    { replacements: { prefix: `${SEALED_FIELD_PREFIX}${keyId}:` }, type: QueryTypes.SELECT },
  );
  return Number(row?.n ?? 0);
}

/**
 * `durapay keys reseal` and the migration step: see MerchantRepository.sealLegacy, and the
 * channel accounts' tokens (ChannelAccountRepository.sealLegacy). Answers the merchants sealed
 * and the accounts sealed, together.
 */
export async function sealLegacyMerchantData(
  db: Database,
  keyring: Keyring,
  options: { rotate?: boolean; batchSize?: number } = {},
): Promise<number> {
  const how = { rotate: options.rotate ?? false, batchSize: options.batchSize ?? 200 };
  const merchants = await new MerchantRepository(db, keyring).sealLegacy(how);
  return merchants + (await new ChannelAccountRepository(db, keyring).sealLegacy(how));
}
