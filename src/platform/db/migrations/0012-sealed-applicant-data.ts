import { QueryTypes } from 'sequelize';
import type { Migration } from '.';

/**
 * Applicant data sealed at rest (FieldSealer, `dpf1:<key id>:…`): the application's submit_data
 * and the channel's last answer, the merchant's legal person and bank account. The columns
 * become text, keeping what they hold: a row written before holds its plain text (submit_data
 * as `jsonb::text`) until `durapay migrate`, `npm start` or `durapay keys reseal` seals it.
 */
export const sealedApplicantData: Migration = {
  name: '0012-sealed-applicant-data',
  async up({ context: qi }) {
    await qi.sequelize.query(`
      ALTER TABLE merchant_applications
        ALTER COLUMN submit_data TYPE text USING submit_data::text,
        ALTER COLUMN channel_last_answer TYPE text USING channel_last_answer::text`);
    await qi.sequelize.query(`
      ALTER TABLE merchants
        ALTER COLUMN legal_person TYPE text,
        ALTER COLUMN bank_account TYPE text`);
  },
  async down({ context: qi }) {
    // Sealed values cannot go back into jsonb or varchar(64) without the keys, which a
    // migration does not have: refuse rather than lose them.
    const [counts] = await qi.sequelize.query<{ applications: string; merchants: string }>(
      `SELECT (SELECT count(*) FROM merchant_applications
                WHERE starts_with(submit_data, 'dpf1:') OR starts_with(channel_last_answer, 'dpf1:')) AS applications,
              (SELECT count(*) FROM merchants
                WHERE starts_with(legal_person, 'dpf1:') OR starts_with(bank_account, 'dpf1:')) AS merchants`,
      { type: QueryTypes.SELECT },
    );
    if (Number(counts!.applications) > 0 || Number(counts!.merchants) > 0) {
      throw new Error(
        `0012-sealed-applicant-data cannot be undone: ${counts!.applications} application(s) and ` +
          `${counts!.merchants} merchant(s) hold sealed applicant data`,
      );
    }
    await qi.sequelize.query(`
      ALTER TABLE merchant_applications
        ALTER COLUMN submit_data TYPE jsonb USING submit_data::jsonb,
        ALTER COLUMN channel_last_answer TYPE jsonb USING channel_last_answer::jsonb`);
    await qi.sequelize.query(`
      ALTER TABLE merchants
        ALTER COLUMN legal_person TYPE varchar(64),
        ALTER COLUMN bank_account TYPE varchar(64)`);
  },
};
