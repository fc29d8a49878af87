import type { Migration } from '.';

const INDEX = 'channel_callbacks_received_at';

export const callbackRetention: Migration = {
  name: '0014-callback-retention',
  async up({ context: qi }) {
    // The retention (modules/callbacks) deletes the oldest callbacks a batch at a time: without
    // this index each batch would scan the table. Built CONCURRENTLY, since the table may already
    // be large and callbacks go on arriving meanwhile (a plain build would hold their inserts
    // for its whole length). Migrations' statements run outside the runner's transaction, as
    // CONCURRENTLY requires. A build that failed half-way leaves an invalid index behind, which
    // IF NOT EXISTS would keep for ever: it is dropped and built again.
    const [invalid] = await qi.sequelize.query(
      `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = :name AND NOT i.indisvalid`,
      { replacements: { name: INDEX } },
    );
    if (invalid.length > 0) await qi.sequelize.query(`DROP INDEX CONCURRENTLY IF EXISTS ${INDEX}`);
    await qi.sequelize.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${INDEX} ON channel_callbacks (received_at)`,
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query(`DROP INDEX IF EXISTS ${INDEX}`);
  },
};
