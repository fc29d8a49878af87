import { DataTypes, Model, type Sequelize } from 'sequelize';
import { modelsFor } from '../../platform/db';
import type { RefundStatus } from './rules';

export class Refund extends Model {
  declare refundNo: string;
  declare appId: string;
  declare tradeNo: string;
  declare merchantRefundNo: string | null;
  declare refundAmount: string;
  declare reason: string | null;
  declare notifyUrl: string | null;
  declare status: RefundStatus;
  declare channelRefundNo: string | null;
  declare refundTime: Date | null;
  declare failReason: string | null;
  declare createdAt: Date;
  declare updatedAt: Date;
}

function initRefunds(sequelize: Sequelize): { Refund: typeof Refund } {
  class BoundRefund extends Refund {}
  BoundRefund.init(
    {
      refundNo: { type: DataTypes.STRING(32), primaryKey: true },
      appId: { type: DataTypes.STRING(32), allowNull: false },
      tradeNo: { type: DataTypes.STRING(32), allowNull: false },
      merchantRefundNo: { type: DataTypes.STRING(64) },
      refundAmount: { type: DataTypes.BIGINT, allowNull: false },
      reason: { type: DataTypes.STRING(256) },
      notifyUrl: { type: DataTypes.STRING(512) },
      status: { type: DataTypes.STRING(16), allowNull: false },
      channelRefundNo: { type: DataTypes.STRING(64) },
      refundTime: { type: DataTypes.DATE },
      failReason: { type: DataTypes.TEXT },
      createdAt: { type: DataTypes.DATE, allowNull: false },
      updatedAt: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'refunds', timestamps: true, modelName: 'Refund' },
  );
  return { Refund: BoundRefund };
}

/** This module's models bound to this connection. */
export const refundModels = (sequelize: Sequelize) => modelsFor(sequelize, initRefunds);
