import type { Migration } from '.';

export const savedStateVersions: Migration = {
  name: '0016-saved-state-versions',
  async up({ context: qi }) {
    // Which decision a saved state is: the run that saved it (its id and start), how far its
    // history had come, and how many saves that run had made before in it. A save that reaches
    // the database after a later one (a local activity of a workflow task that timed out, still
    // running) is older and must not replace it. Rows saved before have none and give way to any
    // save.
    await qi.sequelize.query(`
      ALTER TABLE order_saved_states
        ADD COLUMN run_id text,
        ADD COLUMN run_started_at timestamptz,
        ADD COLUMN history_length integer,
        ADD COLUMN save_seq integer`);
  },
  async down({ context: qi }) {
    await qi.sequelize.query(
      'ALTER TABLE order_saved_states DROP COLUMN IF EXISTS run_id, DROP COLUMN IF EXISTS run_started_at, DROP COLUMN IF EXISTS history_length, DROP COLUMN IF EXISTS save_seq',
    );
  },
};
