import { DataTypes, Model, type Sequelize } from 'sequelize';
import type { ApplicationStatus } from '../../channels/types';
import type { MerchantProfitSharing, MerchantStatus } from '../../domain/merchants';

/** Column types of `merchants` (migration 0006); keyed by (appId, merchantId). */
export class Merchant extends Model {
  declare appId: string;
  declare merchantId: string;
  declare merchantName: string;
  declare licenseNo: string | null;
  declare legalPerson: string | null;
  /** The whole account; merchantView masks it. */
  declare bankAccount: string | null;
  declare status: MerchantStatus;
  declare channelCode: string | null;
  declare subMerchantNo: string | null;
  declare profitSharing: MerchantProfitSharing | null;
  declare createdAt: Date;
  declare updatedAt: Date;
}

/** Column types of `merchant_files`: the record of an upload, not its content. */
export class MerchantFile extends Model {
  declare channelCode: string;
  declare fileId: string;
  declare appId: string;
  declare mediaType: string;
  declare size: string; // BIGINT comes back as a string
  declare sha256: string;
  declare fileName: string;
  declare createdAt: Date;
}

/** Column types of `merchant_applications`. */
export class MerchantApplication extends Model {
  declare applicationId: string;
  declare appId: string;
  declare merchantId: string;
  declare channelCode: string;
  declare status: ApplicationStatus;
  declare channelApplicationNo: string | null;
  declare subMerchantNo: string | null;
  declare signUrl: string | null;
  declare rejectReason: string | null;
  declare auditDetail: Record<string, unknown> | null;
  declare submitData: Record<string, unknown> | null;
  declare notifyUrl: string | null;
  declare channelLastAnswer: Record<string, unknown> | null;
  declare submittedAt: Date;
  declare updatedAt: Date;
  declare finishedAt: Date | null;
}

export interface MerchantModels {
  Merchant: typeof Merchant;
  MerchantFile: typeof MerchantFile;
  MerchantApplication: typeof MerchantApplication;
}

/** Binds the merchant models to this Sequelize instance only (see initApp). */
export function initMerchants(sequelize: Sequelize): MerchantModels {
  class BoundMerchant extends Merchant {}
  class BoundMerchantFile extends MerchantFile {}
  class BoundMerchantApplication extends MerchantApplication {}
  BoundMerchant.init(
    {
      appId: { type: DataTypes.STRING(32), primaryKey: true },
      merchantId: { type: DataTypes.STRING(64), primaryKey: true },
      merchantName: { type: DataTypes.STRING(128), allowNull: false },
      licenseNo: { type: DataTypes.STRING(64) },
      legalPerson: { type: DataTypes.STRING(64) },
      bankAccount: { type: DataTypes.STRING(64) },
      status: { type: DataTypes.STRING(16), allowNull: false },
      channelCode: { type: DataTypes.STRING(32) },
      subMerchantNo: { type: DataTypes.STRING(64) },
      profitSharing: { type: DataTypes.JSONB },
      createdAt: { type: DataTypes.DATE, allowNull: false },
      updatedAt: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'merchants', timestamps: true, modelName: 'Merchant' },
  );
  BoundMerchantFile.init(
    {
      channelCode: { type: DataTypes.STRING(32), primaryKey: true },
      fileId: { type: DataTypes.STRING(128), primaryKey: true },
      appId: { type: DataTypes.STRING(32), allowNull: false },
      mediaType: { type: DataTypes.STRING(32), allowNull: false },
      size: { type: DataTypes.BIGINT, allowNull: false },
      sha256: { type: DataTypes.CHAR(64), allowNull: false },
      fileName: { type: DataTypes.STRING(255), allowNull: false },
      createdAt: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'merchant_files', timestamps: true, updatedAt: false, modelName: 'MerchantFile' },
  );
  BoundMerchantApplication.init(
    {
      applicationId: { type: DataTypes.STRING(40), primaryKey: true },
      appId: { type: DataTypes.STRING(32), allowNull: false },
      merchantId: { type: DataTypes.STRING(64), allowNull: false },
      channelCode: { type: DataTypes.STRING(32), allowNull: false },
      status: { type: DataTypes.STRING(24), allowNull: false },
      channelApplicationNo: { type: DataTypes.STRING(64) },
      subMerchantNo: { type: DataTypes.STRING(64) },
      signUrl: { type: DataTypes.TEXT },
      rejectReason: { type: DataTypes.TEXT },
      auditDetail: { type: DataTypes.JSONB },
      submitData: { type: DataTypes.JSONB },
      notifyUrl: { type: DataTypes.STRING(512) },
      channelLastAnswer: { type: DataTypes.JSONB },
      submittedAt: { type: DataTypes.DATE, allowNull: false },
      updatedAt: { type: DataTypes.DATE, allowNull: false },
      finishedAt: { type: DataTypes.DATE },
    },
    {
      sequelize,
      tableName: 'merchant_applications',
      timestamps: true,
      createdAt: 'submittedAt',
      modelName: 'MerchantApplication',
    },
  );
  return {
    Merchant: BoundMerchant,
    MerchantFile: BoundMerchantFile,
    MerchantApplication: BoundMerchantApplication,
  };
}
