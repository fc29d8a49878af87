import { DataTypes, Model, type Sequelize } from 'sequelize';
import { modelsFor } from '../../platform/db';
import type { MerchantProfitSharing, MerchantStatus } from './rules';

/** Column types of `merchants` (migration 0006); keyed by (appId, merchantId). */
export class Merchant extends Model {
  declare appId: string;
  declare merchantId: string;
  declare merchantName: string;
  declare licenseNo: string | null;
  /** Sealed (or, in a row written before it was sealed, plain text): MerchantRepository opens it. */
  declare legalPerson: string | null;
  /** The whole account, sealed like legalPerson; merchantView masks it. */
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

export interface MerchantModels {
  Merchant: typeof Merchant;
  MerchantFile: typeof MerchantFile;
}

/** Binds the merchant models to this Sequelize instance only (see initApp). */
export function initMerchants(sequelize: Sequelize): MerchantModels {
  class BoundMerchant extends Merchant {}
  class BoundMerchantFile extends MerchantFile {}
  BoundMerchant.init(
    {
      appId: { type: DataTypes.STRING(32), primaryKey: true },
      merchantId: { type: DataTypes.STRING(64), primaryKey: true },
      merchantName: { type: DataTypes.STRING(128), allowNull: false },
      licenseNo: { type: DataTypes.STRING(64) },
      legalPerson: { type: DataTypes.TEXT },
      bankAccount: { type: DataTypes.TEXT },
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
  return {
    Merchant: BoundMerchant,
    MerchantFile: BoundMerchantFile,
  };
}

/** This module's models bound to this connection. */
export const merchantModels = (sequelize: Sequelize) => modelsFor(sequelize, initMerchants);
