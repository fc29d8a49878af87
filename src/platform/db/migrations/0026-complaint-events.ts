import type { Migration } from '.';

export const complaintEvents: Migration = {
  name: '0026-complaint-events',
  async up({ context: qi }) {
    // The complaint event a row's change owes its app (SPEC §16), written with the change in the
    // same transaction and cleared once published: a publication that fails after the change
    // committed is made by the next sync instead of lost. `unpublished_version` is the row's
    // version at the change, which a `complaint.updated`'s event key carries.
    await qi.sequelize.query(`
      ALTER TABLE complaints
        ADD COLUMN unpublished_event varchar(16) CHECK (unpublished_event IN ('created', 'updated')),
        ADD COLUMN unpublished_version integer
    `);
  },
  async down({ context: qi }) {
    await qi.sequelize.query(
      'ALTER TABLE complaints DROP COLUMN IF EXISTS unpublished_event, DROP COLUMN IF EXISTS unpublished_version',
    );
  },
};
