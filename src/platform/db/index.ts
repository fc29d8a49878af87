import { Sequelize } from 'sequelize';

export interface Database {
  sequelize: Sequelize;
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
  return { sequelize, close: () => sequelize.close() };
}

const bound = new WeakMap<Sequelize, Map<unknown, unknown>>();

/**
 * A module's model classes bound to this connection, defined on first use: each module owns its
 * models and defines them itself, and a connection defines each set once.
 */
export function modelsFor<T>(sequelize: Sequelize, define: (sequelize: Sequelize) => T): T {
  let sets = bound.get(sequelize);
  if (!sets) bound.set(sequelize, (sets = new Map()));
  if (!sets.has(define)) sets.set(define, define(sequelize));
  return sets.get(define) as T;
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
