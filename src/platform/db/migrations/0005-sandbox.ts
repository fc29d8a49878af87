import type { Migration } from '.';

/**
 * Once created the simulated sandbox upstream's tables (sandbox_orders, sandbox_refunds,
 * sandbox_profit_shares, sandbox_files, sandbox_applications). Those tables now belong to the
 * sandbox package (sandbox/migrations/, recorded in sandbox_migrations), which creates them when
 * they are missing and leaves them as they are on a database this migration already ran on.
 * Kept, as a no-op, so that every database's list of executed migrations stays the same.
 */
export const sandbox: Migration = {
  name: '0005-sandbox',
  async up() {},
  async down() {},
};
