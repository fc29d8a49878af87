import { Sequelize } from 'sequelize';
import { initModels, type Models } from './models';

export interface Database {
  sequelize: Sequelize;
  models: Models;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  poolMax?: number;
  /** How long a query waits for a free connection or a new one before failing. */
  acquireTimeoutMs?: number;
}

export function connectDatabase(url: string, options: DatabaseOptions = {}): Database {
  const sequelize = new Sequelize(url, {
    dialect: 'postgres',
    logging: false,
    pool: { max: options.poolMax ?? 10, min: 0, idle: 10_000, acquire: options.acquireTimeoutMs ?? 10_000 },
    dialectOptions: { connectionTimeoutMillis: options.acquireTimeoutMs ?? 10_000 },
    define: { underscored: true, timestamps: false },
  });
  const models = initModels(sequelize);
  return { sequelize, models, close: () => sequelize.close() };
}

/** The host, port and database of a URL, without credentials: safe to log or show. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

/** The same server and credentials as `url`, another database on it. */
export function databaseUrlFor(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
