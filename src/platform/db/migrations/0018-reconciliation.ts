import type { Migration } from '.';

export const reconciliation: Migration = {
  name: '0018-reconciliation',
  async up({ context: qi }) {
    // One run per channel account and day (SPEC §10): its id is `{channel}:{account}:{date}`, the
    // same as its workflow's, so a run started twice is one row.
    await qi.sequelize.query(`
      CREATE TABLE reconciliation_runs (
        run_id varchar(160) PRIMARY KEY,
        channel_code varchar(32) NOT NULL,
        account varchar(64) NOT NULL,
        bill_date date NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'running', 'completed', 'failed')),
        statement varchar(16) CHECK (statement IN ('ready', 'empty')),
        statement_format varchar(40),
        statement_size bigint,
        statement_sha256 char(64),
        channel_hash varchar(128),
        rows_read bigint NOT NULL DEFAULT 0,
        summary jsonb,
        error text,
        started_by varchar(64) NOT NULL,
        started_at timestamptz,
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query(
      'CREATE INDEX reconciliation_runs_by_date ON reconciliation_runs (bill_date, channel_code)',
    );
    // The statement as the channel sent it, sealed, in pieces small enough that neither storing
    // nor reading it holds a whole statement in memory.
    await qi.sequelize.query(`
      CREATE TABLE reconciliation_statement_chunks (
        run_id varchar(160) NOT NULL REFERENCES reconciliation_runs (run_id) ON DELETE CASCADE,
        seq integer NOT NULL,
        data text NOT NULL,
        PRIMARY KEY (run_id, seq)
      )`);
    // The statement's detail lines as parsed: the matching is SQL over these and the books, and a
    // later day's run finds here what crossed midnight.
    await qi.sequelize.query(`
      CREATE TABLE reconciliation_rows (
        run_id varchar(160) NOT NULL REFERENCES reconciliation_runs (run_id) ON DELETE CASCADE,
        line integer NOT NULL,
        kind varchar(8) NOT NULL CHECK (kind IN ('payment', 'refund')),
        trade_no varchar(64) NOT NULL,
        refund_no varchar(64),
        channel_no varchar(64),
        amount bigint NOT NULL,
        fee bigint NOT NULL,
        status varchar(16) NOT NULL,
        at timestamptz NOT NULL,
        PRIMARY KEY (run_id, line)
      )`);
    await qi.sequelize.query('CREATE INDEX reconciliation_rows_trade ON reconciliation_rows (trade_no)');
    await qi.sequelize.query(
      'CREATE INDEX reconciliation_rows_refund ON reconciliation_rows (refund_no) WHERE refund_no IS NOT NULL',
    );
    // What a run found that is not `matched`. `carried`: a payment durapay has and the statement
    // has not yet, waiting out the carry-over; `repaired`: a lost payment handed to its order.
    await qi.sequelize.query(`
      CREATE TABLE reconciliation_mismatches (
        id bigserial PRIMARY KEY,
        run_id varchar(160) NOT NULL REFERENCES reconciliation_runs (run_id) ON DELETE CASCADE,
        app_id varchar(32),
        category varchar(32) NOT NULL CHECK (category IN ('missing_local_payment', 'missing_channel_payment',
          'amount_mismatch', 'status_mismatch', 'unknown_at_durapay')),
        kind varchar(8) NOT NULL CHECK (kind IN ('payment', 'refund')),
        trade_no varchar(64) NOT NULL,
        refund_no varchar(64),
        local jsonb,
        channel jsonb,
        state varchar(16) NOT NULL CHECK (state IN ('open', 'carried', 'repaired', 'resolved')),
        note text,
        resolution varchar(24) CHECK (resolution IN ('accepted_channel', 'accepted_durapay', 'ignored')),
        resolved_by varchar(64),
        resolved_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query(
      'CREATE INDEX reconciliation_mismatches_run ON reconciliation_mismatches (run_id, id)',
    );
    await qi.sequelize.query(
      `CREATE INDEX reconciliation_mismatches_carried ON reconciliation_mismatches (trade_no)
        WHERE state = 'carried'`,
    );
    // The books of a day: paid orders by when they were paid, refunds by when they were made.
    await qi.sequelize.query(
      'CREATE INDEX orders_pay_time ON orders (channel_code, pay_time) WHERE pay_time IS NOT NULL',
    );
    await qi.sequelize.query('CREATE INDEX refunds_created_at ON refunds (created_at)');
    // Which accounts are an app's: its orders made without a channel account (few) are found
    // without reading all of its orders.
    await qi.sequelize.query(
      `CREATE INDEX orders_without_account ON orders (app_id, channel_code, sub_merchant_no)
        WHERE channel_account_id IS NULL`,
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP INDEX IF EXISTS orders_without_account');
    await qi.sequelize.query('DROP INDEX IF EXISTS refunds_created_at');
    await qi.sequelize.query('DROP INDEX IF EXISTS orders_pay_time');
    await qi.sequelize.query('DROP TABLE IF EXISTS reconciliation_mismatches');
    await qi.sequelize.query('DROP TABLE IF EXISTS reconciliation_rows');
    await qi.sequelize.query('DROP TABLE IF EXISTS reconciliation_statement_chunks');
    await qi.sequelize.query('DROP TABLE IF EXISTS reconciliation_runs');
  },
};
