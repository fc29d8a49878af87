import type { Migration } from '.';

export const openApplications: Migration = {
  name: '0007-open-applications',
  async up({ context: qi }) {
    // At most one application per merchant and channel that is not final: concurrent applies
    // meet here, and the loser answers with the winner's application_id.
    await qi.sequelize.query(
      `CREATE UNIQUE INDEX merchant_applications_open ON merchant_applications (app_id, merchant_id, channel_code)
        WHERE status NOT IN ('finished', 'rejected', 'canceled')`,
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP INDEX merchant_applications_open');
  },
};
