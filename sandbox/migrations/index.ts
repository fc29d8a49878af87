import type { Sequelize } from 'sequelize';
import { applyMigrations, type MigrationSet } from '../../src/platform/db/migrate';
import type { Logger } from '../../src/platform/logger';
import { channelTables } from './0001-channel-tables';
import { requestCounts } from './0002-request-counts';
import { returnsUnfreezesAbnormal } from './0003-returns-unfreezes-abnormal';
import { transfers } from './0004-transfers';
import { barcode } from './0005-barcode';
import { contracts } from './0006-contracts';

/**
 * The sandbox's own migrations, recorded in sandbox_migrations, never in the gateway's table:
 * the sandbox may share the gateway's database (as `npm start` does) or have one of its own.
 * Listed here rather than found by a glob, so that the same list works from the sources and the
 * compiled build.
 */
export const SANDBOX_MIGRATIONS: MigrationSet = {
  migrations: [channelTables, requestCounts, returnsUnfreezesAbnormal, transfers, barcode, contracts],
  tableName: 'sandbox_migrations',
  // Not the gateway's key: the two sets migrate independently, even in one database.
  lockKey: 7_284_019_332,
};

/** Creates or brings up to date the sandbox's tables; answers the names of the migrations run. */
export function migrateSandbox(sequelize: Sequelize, logger?: Logger): Promise<string[]> {
  return applyMigrations(SANDBOX_MIGRATIONS, sequelize, logger);
}
