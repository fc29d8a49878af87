import type { Migration } from '.';

export const channelAccounts: Migration = {
  name: '0017-channel-accounts',
  async up({ context: qi }) {
    // A merchant's account at each channel (SPEC §5.8): at most one attached per (app, merchant,
    // channel). A detached account keeps its row (detached_at set), because the orders made with
    // it go on using it: orders.channel_account_id names the row they were created with.
    await qi.sequelize.query(`
      CREATE TABLE merchant_channel_accounts (
        id bigserial PRIMARY KEY,
        app_id varchar(32) NOT NULL,
        merchant_id varchar(64) NOT NULL,
        channel_code varchar(32) NOT NULL,
        kind varchar(16) NOT NULL,
        account_no varchar(64),
        app_auth_token text,
        refresh_token text,
        token_expires_at timestamptz,
        refresh_expires_at timestamptz,
        status varchar(16) NOT NULL DEFAULT 'active',
        source varchar(16) NOT NULL,
        activated_at timestamptz NOT NULL,
        detached_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT merchant_channel_accounts_merchant_fk FOREIGN KEY (app_id, merchant_id)
          REFERENCES merchants (app_id, merchant_id)
      )`);
    await qi.sequelize.query(`
      CREATE UNIQUE INDEX merchant_channel_accounts_attached
        ON merchant_channel_accounts (app_id, merchant_id, channel_code) WHERE detached_at IS NULL`);
    await qi.sequelize.query(`
      CREATE INDEX merchant_channel_accounts_token_expiry
        ON merchant_channel_accounts (token_expires_at) WHERE kind = 'app_auth_token' AND detached_at IS NULL`);
    await qi.sequelize.query('ALTER TABLE orders ADD COLUMN channel_account_id bigint');
    // A merchant's authorisation of durapay's app at a channel (Alipay 第三方应用授权) under way:
    // the state sent with the merchant to the channel's page, kept as its SHA-256 only, single
    // use, bound to the app and merchant.
    await qi.sequelize.query(`
      CREATE TABLE channel_authorizations (
        state_hash char(64) PRIMARY KEY,
        app_id varchar(32) NOT NULL,
        merchant_id varchar(64) NOT NULL,
        channel_code varchar(32) NOT NULL,
        redirect_url text,
        notify_url text,
        expected_user_id varchar(64),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        CONSTRAINT channel_authorizations_merchant_fk FOREIGN KEY (app_id, merchant_id)
          REFERENCES merchants (app_id, merchant_id)
      )`);

    // Every merchant's one sub_merchant_no becomes its account at its channel_code. An Alipay
    // number that is no smid was an app_auth_token (it stays plain text until `durapay keys
    // reseal` seals it; the repository reads both), and its account number is unknown.
    await qi.sequelize.query(`
      INSERT INTO merchant_channel_accounts
        (app_id, merchant_id, channel_code, kind, account_no, app_auth_token, status, source,
         activated_at, created_at, updated_at)
      SELECT app_id, merchant_id, channel_code,
             CASE WHEN channel_code = 'wechatpay' THEN 'sub_mchid'
                  WHEN channel_code = 'alipay' AND sub_merchant_no ~ '^2088[0-9]{12}$' THEN 'smid'
                  WHEN channel_code = 'alipay' THEN 'app_auth_token'
                  ELSE 'sub_merchant_no' END,
             CASE WHEN channel_code = 'alipay' AND sub_merchant_no !~ '^2088[0-9]{12}$' THEN NULL
                  ELSE sub_merchant_no END,
             CASE WHEN channel_code = 'alipay' AND sub_merchant_no !~ '^2088[0-9]{12}$' THEN sub_merchant_no
                  ELSE NULL END,
             'active', 'migrated', updated_at, now(), now()
        FROM merchants
       WHERE sub_merchant_no IS NOT NULL AND channel_code IS NOT NULL`);
    // Orders made before keep the number they were made with (or, older still, none: their
    // merchant's account then); they name the account only when it is the one they used.
    await qi.sequelize.query(`
      UPDATE orders o SET channel_account_id = a.id
        FROM merchant_channel_accounts a
       WHERE o.merchant_id IS NOT NULL AND a.app_id = o.app_id AND a.merchant_id = o.merchant_id
         AND a.channel_code = o.channel_code
         AND (o.sub_merchant_no IS NULL OR o.sub_merchant_no = a.account_no
              OR o.sub_merchant_no = a.app_auth_token)`);
    // A token is a credential: from now on it is only in its account's sealed column, never in
    // the plain text of the merchant's or its orders' rows (which name the account instead).
    await qi.sequelize.query(`
      UPDATE orders o SET sub_merchant_no = NULL
        FROM merchant_channel_accounts a
       WHERE o.channel_account_id = a.id AND a.kind = 'app_auth_token'
         AND o.sub_merchant_no = a.app_auth_token`);
    await qi.sequelize.query(`
      UPDATE merchants m SET sub_merchant_no = NULL
        FROM merchant_channel_accounts a
       WHERE a.app_id = m.app_id AND a.merchant_id = m.merchant_id AND a.kind = 'app_auth_token'
         AND m.sub_merchant_no = a.app_auth_token`);
  },
  async down({ context: qi }) {
    await qi.sequelize.query('ALTER TABLE orders DROP COLUMN IF EXISTS channel_account_id');
    await qi.sequelize.query('DROP TABLE IF EXISTS channel_authorizations');
    await qi.sequelize.query('DROP TABLE IF EXISTS merchant_channel_accounts');
  },
};
