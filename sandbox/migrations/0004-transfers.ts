import type { Migration } from '../../src/platform/db/migrate';

/**
 * Transfers (SPEC §11): payouts from the sandbox's merchant to a person's wallet, keyed by
 * durapay's transfer number so that a create sent again is the same transfer. What happens to a
 * transfer is decided when it is created (`outcome`, from the remark's markers) and applied when
 * its time comes (`settle_at`, or `confirm_deadline` for one waiting for the payee), so that a
 * transfer due while no process ran settles when the simulator starts again or is asked.
 */
export const transfers: Migration = {
  name: '0004-transfers',
  async up({ context: qi }) {
    const sql = (text: string) => qi.sequelize.query(text);

    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_transfers (
        transfer_no VARCHAR(64) PRIMARY KEY,
        channel_transfer_no VARCHAR(64) NOT NULL UNIQUE,
        sub_merchant_no VARCHAR(64),
        amount BIGINT NOT NULL,
        payee_type VARCHAR(32) NOT NULL,
        payee_account VARCHAR(128) NOT NULL,
        payee_name VARCHAR(128),
        remark VARCHAR(256) NOT NULL,
        callback_url VARCHAR(1024) NOT NULL,
        status VARCHAR(24) NOT NULL,
        -- Decided at creation ("[transfer:fail]" in the remark), applied once settle_at has passed.
        outcome VARCHAR(16) NOT NULL,
        -- When the money leaves; null while the payee has not confirmed.
        settle_at TIMESTAMP WITH TIME ZONE,
        -- Until when an openid payee may confirm; null for a transfer that needs no confirmation.
        confirm_deadline TIMESTAMP WITH TIME ZONE,
        confirmed_at TIMESTAMP WITH TIME ZONE,
        fail_reason VARCHAR(256),
        finished_at TIMESTAMP WITH TIME ZONE,
        create_requests INTEGER NOT NULL DEFAULT 1,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL,
        updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT sandbox_transfers_status_check
          CHECK (status IN ('wait_user_confirm', 'processing', 'success', 'failed', 'cancelled')),
        CONSTRAINT sandbox_transfers_outcome_check CHECK (outcome IN ('success', 'failed'))
      )`);
    // The open transfers: what the sweep at start looks through for those that fell due.
    await sql(`CREATE INDEX IF NOT EXISTS sandbox_transfers_open ON sandbox_transfers (status)
                 WHERE status IN ('wait_user_confirm', 'processing')`);
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP TABLE IF EXISTS sandbox_transfers');
  },
};
