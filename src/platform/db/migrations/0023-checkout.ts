import type { Migration } from '.';

export const checkout: Migration = {
  name: '0023-checkout',
  async up({ context: qi }) {
    // A payment link (SPEC §15): an amount and a subject that buyers pay through durapay's hosted
    // page, each payment an ordinary order of the link's app. Written by the API only.
    await qi.sequelize.query(`
      CREATE TABLE payment_links (
        link_id varchar(32) PRIMARY KEY,
        app_id varchar(32) NOT NULL,
        merchant_link_no varchar(64) NOT NULL,
        merchant_id varchar(64),
        amount bigint NOT NULL CHECK (amount > 0),
        subject varchar(128) NOT NULL,
        notify_url varchar(512) NOT NULL,
        expires_at timestamptz,
        max_payments integer NOT NULL CHECK (max_payments > 0),
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated')),
        deactivated_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query(
      'CREATE UNIQUE INDEX payment_links_app_merchant_link_no ON payment_links (app_id, merchant_link_no)',
    );
    await qi.sequelize.query(
      'CREATE INDEX payment_links_app_created ON payment_links (app_id, created_at, link_id)',
    );
    // A buyer's place in a link while the buyer's order is being made: taken under the link row's
    // lock, counted with the link's orders that are pending or paid, and let go once the order's
    // row exists (or its create failed). A hold whose request died is counted until it is stale.
    await qi.sequelize.query(`
      CREATE TABLE payment_link_holds (
        id bigserial PRIMARY KEY,
        link_id varchar(32) NOT NULL REFERENCES payment_links (link_id),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query(
      'CREATE INDEX payment_link_holds_link ON payment_link_holds (link_id, created_at)',
    );
    // A merchant's standing QR code (码牌): printed once, paid any number of times, the buyer
    // entering the amount within its bounds.
    await qi.sequelize.query(`
      CREATE TABLE merchant_codes (
        code_id varchar(32) PRIMARY KEY,
        app_id varchar(32) NOT NULL,
        merchant_id varchar(64) NOT NULL,
        name varchar(64) NOT NULL,
        notify_url varchar(512) NOT NULL,
        min_amount bigint NOT NULL CHECK (min_amount > 0),
        max_amount bigint NOT NULL CHECK (max_amount >= min_amount),
        status varchar(16) NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
        disabled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query(
      'CREATE INDEX merchant_codes_merchant ON merchant_codes (app_id, merchant_id, created_at, code_id)',
    );
    // The hosted checkout's sign-in states: what a wallet's OAuth round trip is bound to, taken
    // once. The state itself carries a MAC over these fields; the row makes it single use. A
    // code's carries the amount and note its buyer entered.
    await qi.sequelize.query(`
      CREATE TABLE checkout_states (
        nonce varchar(32) PRIMARY KEY,
        kind varchar(8) NOT NULL CHECK (kind IN ('link', 'order', 'code')),
        ref varchar(64) NOT NULL,
        channel_code varchar(32) NOT NULL,
        amount bigint,
        note varchar(64),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query('CREATE INDEX checkout_states_expires ON checkout_states (expires_at)');
    // An order paid through a link or at a standing code names it (in its query and its
    // notifications), and a code's the note its buyer left.
    await qi.sequelize.query('ALTER TABLE orders ADD COLUMN payment_link_id varchar(32)');
    await qi.sequelize.query('ALTER TABLE orders ADD COLUMN standing_code_id varchar(32)');
    await qi.sequelize.query('ALTER TABLE orders ADD COLUMN buyer_note varchar(64)');
    await qi.sequelize.query(
      'CREATE INDEX orders_payment_link ON orders (payment_link_id, status) WHERE payment_link_id IS NOT NULL',
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP INDEX IF EXISTS orders_payment_link');
    await qi.sequelize.query('ALTER TABLE orders DROP COLUMN IF EXISTS buyer_note');
    await qi.sequelize.query('ALTER TABLE orders DROP COLUMN IF EXISTS standing_code_id');
    await qi.sequelize.query('ALTER TABLE orders DROP COLUMN IF EXISTS payment_link_id');
    await qi.sequelize.query('DROP TABLE IF EXISTS checkout_states');
    await qi.sequelize.query('DROP TABLE IF EXISTS payment_link_holds');
    await qi.sequelize.query('DROP TABLE IF EXISTS payment_links');
    await qi.sequelize.query('DROP TABLE IF EXISTS merchant_codes');
  },
};
