import type { Migration } from '../../src/platform/db/migrate';

/**
 * The simulated channel's state (SPEC §8), in Postgres so that every process serving /sandbox
 * sees the same orders and they survive a restart. Each table is keyed by durapay's own
 * reference, which is what makes the simulator's endpoints idempotent.
 *
 * These tables were first created by the gateway's migration 0005-sandbox, now a no-op. On a
 * database it ran on they exist already, with the same columns and constraints, and every
 * statement here leaves them as they are (IF NOT EXISTS).
 */
export const channelTables: Migration = {
  name: '0001-channel-tables',
  async up({ context: qi }) {
    const sql = (text: string) => qi.sequelize.query(text);

    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_orders (
        trade_no VARCHAR(64) PRIMARY KEY,
        channel_trade_no VARCHAR(64) NOT NULL UNIQUE,
        amount BIGINT NOT NULL,
        currency VARCHAR(8) NOT NULL,
        pay_method VARCHAR(32) NOT NULL,
        subject VARCHAR(256) NOT NULL,
        expire_at TIMESTAMP WITH TIME ZONE NOT NULL,
        notify_url VARCHAR(1024) NOT NULL,
        extra JSONB NOT NULL,
        sub_merchant_no VARCHAR(64),
        profit_sharing BOOLEAN NOT NULL,
        -- extra.sandbox.callback, kept for the moment the buyer pays.
        callback_mode VARCHAR(16) NOT NULL,
        status VARCHAR(16) NOT NULL,
        paid_at TIMESTAMP WITH TIME ZONE,
        closed_at TIMESTAMP WITH TIME ZONE,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL,
        updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT sandbox_orders_status_check CHECK (status IN ('pending', 'paid', 'closed'))
      )`);

    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_refunds (
        refund_no VARCHAR(64) PRIMARY KEY,
        channel_refund_no VARCHAR(64) NOT NULL UNIQUE,
        trade_no VARCHAR(64) NOT NULL REFERENCES sandbox_orders (trade_no),
        amount BIGINT NOT NULL,
        reason VARCHAR(512),
        notify_url VARCHAR(1024) NOT NULL,
        status VARCHAR(16) NOT NULL,
        -- Decided at creation ("[sandbox:fail]" in the reason), applied once settle_at has passed.
        outcome VARCHAR(16) NOT NULL,
        settle_at TIMESTAMP WITH TIME ZONE NOT NULL,
        fail_reason VARCHAR(256),
        refunded_at TIMESTAMP WITH TIME ZONE,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL,
        updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT sandbox_refunds_status_check CHECK (status IN ('processing', 'success', 'failed')),
        CONSTRAINT sandbox_refunds_outcome_check CHECK (outcome IN ('success', 'failed'))
      )`);
    await sql('CREATE INDEX IF NOT EXISTS sandbox_refunds_trade_no ON sandbox_refunds (trade_no)');

    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_profit_shares (
        share_no VARCHAR(64) PRIMARY KEY,
        trade_no VARCHAR(64) NOT NULL REFERENCES sandbox_orders (trade_no),
        receivers JSONB NOT NULL,
        amount BIGINT NOT NULL,
        status VARCHAR(16) NOT NULL,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL
      )`);
    await sql(
      'CREATE INDEX IF NOT EXISTS sandbox_profit_shares_trade_no ON sandbox_profit_shares (trade_no)',
    );

    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_files (
        file_id VARCHAR(64) PRIMARY KEY,
        file_name VARCHAR(256) NOT NULL,
        media_type VARCHAR(128) NOT NULL,
        size INTEGER NOT NULL,
        sha256 VARCHAR(64) NOT NULL,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL
      )`);

    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_applications (
        application_id VARCHAR(64) PRIMARY KEY,
        application_no VARCHAR(64) NOT NULL UNIQUE,
        merchant JSONB NOT NULL,
        submit_data JSONB NOT NULL,
        -- 'finish', 'reject' or 'sign' (submit_data.sandbox_outcome); fixes the audit's path.
        outcome VARCHAR(16) NOT NULL,
        -- How many polls the audit has advanced; the status is the path's entry at this step.
        step INTEGER NOT NULL DEFAULT 0,
        status VARCHAR(32) NOT NULL,
        sub_merchant_no VARCHAR(64) NOT NULL UNIQUE,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL,
        updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT sandbox_applications_outcome_check CHECK (outcome IN ('finish', 'reject', 'sign'))
      )`);
  },
  async down({ context: qi }) {
    await qi.sequelize.query(
      'DROP TABLE IF EXISTS sandbox_applications, sandbox_files, sandbox_profit_shares, sandbox_refunds, sandbox_orders',
    );
  },
};
