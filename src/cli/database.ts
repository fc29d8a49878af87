import path from 'node:path';
import type { Config } from '../config';
import { connectDatabase, type Database } from '../platform/db';
import { startEmbeddedPostgres } from './dev/embedded-postgres';
import type { Logger } from '../platform/logger';

/**
 * Runs `fn` against the database the server uses: DATABASE_URL, or the embedded Postgres in
 * the data directory (joined when `npm start` is running it, started for the command if not).
 */
export async function withDatabase<T>(
  config: Config,
  logger: Logger,
  fn: (db: Database, url: string) => Promise<T>,
): Promise<T> {
  const pg = config.database.url
    ? undefined
    : await startEmbeddedPostgres({
        dataDir: path.join(config.dataDir, 'postgres'),
        port: config.database.embeddedPort,
        database: 'durapay',
        logger,
      });
  const url = config.database.url ?? pg!.url;
  const db = connectDatabase(url);
  try {
    return await fn(db, url);
  } finally {
    await db.close();
    await pg?.stop();
  }
}
