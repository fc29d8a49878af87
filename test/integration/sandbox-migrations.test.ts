/**
 * The simulated sandbox upstream's tables belong to sandbox/: the gateway's migrations
 * 0005-sandbox and 0008-sandbox-request-counts are kept as no-ops so that executed histories stay
 * the same, and the sandbox's own migrations (in sandbox_migrations) create the tables when they
 * are missing and keep them, rows and all, on a database the gateway's old migrations built.
 */
import { QueryTypes } from 'sequelize';
import { migrateSandbox } from '../../sandbox';
import { createTestDatabase, type TestDatabase } from '../support/harness';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
});

async function names(table: string): Promise<string[]> {
  const rows = await database.db.sequelize.query<{ name: string }>(
    `SELECT name FROM ${table} ORDER BY name`,
    {
      type: QueryTypes.SELECT,
    },
  );
  return rows.map((r) => r.name);
}

test('when a database is migrated, then the gateway and the sandbox each record their own migrations', async () => {
  const gateway = await names('schema_migrations');
  expect(gateway).toEqual(expect.arrayContaining(['0005-sandbox', '0008-sandbox-request-counts']));
  expect(gateway).not.toContain('0001-channel-tables');
  expect(await names('sandbox_migrations')).toEqual([
    '0001-channel-tables',
    '0002-request-counts',
    '0003-returns-unfreezes-abnormal',
    '0004-transfers',
    '0005-barcode',
    '0006-contracts',
  ]);
});

test('when the sandbox migrations run where the gateway once created the sandbox tables, then the tables and their rows are kept', async () => {
  const sequelize = database.db.sequelize;
  await sequelize.query(
    `INSERT INTO sandbox_files (file_id, file_name, media_type, size, sha256, created_at)
     VALUES ('sbx_file_kept', 'kept.png', 'image/png', 1, 'x', now())`,
  );
  // A database migrated before the sandbox had migrations of its own: tables there, none recorded.
  await sequelize.query('DROP TABLE sandbox_migrations');

  expect(await migrateSandbox(sequelize)).toEqual([
    '0001-channel-tables',
    '0002-request-counts',
    '0003-returns-unfreezes-abnormal',
    '0004-transfers',
    '0005-barcode',
    '0006-contracts',
  ]);
  expect(await migrateSandbox(sequelize)).toEqual([]);
  const [kept] = await sequelize.query<{ file_name: string }>(
    "SELECT file_name FROM sandbox_files WHERE file_id = 'sbx_file_kept'",
    { type: QueryTypes.SELECT },
  );
  expect(kept?.file_name).toBe('kept.png');
});
