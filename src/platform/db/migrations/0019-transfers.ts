import type { Migration } from '.';

export const transfers: Migration = {
  name: '0019-transfers',
  async up({ context: qi }) {
    // One row per transfer (SPEC §11), written by the API when the request is first taken (the
    // row is what makes a repeat of merchant_transfer_no the same transfer) and moved on by the
    // transfer's workflow only. The payee (account and name) is personal data: sealed, bound to
    // the row; `payee_hint` is the account masked, for people and notifications.
    await qi.sequelize.query(`
      CREATE TABLE transfers (
        transfer_no varchar(32) PRIMARY KEY,
        app_id varchar(32) NOT NULL,
        merchant_transfer_no varchar(64) NOT NULL,
        channel_code varchar(32) NOT NULL,
        merchant_id varchar(64),
        channel_account_id bigint,
        sub_merchant_no varchar(64),
        amount bigint NOT NULL CHECK (amount > 0),
        currency char(3) NOT NULL,
        payee_type varchar(32) NOT NULL,
        payee text NOT NULL,
        payee_hint varchar(64) NOT NULL,
        remark varchar(256) NOT NULL,
        scene jsonb,
        notify_url varchar(512) NOT NULL,
        status varchar(24) NOT NULL DEFAULT 'processing'
          CHECK (status IN ('processing', 'wait_user_confirm', 'success', 'failed', 'cancelled')),
        channel_status varchar(24),
        channel_transfer_no varchar(64),
        package_info text,
        fail_reason text,
        refused_at_create boolean NOT NULL DEFAULT false,
        -- Claimed by the one create that asks the channel: whatever run or retry comes later finds
        -- it taken and asks where the transfer stands instead.
        create_sent_at timestamptz,
        cancel_requested_at timestamptz,
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query(
      'CREATE UNIQUE INDEX transfers_app_merchant_transfer_no ON transfers (app_id, merchant_transfer_no)',
    );
    await qi.sequelize.query('CREATE INDEX transfers_app_created ON transfers (app_id, created_at)');
    // Transfers recorded whose workflow never asked the channel (a start that did not reach
    // Temporal): what the worker's sweep looks through.
    await qi.sequelize.query(
      `CREATE INDEX transfers_never_sent ON transfers (created_at)
        WHERE create_sent_at IS NULL AND status = 'processing'`,
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE IF EXISTS transfers');
  },
};
