import { DataTypes } from 'sequelize';
import type { Migration } from '.';

/**
 * Merchants, their uploaded files and their onboarding applications (SPEC §5). Every table is
 * keyed by the owning app: another app's merchants, files and applications do not exist for it.
 */
export const merchants: Migration = {
  name: '0006-merchants',
  async up({ context: qi }) {
    await qi.createTable('merchants', {
      app_id: {
        type: DataTypes.STRING(32),
        primaryKey: true,
        references: { model: 'apps', key: 'app_id' },
      },
      // The client's own id: unique per app, so two apps may use the same one.
      merchant_id: { type: DataTypes.STRING(64), primaryKey: true },
      merchant_name: { type: DataTypes.STRING(128), allowNull: false },
      license_no: { type: DataTypes.STRING(64) },
      legal_person: { type: DataTypes.STRING(64) },
      // Stored whole (the channel needs it for onboarding); get and list show it masked.
      bank_account: { type: DataTypes.STRING(64) },
      status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'created' },
      // Set when an application finishes: the channel it was approved at, and its sub-merchant.
      channel_code: { type: DataTypes.STRING(32) },
      sub_merchant_no: { type: DataTypes.STRING(64) },
      // {"receivers": [{type, account, name?, weight}], "max_ratio"} as the client gave it.
      profit_sharing: { type: DataTypes.JSONB },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.sequelize.query(
      `ALTER TABLE merchants ADD CONSTRAINT merchants_status_check
         CHECK (status IN ('created', 'auditing', 'active', 'rejected'))`,
    );
    await qi.addIndex('merchants', ['app_id', 'created_at'], { name: 'merchants_app_created' });
    await qi.addIndex('merchants', ['app_id', 'status', 'created_at'], {
      name: 'merchants_app_status_created',
    });

    // A record of each upload (never its content).
    await qi.createTable('merchant_files', {
      channel_code: { type: DataTypes.STRING(32), primaryKey: true },
      // Assigned by the channel; unique per channel.
      file_id: { type: DataTypes.STRING(128), primaryKey: true },
      app_id: {
        type: DataTypes.STRING(32),
        allowNull: false,
        references: { model: 'apps', key: 'app_id' },
      },
      media_type: { type: DataTypes.STRING(32), allowNull: false },
      size: { type: DataTypes.BIGINT, allowNull: false },
      sha256: { type: DataTypes.CHAR(64), allowNull: false },
      // The base name forwarded to the channel.
      file_name: { type: DataTypes.STRING(255), allowNull: false },
      created_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.addIndex('merchant_files', ['app_id', 'created_at'], { name: 'merchant_files_app_created' });

    await qi.createTable('merchant_applications', {
      application_id: { type: DataTypes.STRING(40), primaryKey: true },
      app_id: { type: DataTypes.STRING(32), allowNull: false },
      merchant_id: { type: DataTypes.STRING(64), allowNull: false },
      channel_code: { type: DataTypes.STRING(32), allowNull: false },
      status: { type: DataTypes.STRING(24), allowNull: false },
      channel_application_no: { type: DataTypes.STRING(64) },
      sub_merchant_no: { type: DataTypes.STRING(64) },
      sign_url: { type: DataTypes.TEXT },
      reject_reason: { type: DataTypes.TEXT },
      audit_detail: { type: DataTypes.JSONB },
      submit_data: { type: DataTypes.JSONB },
      notify_url: { type: DataTypes.STRING(512) },
      // The channel's latest answer as received, for an operator.
      channel_last_answer: { type: DataTypes.JSONB },
      submitted_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
      finished_at: { type: DataTypes.DATE },
    });
    await qi.sequelize.query(
      `ALTER TABLE merchant_applications ADD CONSTRAINT merchant_applications_status_check
         CHECK (status IN ('submitted', 'auditing', 'to_be_confirmed', 'to_be_signed', 'finished', 'rejected', 'canceled'))`,
    );
    await qi.sequelize.query(
      `ALTER TABLE merchant_applications ADD CONSTRAINT merchant_applications_merchant_fkey
         FOREIGN KEY (app_id, merchant_id) REFERENCES merchants (app_id, merchant_id)`,
    );
    await qi.addIndex('merchant_applications', ['app_id', 'merchant_id', 'submitted_at'], {
      name: 'merchant_applications_merchant_submitted',
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('merchant_applications');
    await qi.dropTable('merchant_files');
    await qi.dropTable('merchants');
  },
};
