import { DataTypes, Model, type Sequelize } from 'sequelize';
import type { OrderStatus, ProfitSharingStatus, RefundStatus } from '../../domain/orders';

export class Order extends Model {
  declare tradeNo: string;
  declare appId: string;
  declare merchantOrderNo: string;
  declare merchantId: string | null;
  declare channelCode: string;
  declare payMethod: string;
  declare amount: string; // BIGINT comes back as a string
  declare currency: string;
  declare subject: string;
  declare notifyUrl: string;
  declare status: OrderStatus;
  declare channelTradeNo: string | null;
  declare payCredential: Record<string, unknown>;
  declare payTime: Date | null;
  declare expireTime: Date;
  declare closedAt: Date | null;
  declare refundedAmount: string;
  declare profitSharingAmount: string;
  declare profitSharingStatus: ProfitSharingStatus;
  declare needsRefundReview: boolean;
  declare extra: Record<string, unknown> | null;
  declare createdAt: Date;
  declare updatedAt: Date;
}

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

export function initPayments(sequelize: Sequelize): { Order: typeof Order; Refund: typeof Refund } {
  class BoundOrder extends Order {}
  class BoundRefund extends Refund {}
  BoundOrder.init(
    {
      tradeNo: { type: DataTypes.STRING(32), primaryKey: true },
      appId: { type: DataTypes.STRING(32), allowNull: false },
      merchantOrderNo: { type: DataTypes.STRING(64), allowNull: false },
      merchantId: { type: DataTypes.STRING(64) },
      channelCode: { type: DataTypes.STRING(32), allowNull: false },
      payMethod: { type: DataTypes.STRING(32), allowNull: false },
      amount: { type: DataTypes.BIGINT, allowNull: false },
      currency: { type: DataTypes.STRING(3), allowNull: false },
      subject: { type: DataTypes.STRING(128), allowNull: false },
      notifyUrl: { type: DataTypes.STRING(512), allowNull: false },
      status: { type: DataTypes.STRING(24), allowNull: false },
      channelTradeNo: { type: DataTypes.STRING(64) },
      payCredential: { type: DataTypes.JSONB, allowNull: false },
      payTime: { type: DataTypes.DATE },
      expireTime: { type: DataTypes.DATE, allowNull: false },
      closedAt: { type: DataTypes.DATE },
      refundedAmount: { type: DataTypes.BIGINT, allowNull: false },
      profitSharingAmount: { type: DataTypes.BIGINT, allowNull: false },
      profitSharingStatus: { type: DataTypes.STRING(16), allowNull: false },
      needsRefundReview: { type: DataTypes.BOOLEAN, allowNull: false },
      extra: { type: DataTypes.JSONB },
      createdAt: { type: DataTypes.DATE, allowNull: false },
      updatedAt: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'orders', timestamps: true, modelName: 'Order' },
  );
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
  return { Order: BoundOrder, Refund: BoundRefund };
}
