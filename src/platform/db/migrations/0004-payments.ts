import { DataTypes } from 'sequelize';
import type { Migration } from '.';

export const payments: Migration = {
  name: '0004-payments',
  async up({ context: qi }) {
    await qi.createTable('orders', {
      trade_no: { type: DataTypes.STRING(32), primaryKey: true },
      app_id: { type: DataTypes.STRING(32), allowNull: false, references: { model: 'apps', key: 'app_id' } },
      merchant_order_no: { type: DataTypes.STRING(64), allowNull: false },
      merchant_id: { type: DataTypes.STRING(64) },
      channel_code: { type: DataTypes.STRING(32), allowNull: false },
      pay_method: { type: DataTypes.STRING(32), allowNull: false },
      amount: { type: DataTypes.BIGINT, allowNull: false },
      currency: { type: DataTypes.STRING(3), allowNull: false },
      subject: { type: DataTypes.STRING(128), allowNull: false },
      notify_url: { type: DataTypes.STRING(512), allowNull: false },
      status: { type: DataTypes.STRING(24), allowNull: false },
      channel_trade_no: { type: DataTypes.STRING(64) },
      pay_credential: { type: DataTypes.JSONB, allowNull: false },
      pay_time: { type: DataTypes.DATE },
      expire_time: { type: DataTypes.DATE, allowNull: false },
      closed_at: { type: DataTypes.DATE },
      refunded_amount: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      profit_sharing_amount: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      profit_sharing_status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'none' },
      // Paid at the channel after durapay closed it: recorded, and flagged for an operator to refund.
      needs_refund_review: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      extra: { type: DataTypes.JSONB },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.sequelize.query(
      `ALTER TABLE orders ADD CONSTRAINT orders_status_check
         CHECK (status IN ('pending', 'paid', 'partially_refunded', 'refunded', 'closed'))`,
    );
    await qi.addIndex('orders', ['app_id', 'merchant_order_no'], {
      unique: true,
      name: 'orders_app_merchant_order_no',
    });

    await qi.createTable('refunds', {
      refund_no: { type: DataTypes.STRING(32), primaryKey: true },
      app_id: { type: DataTypes.STRING(32), allowNull: false },
      trade_no: {
        type: DataTypes.STRING(32),
        allowNull: false,
        references: { model: 'orders', key: 'trade_no' },
      },
      merchant_refund_no: { type: DataTypes.STRING(64) },
      refund_amount: { type: DataTypes.BIGINT, allowNull: false },
      reason: { type: DataTypes.STRING(256) },
      notify_url: { type: DataTypes.STRING(512) },
      status: { type: DataTypes.STRING(16), allowNull: false },
      channel_refund_no: { type: DataTypes.STRING(64) },
      refund_time: { type: DataTypes.DATE },
      fail_reason: { type: DataTypes.TEXT },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.sequelize.query(
      `ALTER TABLE refunds ADD CONSTRAINT refunds_status_check CHECK (status IN ('processing', 'success', 'failed'))`,
    );
    await qi.sequelize.query(
      `CREATE UNIQUE INDEX refunds_app_merchant_refund_no ON refunds (app_id, merchant_refund_no)
         WHERE merchant_refund_no IS NOT NULL`,
    );
    await qi.addIndex('refunds', ['trade_no'], { name: 'refunds_trade_no' });

    // Every callback as received, verified or not, before it is acknowledged.
    await qi.createTable('channel_callbacks', {
      id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
      channel_code: { type: DataTypes.STRING(32), allowNull: false },
      channel_event_id: { type: DataTypes.STRING(128) },
      received_at: { type: DataTypes.DATE, allowNull: false },
      headers: { type: DataTypes.JSONB, allowNull: false },
      raw_body: { type: DataTypes.TEXT, allowNull: false },
      verified: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      outcome: { type: DataTypes.STRING(32), allowNull: false },
      error: { type: DataTypes.TEXT },
      trade_no: { type: DataTypes.STRING(32) },
      refund_no: { type: DataTypes.STRING(32) },
    });
    await qi.addIndex('channel_callbacks', ['channel_code', 'channel_event_id'], {
      name: 'channel_callbacks_event',
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('channel_callbacks');
    await qi.dropTable('refunds');
    await qi.dropTable('orders');
  },
};
