import type { Migration } from '.';

export const payloadKeys: Migration = {
  name: '0011-payload-keys',
  async up({ context: qi }) {
    // Every payload key that has sealed something (Temporal payloads, applicant data): a process
    // that starts without one of them refuses to, naming it, instead of failing later on the
    // first history or row it cannot open (platform/crypto/key-registry.ts). Ids only, never keys.
    await qi.sequelize.query(`
      CREATE TABLE payload_keys (
        key_id varchar(32) PRIMARY KEY,
        -- HMAC-SHA256 of a constant under the key: tells a different key under the same id.
        check_value char(64) NOT NULL,
        first_used_at timestamptz NOT NULL DEFAULT now(),
        retired_at timestamptz
      )`);
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE payload_keys');
  },
};
