import type { Migration } from '../../src/platform/db/migrate';

/**
 * Barcode payments (SPEC §14): an order the cashier made by scanning the buyer's code keeps the
 * code's hash (a repeat of the create with another code is refused), what the buyer does (read
 * off the sandbox's code, `sandbox/barcode.ts`), and its reverse: when it came, how often it was
 * asked for, and whether the money the buyer had paid went back with it. The simulator's ledger
 * of money it holds is every order `paid`: a reversed order is `closed`, its money returned.
 */
export const barcode: Migration = {
  name: '0005-barcode',
  async up({ context: qi }) {
    const sql = (text: string) => qi.sequelize.query(text);
    await sql(`ALTER TABLE sandbox_orders ADD COLUMN IF NOT EXISTS auth_code_sha256 VARCHAR(64)`);
    await sql(`ALTER TABLE sandbox_orders ADD COLUMN IF NOT EXISTS buyer VARCHAR(32)`);
    await sql(`ALTER TABLE sandbox_orders ADD COLUMN IF NOT EXISTS reversed_at TIMESTAMP WITH TIME ZONE`);
    await sql(
      `ALTER TABLE sandbox_orders ADD COLUMN IF NOT EXISTS reverse_refunded BOOLEAN NOT NULL DEFAULT false`,
    );
    await sql(
      `ALTER TABLE sandbox_orders ADD COLUMN IF NOT EXISTS reverse_requests INTEGER NOT NULL DEFAULT 0`,
    );
  },
  async down({ context: qi }) {
    for (const column of [
      'auth_code_sha256',
      'buyer',
      'reversed_at',
      'reverse_refunded',
      'reverse_requests',
    ]) {
      await qi.sequelize.query(`ALTER TABLE sandbox_orders DROP COLUMN IF EXISTS ${column}`);
    }
  },
};
