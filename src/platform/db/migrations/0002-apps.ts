import { DataTypes } from 'sequelize';
import type { Migration } from '.';

export const apps: Migration = {
  name: '0002-apps',
  async up({ context: qi }) {
    await qi.createTable('apps', {
      app_id: { type: DataTypes.STRING(32), primaryKey: true },
      name: { type: DataTypes.STRING(128), allowNull: false },
      // AES-256-GCM ciphertexts (see SecretBox); the plaintext is never stored.
      secret_ciphertext: { type: DataTypes.TEXT, allowNull: false },
      webhook_secret_ciphertext: { type: DataTypes.TEXT, allowNull: false },
      scopes: { type: DataTypes.ARRAY(DataTypes.STRING(32)), allowNull: false },
      status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
      created_at: { type: DataTypes.DATE, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.sequelize.query(
      `ALTER TABLE apps ADD CONSTRAINT apps_status_check CHECK (status IN ('active', 'disabled'))`,
    );

    // A nonce is accepted once per app; rows live as long as the replay window (10 minutes).
    await qi.createTable('request_nonces', {
      app_id: { type: DataTypes.STRING(32), primaryKey: true },
      nonce: { type: DataTypes.STRING(128), primaryKey: true },
      expires_at: { type: DataTypes.DATE, allowNull: false },
    });
    await qi.addIndex('request_nonces', ['expires_at']);

    // One token bucket per app, shared by every API process.
    await qi.createTable('rate_limit_buckets', {
      app_id: { type: DataTypes.STRING(32), primaryKey: true },
      tokens: { type: DataTypes.DOUBLE, allowNull: false },
      // Whether the last request took a token: lets one statement both refill and answer.
      allowed: { type: DataTypes.BOOLEAN, allowNull: false },
      updated_at: { type: DataTypes.DATE, allowNull: false },
    });
  },
  async down({ context: qi }) {
    await qi.dropTable('rate_limit_buckets');
    await qi.dropTable('request_nonces');
    await qi.dropTable('apps');
  },
};
