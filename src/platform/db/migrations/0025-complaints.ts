import type { Migration } from '.';

export const complaints: Migration = {
  name: '0025-complaints',
  async up({ context: qi }) {
    // A consumer complaint as durapay keeps it (SPEC §16), one row per complaint at a channel,
    // written by its workflow from what the channel answers. The payer's words, phone, images
    // and the negotiation history are personal data, sealed like applicant data (`sealed_*`).
    // `app_id`/`trade_no` are the order the complaint names; NULL when durapay has no such order
    // (`out_trade_no` keeps what the channel said), which only operators then see.
    await qi.sequelize.query(`
      CREATE TABLE complaints (
        channel_code varchar(32) NOT NULL,
        complaint_id varchar(64) NOT NULL,
        account varchar(64) NOT NULL,
        app_id varchar(32),
        merchant_id varchar(64),
        trade_no varchar(64),
        out_trade_no varchar(64),
        channel_trade_no varchar(64),
        order_amount bigint,
        sub_merchant_no varchar(64) NOT NULL,
        state varchar(16) NOT NULL CHECK (state IN ('pending', 'processing', 'processed')),
        problem_type varchar(32) NOT NULL,
        apply_refund_amount bigint,
        sealed_detail text,
        sealed_payer_phone text,
        sealed_images text,
        sealed_history text,
        complaint_times integer NOT NULL DEFAULT 1,
        awaits_reply boolean NOT NULL DEFAULT false,
        full_refunded boolean NOT NULL DEFAULT false,
        complained_at timestamptz NOT NULL,
        reply_due_at timestamptz NOT NULL,
        complete_due_at timestamptz NOT NULL,
        replied_at timestamptz,
        completed_at timestamptz,
        refund_no varchar(64),
        refund_amount bigint,
        reply_due_notified_at timestamptz,
        overdue_at timestamptz,
        version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (channel_code, complaint_id)
      )`);
    await qi.sequelize.query(
      'CREATE INDEX complaints_app_created ON complaints (app_id, complained_at DESC, complaint_id)',
    );
    await qi.sequelize.query(
      "CREATE INDEX complaints_open_due ON complaints (reply_due_at) WHERE state <> 'processed'",
    );
    // Every action on a complaint, whoever asked it (an app, an operator), and how it ended.
    await qi.sequelize.query(`
      CREATE TABLE complaint_actions (
        id bigserial PRIMARY KEY,
        channel_code varchar(32) NOT NULL,
        complaint_id varchar(64) NOT NULL,
        actor varchar(96) NOT NULL,
        action varchar(16) NOT NULL CHECK (action IN ('reply', 'refund', 'complete')),
        outcome varchar(16) NOT NULL CHECK (outcome IN ('done', 'repeated', 'refused')),
        detail jsonb NOT NULL DEFAULT '{}',
        at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (channel_code, complaint_id) REFERENCES complaints (channel_code, complaint_id)
      )`);
    await qi.sequelize.query(
      'CREATE INDEX complaint_actions_of ON complaint_actions (channel_code, complaint_id, id)',
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE IF EXISTS complaint_actions');
    await qi.sequelize.query('DROP TABLE IF EXISTS complaints');
  },
};
