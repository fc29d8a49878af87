import { DataTypes, Model, type Sequelize } from 'sequelize';
import { modelsFor } from '../../platform/db';
import type { OrderStatus, ProfitSharingStatus } from './rules';

export class Order extends Model {
  declare tradeNo: string;
  declare appId: string;
  declare merchantOrderNo: string;
  declare merchantId: string | null;
  declare subMerchantNo: string | null;
  /** BIGINT: comes back as a string. */
  declare channelAccountId: string | null;
  /** Null for a `checkout` order until its buyer picks a channel on the page (SPEC §15). */
  declare channelCode: string | null;
  /** A `checkout` order's way of paying at its channel once picked (`jsapi`, `h5`); null otherwise. */
  declare channelPayMethod: string | null;
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
  declare profitSharedAmount: string;
  declare profitReturnedAmount: string;
  declare needsRefundReview: boolean;
  /** A barcode order's (SPEC §14): its code's hash, its till and shop, why it closed. */
  declare authCodeSha256: string | null;
  declare deviceId: string | null;
  declare storeId: string | null;
  declare paymentLinkId: string | null;
  declare standingCodeId: string | null;
  declare buyerNote: string | null;
  declare closeReason: 'refused' | 'reversed' | null;
  declare extra: Record<string, unknown> | null;
  declare createdAt: Date;
  declare updatedAt: Date;
}

function initOrders(sequelize: Sequelize): { Order: typeof Order } {
  class BoundOrder extends Order {}
  BoundOrder.init(
    {
      tradeNo: { type: DataTypes.STRING(32), primaryKey: true },
      appId: { type: DataTypes.STRING(32), allowNull: false },
      merchantOrderNo: { type: DataTypes.STRING(64), allowNull: false },
      merchantId: { type: DataTypes.STRING(64) },
      subMerchantNo: { type: DataTypes.STRING(64) },
      channelAccountId: { type: DataTypes.BIGINT },
      channelCode: { type: DataTypes.STRING(32) },
      channelPayMethod: { type: DataTypes.STRING(32) },
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
      profitSharedAmount: { type: DataTypes.BIGINT, allowNull: false },
      profitReturnedAmount: { type: DataTypes.BIGINT, allowNull: false },
      needsRefundReview: { type: DataTypes.BOOLEAN, allowNull: false },
      authCodeSha256: { type: DataTypes.STRING(64) },
      deviceId: { type: DataTypes.STRING(64) },
      storeId: { type: DataTypes.STRING(64) },
      paymentLinkId: { type: DataTypes.STRING(32) },
      standingCodeId: { type: DataTypes.STRING(32) },
      buyerNote: { type: DataTypes.STRING(64) },
      closeReason: { type: DataTypes.STRING(16) },
      extra: { type: DataTypes.JSONB },
      createdAt: { type: DataTypes.DATE, allowNull: false },
      updatedAt: { type: DataTypes.DATE, allowNull: false },
    },
    { sequelize, tableName: 'orders', timestamps: true, modelName: 'Order' },
  );
  return { Order: BoundOrder };
}

/** This module's models bound to this connection. */
export const orderModels = (sequelize: Sequelize) => modelsFor(sequelize, initOrders);
