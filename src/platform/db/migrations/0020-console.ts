import type { Migration } from '.';

export const consoleOperators: Migration = {
  name: '0020-console',
  async up({ context: qi }) {
    // The people who run durapay (SPEC §12). The password is a memory-hard hash (scrypt, its
    // parameters in the string); the TOTP secret is sealed like applicant data.
    await qi.sequelize.query(`
      CREATE TABLE console_operators (
        operator_id varchar(32) PRIMARY KEY,
        username varchar(64) NOT NULL,
        role varchar(16) NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
        password_hash text NOT NULL,
        totp_secret text,
        -- The time step of the last TOTP code that signed in: a code is good once.
        totp_last_step bigint,
        disabled_at timestamptz,
        password_changed_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query(
      'CREATE UNIQUE INDEX console_operators_username ON console_operators (lower(username))',
    );
    // A session is known by the SHA-256 of its cookie's token: the table alone signs no one in.
    await qi.sequelize.query(`
      CREATE TABLE console_sessions (
        token_hash char(64) PRIMARY KEY,
        operator_id varchar(32) NOT NULL REFERENCES console_operators (operator_id),
        csrf_token varchar(64) NOT NULL,
        client_ip varchar(64),
        user_agent varchar(256),
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        ended_at timestamptz
      )`);
    await qi.sequelize.query(
      'CREATE INDEX console_sessions_operator ON console_sessions (operator_id) WHERE ended_at IS NULL',
    );
    // Failed sign-ins, by the username tried (known or not) and by client address: the lockout
    // counts them within its window.
    await qi.sequelize.query(`
      CREATE TABLE console_login_failures (
        id bigserial PRIMARY KEY,
        username varchar(64) NOT NULL,
        client_ip varchar(64) NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
      )`);
    await qi.sequelize.query(
      'CREATE INDEX console_login_failures_username ON console_login_failures (lower(username), at)',
    );
    await qi.sequelize.query(
      'CREATE INDEX console_login_failures_ip ON console_login_failures (client_ip, at)',
    );
    // Every operator action, sign-in and change to an operator. Append-only: the database itself
    // refuses to change or remove a row, whatever the application does.
    await qi.sequelize.query(`
      CREATE TABLE console_audit_log (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        operator_id varchar(32),
        operator_username varchar(96) NOT NULL,
        action varchar(64) NOT NULL,
        target_type varchar(32) NOT NULL,
        target_id varchar(128) NOT NULL,
        before jsonb,
        after jsonb,
        outcome varchar(16) NOT NULL CHECK (outcome IN ('succeeded', 'refused')),
        error_code varchar(64),
        client_ip varchar(64),
        request_id varchar(128)
      )`);
    await qi.sequelize.query('CREATE INDEX console_audit_log_at ON console_audit_log (at, id)');
    await qi.sequelize.query(
      'CREATE INDEX console_audit_log_operator ON console_audit_log (operator_username, id)',
    );
    await qi.sequelize.query(
      'CREATE INDEX console_audit_log_target ON console_audit_log (target_type, target_id, id)',
    );
    await qi.sequelize.query(`
      CREATE FUNCTION console_audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'console_audit_log is append-only: % refused', TG_OP;
      END $$`);
    await qi.sequelize.query(`
      CREATE TRIGGER console_audit_log_no_change BEFORE UPDATE OR DELETE ON console_audit_log
        FOR EACH ROW EXECUTE FUNCTION console_audit_log_append_only()`);
    await qi.sequelize.query(`
      CREATE TRIGGER console_audit_log_no_truncate BEFORE TRUNCATE ON console_audit_log
        FOR EACH STATEMENT EXECUTE FUNCTION console_audit_log_append_only()`);
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE IF EXISTS console_audit_log');
    await qi.sequelize.query('DROP FUNCTION IF EXISTS console_audit_log_append_only()');
    await qi.sequelize.query('DROP TABLE IF EXISTS console_login_failures');
    await qi.sequelize.query('DROP TABLE IF EXISTS console_sessions');
    await qi.sequelize.query('DROP TABLE IF EXISTS console_operators');
  },
};
