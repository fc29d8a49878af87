import type { Migration } from '../../src/platform/db/migrate';

/**
 * The sandbox counts how often it was asked to create each order and each refund (it answers
 * a repeat with the first one, as real channels do), so that tests can count the gateway's
 * channel calls, not only the objects they left. First added by the gateway's migration
 * 0008-sandbox-request-counts, now a no-op: on a database it ran on, the columns are kept.
 */
export const requestCounts: Migration = {
  name: '0002-request-counts',
  async up({ context: qi }) {
    await qi.sequelize.query(
      'ALTER TABLE sandbox_orders ADD COLUMN IF NOT EXISTS create_requests INTEGER NOT NULL DEFAULT 1',
    );
    await qi.sequelize.query(
      'ALTER TABLE sandbox_refunds ADD COLUMN IF NOT EXISTS refund_requests INTEGER NOT NULL DEFAULT 1',
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('ALTER TABLE sandbox_refunds DROP COLUMN IF EXISTS refund_requests');
    await qi.sequelize.query('ALTER TABLE sandbox_orders DROP COLUMN IF EXISTS create_requests');
  },
};
