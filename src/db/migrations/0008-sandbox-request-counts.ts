import type { Migration } from './index';

/**
 * The sandbox counts how often it was asked to create each order and each refund (it answers
 * a repeat with the first one, as real channels do), so that tests can count the gateway's
 * channel calls, not only the objects they left.
 */
export const sandboxRequestCounts: Migration = {
  name: '0008-sandbox-request-counts',
  async up({ context: qi }) {
    await qi.sequelize.query(
      'ALTER TABLE sandbox_orders ADD COLUMN create_requests INTEGER NOT NULL DEFAULT 1',
    );
    await qi.sequelize.query(
      'ALTER TABLE sandbox_refunds ADD COLUMN refund_requests INTEGER NOT NULL DEFAULT 1',
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('ALTER TABLE sandbox_refunds DROP COLUMN refund_requests');
    await qi.sequelize.query('ALTER TABLE sandbox_orders DROP COLUMN create_requests');
  },
};
