import type { Migration } from '.';

/**
 * The indexes the operator console's lists and overview walk (SPEC §12): every list is read
 * newest first by keyset, `(created_at, key) < cursor`, across apps, so each filter it takes has
 * an index that starts with it and ends with (created_at, key); a page then costs the same at
 * the millionth row as at the first.
 */
const INDEXES: Record<string, string> = {
  // Orders: all of them, and by app, merchant, status, channel; a merchant's number across apps;
  // the queue of orders paid after they closed (few, a partial index).
  orders_created: 'orders (created_at, trade_no)',
  orders_app_created: 'orders (app_id, created_at, trade_no)',
  orders_merchant_created: 'orders (merchant_id, created_at, trade_no) WHERE merchant_id IS NOT NULL',
  orders_status_created: 'orders (status, created_at, trade_no)',
  orders_channel_created: 'orders (channel_code, created_at, trade_no)',
  orders_merchant_order_no: 'orders (merchant_order_no)',
  orders_refund_review: 'orders (created_at, trade_no) WHERE needs_refund_review',
  refunds_created: 'refunds (created_at, refund_no)',
  refunds_app_created: 'refunds (app_id, created_at, refund_no)',
  refunds_status_created: 'refunds (status, created_at, refund_no)',
  transfers_created: 'transfers (created_at, transfer_no)',
  transfers_status_created: 'transfers (status, created_at, transfer_no)',
  // Notifications: all, by status (the failed ones first), by order or refund across apps, and
  // an application's (its history of changes).
  notifications_created: 'notifications (created_at, notification_id)',
  notifications_status_created: 'notifications (status, created_at, notification_id)',
  notifications_trade_no: 'notifications (trade_no, created_at) WHERE trade_no IS NOT NULL',
  notifications_refund_no: 'notifications (refund_no, created_at) WHERE refund_no IS NOT NULL',
  notifications_application:
    'notifications (app_id, application_id, created_at) WHERE application_id IS NOT NULL',
  merchants_created: 'merchants (created_at, app_id, merchant_id)',
  merchants_merchant_id: 'merchants (merchant_id)',
  reconciliation_runs_created: 'reconciliation_runs (created_at, run_id)',
  reconciliation_mismatches_run_created: 'reconciliation_mismatches (run_id, created_at, id)',
  reconciliation_mismatches_open: "reconciliation_mismatches (id) WHERE state = 'open'",
  // An order's callbacks, for its timeline.
  channel_callbacks_trade_no: 'channel_callbacks (trade_no) WHERE trade_no IS NOT NULL',
};

export const consoleIndexes: Migration = {
  name: '0021-console-indexes',
  async up({ context: qi }) {
    // Built CONCURRENTLY, as 0014's: orders, notifications and callbacks may be large already and
    // keep being written meanwhile. A build that failed half-way leaves an invalid index, which
    // IF NOT EXISTS would keep for ever: it is dropped and built again.
    for (const [name, definition] of Object.entries(INDEXES)) {
      const [invalid] = await qi.sequelize.query(
        `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname = :name AND NOT i.indisvalid`,
        { replacements: { name } },
      );
      if (invalid.length > 0) await qi.sequelize.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await qi.sequelize.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${definition}`);
    }
  },
  async down({ context: qi }) {
    for (const name of Object.keys(INDEXES).reverse()) {
      await qi.sequelize.query(`DROP INDEX IF EXISTS ${name}`);
    }
  },
};
