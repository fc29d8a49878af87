import type { Migration } from '.';

export const contracts: Migration = {
  name: '0027-contracts',
  async up({ context: qi }) {
    // A recurring contract (SPEC §17), one row per contract an app offered, written by its
    // workflow. `merchant_contract_no` is the app's idempotency key. The plan's calendar
    // (`first_at`, `next_deduction_at`, `signed_at`) is the contract clock's, which is real time
    // outside a time-scaled stack.
    await qi.sequelize.query(`
      CREATE TABLE contracts (
        contract_no varchar(32) PRIMARY KEY,
        app_id varchar(32) NOT NULL,
        merchant_contract_no varchar(64) NOT NULL,
        merchant_id varchar(64),
        channel_code varchar(32) NOT NULL,
        channel_account_id bigint,
        sub_merchant_no varchar(64),
        channel_contract_id varchar(64),
        status varchar(16) NOT NULL CHECK (status IN ('signing', 'active', 'cancelled', 'ended', 'failed')),
        period varchar(8) NOT NULL CHECK (period IN ('day', 'week', 'month')),
        every integer NOT NULL CHECK (every >= 1),
        amount bigint NOT NULL CHECK (amount >= 1),
        first_at timestamptz,
        period_count integer,
        total_amount bigint,
        subject varchar(128) NOT NULL,
        notify_url varchar(1024) NOT NULL,
        return_url varchar(1024),
        sign_url text,
        signed_at timestamptz,
        finished_at timestamptz,
        cancelled_by varchar(16) CHECK (cancelled_by IN ('merchant', 'buyer')),
        end_reason varchar(512),
        periods_done integer NOT NULL DEFAULT 0,
        deducted_count integer NOT NULL DEFAULT 0,
        deducted_amount bigint NOT NULL DEFAULT 0,
        next_deduction_at timestamptz,
        next_amount bigint,
        fingerprint varchar(512) NOT NULL,
        last_failure varchar(512),
        last_failed_period integer,
        last_failed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (app_id, merchant_contract_no)
      )`);
    await qi.sequelize.query(
      'CREATE INDEX contracts_app_created ON contracts (app_id, created_at DESC, contract_no)',
    );
    // Each attempt of each period's deduction: an order of its own (`trade_no`), one row per
    // attempt, written before the order is asked for, so that a retried activity finds it.
    await qi.sequelize.query(`
      CREATE TABLE contract_deductions (
        contract_no varchar(32) NOT NULL REFERENCES contracts (contract_no),
        period integer NOT NULL,
        attempt integer NOT NULL,
        merchant_order_no varchar(64) NOT NULL,
        trade_no varchar(32),
        amount bigint NOT NULL,
        status varchar(16) NOT NULL CHECK (status IN ('pending', 'paid', 'failed')),
        reason varchar(512),
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        PRIMARY KEY (contract_no, period, attempt)
      )`);
    await qi.sequelize.query('CREATE INDEX contract_deductions_trade_no ON contract_deductions (trade_no)');
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE IF EXISTS contract_deductions');
    await qi.sequelize.query('DROP TABLE IF EXISTS contracts');
  },
};
