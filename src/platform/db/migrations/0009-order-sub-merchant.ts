import { DataTypes } from 'sequelize';
import type { Migration } from '.';

export const orderSubMerchant: Migration = {
  name: '0009-order-sub-merchant',
  async up({ context: qi }) {
    // The sub-merchant an order was created for, kept with the order: a merchant onboarded again
    // under a new sub_merchant_no must not move its earlier orders' queries, closes, refunds and
    // callbacks to the new one. Null for orders created before it (their merchant's is used).
    await qi.addColumn('orders', 'sub_merchant_no', { type: DataTypes.STRING(64) });
  },
  async down({ context: qi }) {
    await qi.removeColumn('orders', 'sub_merchant_no');
  },
};
