import { Umzug, SequelizeStorage } from 'umzug';
import type { Sequelize } from 'sequelize';
import type { Logger } from '../logger';
import { migrations, type Migration } from './migrations';

export type { Migration };

/** One ordered list of migrations with the table that records which of them ran. */
export interface MigrationSet {
  migrations: Migration[];
  /** The umzug storage table; each set has its own, so their histories never mix. */
  tableName: string;
  /** The key of the Postgres advisory lock that keeps two migrators of this set from racing. */
  lockKey: number;
}

/** The gateway's own tables. An arbitrary constant as the lock key. */
export const GATEWAY_MIGRATIONS: MigrationSet = {
  migrations,
  tableName: 'schema_migrations',
  lockKey: 7_284_019_331,
};

function createMigrator(set: MigrationSet, sequelize: Sequelize, logger?: Logger) {
  return new Umzug({
    migrations: set.migrations,
    context: sequelize.getQueryInterface(),
    // A model name of its own too: SequelizeStorage reuses a model already defined under the same
    // name on this connection, table and all, so two sets would otherwise share one table.
    storage: new SequelizeStorage({ sequelize, tableName: set.tableName, modelName: set.tableName }),
    logger: logger
      ? {
          info: (m) => logger.info('migration', m),
          warn: (m) => logger.warn('migration', m),
          error: (m) => logger.error('migration', m),
          debug: (m) => logger.debug('migration', m),
        }
      : undefined,
  });
}

/**
 * Applies every pending migration of a set. Several processes may start at once (api, worker,
 * a second `npm start`), so the run holds a Postgres advisory lock for its whole length.
 */
export async function applyMigrations(
  set: MigrationSet,
  sequelize: Sequelize,
  logger?: Logger,
): Promise<string[]> {
  return sequelize.transaction(async (transaction) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(:key)', {
      replacements: { key: set.lockKey },
      transaction,
    });
    const applied = await createMigrator(set, sequelize, logger).up();
    return applied.map((m) => m.name);
  });
}

/** Applies the gateway's pending migrations. */
export async function migrateUp(sequelize: Sequelize, logger?: Logger): Promise<string[]> {
  return applyMigrations(GATEWAY_MIGRATIONS, sequelize, logger);
}

export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  return (await createMigrator(GATEWAY_MIGRATIONS, sequelize).pending()).map((m) => m.name);
}
