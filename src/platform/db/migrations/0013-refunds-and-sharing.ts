import type { Migration } from '.';

export const refundsAndSharing: Migration = {
  name: '0013-refunds-and-sharing',
  async up({ context: qi }) {
    // SPEC §3.5: a refund the channel ended ABNORMAL stays counted as refunded until an operator
    // has it paid out another way.
    await qi.sequelize.query('ALTER TABLE refunds DROP CONSTRAINT refunds_status_check');
    await qi.sequelize.query(
      `ALTER TABLE refunds ADD CONSTRAINT refunds_status_check
         CHECK (status IN ('processing', 'success', 'failed', 'abnormal'))`,
    );
    // SPEC §3.7: what the share gave the receivers, and what came back from them for refunds.
    await qi.sequelize.query(
      `ALTER TABLE orders ADD COLUMN profit_shared_amount bigint NOT NULL DEFAULT 0,
                          ADD COLUMN profit_returned_amount bigint NOT NULL DEFAULT 0`,
    );
    // Every share, unfreeze and return an order asked of its channel, with the channel's number:
    // durable steps, keyed by durapay's own numbers (the channel's idempotency keys).
    await qi.sequelize.query(`
      CREATE TABLE profit_share_steps (
        step_no varchar(64) PRIMARY KEY,
        trade_no varchar(32) NOT NULL REFERENCES orders (trade_no),
        kind varchar(16) NOT NULL CHECK (kind IN ('share', 'unfreeze', 'return')),
        refund_no varchar(32),
        receivers jsonb NOT NULL,
        amount bigint NOT NULL,
        status varchar(16) NOT NULL CHECK (status IN ('processing', 'success', 'failed')),
        channel_no varchar(64),
        fail_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query('CREATE INDEX profit_share_steps_trade_no ON profit_share_steps (trade_no)');
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE profit_share_steps');
    await qi.sequelize.query(
      'ALTER TABLE orders DROP COLUMN profit_shared_amount, DROP COLUMN profit_returned_amount',
    );
    await qi.sequelize.query('ALTER TABLE refunds DROP CONSTRAINT refunds_status_check');
    await qi.sequelize.query(
      `ALTER TABLE refunds ADD CONSTRAINT refunds_status_check CHECK (status IN ('processing', 'success', 'failed'))`,
    );
  },
};
