import type { Migration } from '.';

/**
 * Once added the request counts (sandbox_orders.create_requests, sandbox_refunds.refund_requests)
 * to the simulated sandbox upstream's tables. Those tables now belong to the sandbox package
 * (sandbox/migrations/), which adds the columns when they are missing. Kept, as a no-op, so that
 * every database's list of executed migrations stays the same.
 */
export const sandboxRequestCounts: Migration = {
  name: '0008-sandbox-request-counts',
  async up() {},
  async down() {},
};
