import { DataTypes } from 'sequelize';
import type { Migration } from '.';

export const barcodeOrders: Migration = {
  name: '0022-barcode-orders',
  async up({ context: qi }) {
    // A barcode order (SPEC §14) keeps the hash of the buyer's code (a repeat with another code is
    // refused, never charged twice; the code itself is a one-payment credential and is not kept),
    // the till and shop it was taken at, and why it closed: the channel refused the code, or it
    // was reversed. All null for the other orders.
    await qi.addColumn('orders', 'auth_code_sha256', { type: DataTypes.STRING(64) });
    await qi.addColumn('orders', 'device_id', { type: DataTypes.STRING(64) });
    await qi.addColumn('orders', 'store_id', { type: DataTypes.STRING(64) });
    await qi.addColumn('orders', 'close_reason', { type: DataTypes.STRING(16) });
  },
  async down({ context: qi }) {
    for (const column of ['auth_code_sha256', 'device_id', 'store_id', 'close_reason']) {
      await qi.removeColumn('orders', column);
    }
  },
};
