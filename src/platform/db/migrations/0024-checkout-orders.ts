import type { Migration } from '.';

export const checkoutOrders: Migration = {
  name: '0024-checkout-orders',
  async up({ context: qi }) {
    // An order of `pay_method: checkout` has no channel until its buyer picks one on the hosted
    // page (SPEC §15); then its channel and the way it is paid there (jsapi, h5) are written once.
    await qi.sequelize.query('ALTER TABLE orders ALTER COLUMN channel_code DROP NOT NULL');
    await qi.sequelize.query('ALTER TABLE orders ADD COLUMN channel_pay_method varchar(32)');
  },
  async down({ context: qi }) {
    await qi.sequelize.query('ALTER TABLE orders DROP COLUMN IF EXISTS channel_pay_method');
    // Checkout orders no buyer took to a channel were never at one: they go with the column.
    await qi.sequelize.query('DELETE FROM orders WHERE channel_code IS NULL');
    await qi.sequelize.query('ALTER TABLE orders ALTER COLUMN channel_code SET NOT NULL');
  },
};
