import type { Migration } from '../../src/platform/db/migrate';

/**
 * What the sandbox channel needs to settle refunds and profit sharing against each other, as the
 * real channels do: returns of a share (分账回退) and unfreezes of what a payment froze for
 * sharing, each in a table of its own keyed by durapay's number (so that a repeat is the same
 * object, and tests can count them); and abnormal refunds (WeChat Pay's ABNORMAL), which end
 * `abnormal` and wait to be paid to a bank card instead.
 */
export const returnsUnfreezesAbnormal: Migration = {
  name: '0003-returns-unfreezes-abnormal',
  async up({ context: qi }) {
    const sql = (text: string) => qi.sequelize.query(text);

    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_share_returns (
        return_no VARCHAR(64) PRIMARY KEY,
        channel_return_no VARCHAR(64) NOT NULL UNIQUE,
        share_no VARCHAR(64) NOT NULL REFERENCES sandbox_profit_shares (share_no),
        trade_no VARCHAR(64) NOT NULL REFERENCES sandbox_orders (trade_no),
        receiver_type VARCHAR(32) NOT NULL,
        receiver_account VARCHAR(128) NOT NULL,
        amount BIGINT NOT NULL,
        description VARCHAR(256) NOT NULL,
        status VARCHAR(16) NOT NULL,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT sandbox_share_returns_status_check CHECK (status IN ('success'))
      )`);
    await sql(
      'CREATE INDEX IF NOT EXISTS sandbox_share_returns_share_no ON sandbox_share_returns (share_no)',
    );

    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_unfreezes (
        unfreeze_no VARCHAR(64) PRIMARY KEY,
        channel_unfreeze_no VARCHAR(64) NOT NULL UNIQUE,
        trade_no VARCHAR(64) NOT NULL UNIQUE REFERENCES sandbox_orders (trade_no),
        description VARCHAR(256) NOT NULL,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL
      )`);

    // `abnormal`: "[sandbox:abnormal]" in the reason; applying for it (a bank card) makes it
    // processing again, to end in success.
    await sql('ALTER TABLE sandbox_refunds DROP CONSTRAINT IF EXISTS sandbox_refunds_status_check');
    await sql(`ALTER TABLE sandbox_refunds ADD CONSTRAINT sandbox_refunds_status_check
                 CHECK (status IN ('processing', 'success', 'failed', 'abnormal'))`);
    await sql('ALTER TABLE sandbox_refunds DROP CONSTRAINT IF EXISTS sandbox_refunds_outcome_check');
    await sql(`ALTER TABLE sandbox_refunds ADD CONSTRAINT sandbox_refunds_outcome_check
                 CHECK (outcome IN ('success', 'failed', 'abnormal'))`);
    await sql('ALTER TABLE sandbox_refunds ADD COLUMN IF NOT EXISTS abnormal_method VARCHAR(32)');
    await sql(
      'ALTER TABLE sandbox_refunds ADD COLUMN IF NOT EXISTS abnormal_applied_at TIMESTAMP WITH TIME ZONE',
    );
  },
  async down({ context: qi }) {
    const sql = (text: string) => qi.sequelize.query(text);
    await sql('ALTER TABLE sandbox_refunds DROP COLUMN IF EXISTS abnormal_applied_at');
    await sql('ALTER TABLE sandbox_refunds DROP COLUMN IF EXISTS abnormal_method');
    await sql(`UPDATE sandbox_refunds SET status = 'failed' WHERE status = 'abnormal'`);
    await sql(`UPDATE sandbox_refunds SET outcome = 'failed' WHERE outcome = 'abnormal'`);
    await sql('ALTER TABLE sandbox_refunds DROP CONSTRAINT IF EXISTS sandbox_refunds_outcome_check');
    await sql(`ALTER TABLE sandbox_refunds ADD CONSTRAINT sandbox_refunds_outcome_check
                 CHECK (outcome IN ('success', 'failed'))`);
    await sql('ALTER TABLE sandbox_refunds DROP CONSTRAINT IF EXISTS sandbox_refunds_status_check');
    await sql(`ALTER TABLE sandbox_refunds ADD CONSTRAINT sandbox_refunds_status_check
                 CHECK (status IN ('processing', 'success', 'failed'))`);
    await sql('DROP TABLE IF EXISTS sandbox_unfreezes, sandbox_share_returns');
  },
};
