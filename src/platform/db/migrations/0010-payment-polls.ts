import type { Migration } from '.';

export const paymentPolls: Migration = {
  name: '0010-payment-polls',
  async up({ context: qi }) {
    // The polls a pending order is due (SPEC §3.2), kept here rather than in its workflow: the
    // payment sweeper (modules/orders/sweeper.ts) claims due rows with FOR UPDATE SKIP LOCKED,
    // asks the channel, and signals only an order the channel reports paid. A row lives while
    // its order is pending; the order's workflow keeps one timer, for expiry.
    await qi.sequelize.query(`
      CREATE TABLE payment_polls (
        trade_no varchar(32) PRIMARY KEY REFERENCES orders (trade_no) ON DELETE CASCADE,
        channel_code varchar(32) NOT NULL,
        gaps_ms integer[] NOT NULL,
        gap_index integer NOT NULL DEFAULT 0,
        next_poll_at timestamptz NOT NULL,
        poll_until timestamptz NOT NULL
      )`);
    await qi.sequelize.query('CREATE INDEX payment_polls_due ON payment_polls (next_poll_at)');
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE payment_polls');
  },
};
