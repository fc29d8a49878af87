import { Op, QueryTypes, UniqueConstraintError, type WhereOptions } from 'sequelize';
import type { MerchantProfitSharing, MerchantStatus } from './rules';
import type { Database } from '../../platform/db';
import { merchantModels, type Merchant } from './model';

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

/**
 * Merchants (SPEC §5.1–5.4) and the record of their uploads (§5.5). Every read and write names
 * the owning app: another app's merchant is simply not found.
 */
export class MerchantRepository {
  constructor(private readonly db: Database) {}

  private get models() {
    return merchantModels(this.db.sequelize);
  }

  /** Creates a merchant in status `created`; throws MerchantExistsError on a duplicate id. */
  async create(m: NewMerchant): Promise<Merchant> {
    try {
      return await this.models.Merchant.create({ ...m, status: 'created' });
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw new MerchantExistsError(m.merchantId);
      throw err;
    }
  }

  async find(appId: string, merchantId: string): Promise<Merchant | null> {
    return this.models.Merchant.findOne({ where: { appId, merchantId } });
  }

  /** Newest first; `status` filters exactly (undefined: every status). */
  async list(
    appId: string,
    filter: { status?: string },
    page: { limit: number; offset: number },
  ): Promise<Merchant[]> {
    if (page.limit === 0) return [];
    const where: WhereOptions = { appId };
    if (filter.status !== undefined) Object.assign(where, { status: filter.status });
    return this.models.Merchant.findAll({
      where,
      order: [
        ['createdAt', 'DESC'],
        ['merchantId', 'DESC'],
      ],
      limit: page.limit,
      offset: page.offset,
    });
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
}
