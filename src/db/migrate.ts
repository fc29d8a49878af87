import { Umzug, SequelizeStorage } from 'umzug';
import type { Sequelize } from 'sequelize';
import type { Logger } from '../lib/logger';
import { migrations } from './migrations';

/** An arbitrary constant: the key of the advisory lock that keeps two migrators from racing. */
const MIGRATION_LOCK_KEY = 7_284_019_331;

function createMigrator(sequelize: Sequelize, logger?: Logger) {
  return new Umzug({
    migrations,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
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
 * Applies every pending migration. Several processes may start at once (api, worker, a
 * second `npm start`), so the run holds a Postgres advisory lock for its whole length.
 */
export async function migrateUp(sequelize: Sequelize, logger?: Logger): Promise<string[]> {
  return sequelize.transaction(async (transaction) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(:key)', {
      replacements: { key: MIGRATION_LOCK_KEY },
      transaction,
    });
    const applied = await createMigrator(sequelize, logger).up();
    return applied.map((m) => m.name);
  });
}

export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  return (await createMigrator(sequelize).pending()).map((m) => m.name);
}
