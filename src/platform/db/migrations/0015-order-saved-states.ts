import type { Migration } from '.';

export const orderSavedStates: Migration = {
  name: '0015-order-saved-states',
  async up({ context: qi }) {
    // SPEC §7: a paid order with nothing left to wait for ends its workflow run; the state that
    // run decided with is kept here (sealed with the payload keys, like the run's payloads in
    // Temporal), and the next run of the order loads it. One row per order, replaced each time
    // a run saves it.
    await qi.sequelize.query(`
      CREATE TABLE order_saved_states (
        trade_no varchar(32) PRIMARY KEY REFERENCES orders (trade_no),
        state text NOT NULL,
        saved_at timestamptz NOT NULL DEFAULT now()
      )`);
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE IF EXISTS order_saved_states');
  },
};
