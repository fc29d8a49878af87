import type { Migration } from '../../src/platform/db/migrate';

/**
 * Auto-debit contracts (SPEC §17): a contract the merchant offered for signing (`signing`), the
 * buyer signed (`active`, with the simulator's contract id) or that ended (`terminated`, by the
 * buyer or the merchant, or `expired` unsigned), and the last pre-deduction notice it had. Its
 * deductions are orders (`sandbox_orders.contract_id`), each with the local day it was taken on,
 * so that the once-a-day rule is one query under the contract's row lock.
 */
export const contracts: Migration = {
  name: '0006-contracts',
  async up({ context: qi }) {
    const sql = (text: string) => qi.sequelize.query(text);
    await sql(`
      CREATE TABLE IF NOT EXISTS sandbox_contracts (
        contract_no VARCHAR(64) PRIMARY KEY,
        contract_id VARCHAR(64) UNIQUE,
        subject VARCHAR(256) NOT NULL,
        plan JSONB NOT NULL,
        notify_url VARCHAR(1024) NOT NULL,
        return_url VARCHAR(1024),
        sub_merchant_no VARCHAR(64),
        status VARCHAR(16) NOT NULL CHECK (status IN ('signing', 'active', 'terminated', 'expired')),
        terminated_by VARCHAR(16),
        notice_amount BIGINT,
        noticed_at TIMESTAMP WITH TIME ZONE,
        notices INTEGER NOT NULL DEFAULT 0,
        signed_at TIMESTAMP WITH TIME ZONE,
        terminated_at TIMESTAMP WITH TIME ZONE,
        created_at TIMESTAMP WITH TIME ZONE NOT NULL,
        updated_at TIMESTAMP WITH TIME ZONE NOT NULL
      )`);
    await sql(`ALTER TABLE sandbox_orders ADD COLUMN IF NOT EXISTS contract_id VARCHAR(64)`);
    await sql(`ALTER TABLE sandbox_orders ADD COLUMN IF NOT EXISTS contract_day VARCHAR(10)`);
    await sql(
      `CREATE INDEX IF NOT EXISTS sandbox_orders_contract ON sandbox_orders (contract_id, contract_day) WHERE contract_id IS NOT NULL`,
    );
  },
  async down({ context: qi }) {
    await qi.sequelize.query('DROP INDEX IF EXISTS sandbox_orders_contract');
    await qi.sequelize.query('ALTER TABLE sandbox_orders DROP COLUMN IF EXISTS contract_day');
    await qi.sequelize.query('ALTER TABLE sandbox_orders DROP COLUMN IF EXISTS contract_id');
    await qi.sequelize.query('DROP TABLE IF EXISTS sandbox_contracts');
  },
};
