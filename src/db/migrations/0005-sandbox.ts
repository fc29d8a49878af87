import { DataTypes } from 'sequelize';
import type { Migration } from './index';

/**
 * The sandbox channel's simulated upstream (SPEC §8). Its state lives in Postgres so that every
 * API process serving /sandbox sees the same orders, and they survive a restart. Each table is
 * keyed by durapay's own reference, which is what makes the simulator's endpoints idempotent.
 */
export const sandbox: Migration = {
  name: '0005-sandbox',
  async up({ context: qi }) {
    await qi.createTable('sandbox_orders', {
      trade_no: { type: DataTypes.STRING(64), primaryKey: true },
      channel_trade_no: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      amount: { type: DataTypes.BIGINT, allowNull: false },
      currency: { type: DataTypes.STRING(8), allowNull: false },
      pay_method: { type: DataTypes.STRING(32), allowNull: false },
      subject: { type: DataTypes.STRING(256), allowNull: false },
      expire_at: { type: DataTypes.DATE, allowNull: false },
      notify_url: { type: DataTypes.STRING(1024), allowNull: false },
      extra: { type: DataTypes.JSONB, allowNull: false },
      sub_merchant_no: { type: DataTypes.STRING(64) },
      profit_sharing: { type: DataTypes.BOOLEAN, allowNull: false },
      // extra.sandbox.callback, kept for the moment the buyer pays.
      callback_mode: { type: DataTypes.STRING(16), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      paid_at: { type: DataTypes.DATE },
      closed_at: { type: DataTypes.DATE },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.sequelize.query(
      `ALTER TABLE sandbox_orders ADD CONSTRAINT sandbox_orders_status_check CHECK (status IN ('pending', 'paid', 'closed'))`,
    );

    await qi.createTable('sandbox_refunds', {
      refund_no: { type: DataTypes.STRING(64), primaryKey: true },
      channel_refund_no: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      trade_no: {
        type: DataTypes.STRING(64),
        allowNull: false,
        references: { model: 'sandbox_orders', key: 'trade_no' },
      },
      amount: { type: DataTypes.BIGINT, allowNull: false },
      reason: { type: DataTypes.STRING(512) },
      notify_url: { type: DataTypes.STRING(1024), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      // Decided at creation ("[sandbox:fail]" in the reason), applied once settle_at has passed.
      outcome: { type: DataTypes.STRING(16), allowNull: false },
      settle_at: { type: DataTypes.DATE, allowNull: false },
      fail_reason: { type: DataTypes.STRING(256) },
      refunded_at: { type: DataTypes.DATE },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.sequelize.query(
      `ALTER TABLE sandbox_refunds ADD CONSTRAINT sandbox_refunds_status_check CHECK (status IN ('processing', 'success', 'failed'))`,
    );
    await qi.sequelize.query(
      `ALTER TABLE sandbox_refunds ADD CONSTRAINT sandbox_refunds_outcome_check CHECK (outcome IN ('success', 'failed'))`,
    );
    await qi.addIndex('sandbox_refunds', ['trade_no'], { name: 'sandbox_refunds_trade_no' });

    await qi.createTable('sandbox_profit_shares', {
      share_no: { type: DataTypes.STRING(64), primaryKey: true },
      trade_no: {
        type: DataTypes.STRING(64),
        allowNull: false,
        references: { model: 'sandbox_orders', key: 'trade_no' },
      },
      receivers: { type: DataTypes.JSONB, allowNull: false },
      amount: { type: DataTypes.BIGINT, allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.addIndex('sandbox_profit_shares', ['trade_no'], { name: 'sandbox_profit_shares_trade_no' });

    await qi.createTable('sandbox_files', {
      file_id: { type: DataTypes.STRING(64), primaryKey: true },
      file_name: { type: DataTypes.STRING(256), allowNull: false },
      media_type: { type: DataTypes.STRING(128), allowNull: false },
      size: { type: DataTypes.INTEGER, allowNull: false },
      sha256: { type: DataTypes.STRING(64), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });

    await qi.createTable('sandbox_applications', {
      application_id: { type: DataTypes.STRING(64), primaryKey: true },
      application_no: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      merchant: { type: DataTypes.JSONB, allowNull: false },
      submit_data: { type: DataTypes.JSONB, allowNull: false },
      // 'finish', 'reject' or 'sign' (submit_data.sandbox_outcome); fixes the audit's path.
      outcome: { type: DataTypes.STRING(16), allowNull: false },
      // How many polls the audit has advanced; the status is the path's entry at this step.
      step: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      status: { type: DataTypes.STRING(32), allowNull: false },
      sub_merchant_no: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.sequelize.query(
      `ALTER TABLE sandbox_applications ADD CONSTRAINT sandbox_applications_outcome_check CHECK (outcome IN ('finish', 'reject', 'sign'))`,
    );
  },
  async down({ context: qi }) {
    await qi.dropTable('sandbox_applications');
    await qi.dropTable('sandbox_files');
    await qi.dropTable('sandbox_profit_shares');
    await qi.dropTable('sandbox_refunds');
    await qi.dropTable('sandbox_orders');
  },
};
