/**
 * The system under test: either a whole durapay brought up here exactly as `npm start` does
 * (in a scratch directory, on free ports), or one already running that `--base-url` points at.
 */
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { databaseUrlFor } from '../../src/platform/db';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { freePort, waitForReady } from '../../src/platform/net';
import { DURAPAY_BIN } from '../../src/platform/paths';
import { startCluster, type Cluster } from '../../src/cli/dev/cluster';
import { spawnEmbeddedPostgres } from '../../src/cli/dev/embedded-postgres';
import { loadConfig } from '../../src/config';
import { newPayloadKeyEntry, resolvePayloadKeys } from '../../src/platform/crypto/keyring';
import { commandLine, findProcesses, HAS_PROC, processTree } from './procstat';

const run = promisify(execFile);

export interface Stack {
  baseUrl: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  app: AppCredentials;
  /** The stack's payload keys (DURAPAY_PAYLOAD_KEYS form): the bench's own Temporal client reads its payloads with them. */
  payloadKeys: string;
  /** Root pid of each role whose CPU and memory are measured (api, worker, temporal, postgres). */
  roles: Record<string, number>;
  /** What was measured, in one line, for the report. */
  description: string;
  /** The JSON lines durapay's processes wrote, and the supervisor's lines (own stack only). */
  logFile?: string;
  /** The database the stack uses (own stack only). */
  databaseUrl?: string;
  /** The pid of `durapay start` (own stack only): every process of the stack is below it. */
  supervisorPid?: number;
  /** The production topology's processes (--topology cluster), to stop one of them. */
  cluster?: Cluster;
  stop(): Promise<void>;
}

/** Stops every stack this process started and has not stopped yet (Ctrl-C, even mid-start). */
const running = new Set<() => Promise<void>>();
export async function stopAllStacks(): Promise<void> {
  await Promise.allSettled([...running].map((stop) => stop()));
}

/** The bench drives load only at this machine: a base URL must name a loopback address. */
export function assertLoopback(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error(`--base-url ${baseUrl} is not a URL`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  if (!loopback || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new Error(
      `--base-url must be an http(s) URL on this machine's loopback (127.0.0.1, ::1 or localhost), not ${baseUrl}`,
    );
  }
  return url;
}

/** Creates the bench's own app with `durapay apps create`, against the database `env` points at. */
async function createApp(env: NodeJS.ProcessEnv, name: string, scopes: string): Promise<AppCredentials> {
  try {
    const { stdout } = await run(
      process.execPath,
      [DURAPAY_BIN, 'apps', 'create', '--name', name, '--scopes', scopes, '--json'],
      { env, timeout: 60_000 },
    );
    return JSON.parse(stdout.trim()) as AppCredentials;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`could not create the bench's app: ${stderr || String(err)}`);
  }
}

export interface OwnStackOptions {
  /** Scratch directory: durapay's data dir (embedded Postgres, Temporal SQLite), logs. */
  workDir: string;
  /** A Postgres server to create a scratch database on; unset means the embedded Postgres. */
  databaseUrl?: string;
  /** Node flags for durapay's processes (--cpu-prof, for instance). */
  nodeFlags?: string[];
  /** The scopes of the app created for the run (default `payments`). */
  appScopes?: string;
  /** The name the app and the scratch database are given (default `bench`). */
  purpose?: string;
  /** More settings for durapay's processes (DURAPAY_TIME_SCALE, for instance). */
  env?: NodeJS.ProcessEnv;
  say: (line: string) => void;
}

/**
 * Brings up the whole stack with `durapay start` (embedded Postgres or a scratch database,
 * Temporal dev server, migrations, worker, API) in `workDir`, and creates the bench's app.
 * The per-app rate limit is lifted: it is a policy, not a cost, and would otherwise cap every
 * phase at 100 requests/s; the bucket is still taken on every request.
 */
export async function startOwnStack(opts: OwnStackOptions): Promise<Stack> {
  fs.mkdirSync(opts.workDir, { recursive: true });
  // Under root, the embedded Postgres runs as the `postgres` user, which must reach its data dir.
  fs.chmodSync(opts.workDir, 0o755);
  const [apiPort, temporalPort, uiPort, pgPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const stamp = Date.now().toString(36);

  let scratchDb: { admin: string; name: string } | undefined;
  if (opts.databaseUrl) {
    scratchDb = { admin: opts.databaseUrl, name: `durapay_${opts.purpose ?? 'bench'}_${stamp}` };
    const pg = new PgClient({ connectionString: opts.databaseUrl });
    await pg.connect();
    try {
      await pg.query(`CREATE DATABASE "${scratchDb.name}"`);
    } finally {
      await pg.end();
    }
  }

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DURAPAY_DATA_DIR: path.join(opts.workDir, 'data'),
    PORT: String(apiPort),
    HOST: '127.0.0.1',
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(uiPort),
    DURAPAY_PG_PORT: String(pgPort),
    RATE_LIMIT_PER_SEC: '1000000',
    RATE_LIMIT_BURST: '1000000',
    DURAPAY_PAYLOAD_KEYS: newPayloadKeyEntry('bench-1'),
    DATABASE_URL: scratchDb ? databaseUrlFor(scratchDb.admin, scratchDb.name) : '',
    TEMPORAL_ADDRESS: '',
    ...opts.env,
  };
  const logFile = path.join(opts.workDir, 'durapay.log');
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), DURAPAY_BIN, 'start'], {
    env,
    detached: true,
    stdio: ['ignore', log, 'pipe'],
  });
  fs.closeSync(log);
  // The supervisor's progress lines (a first-time build of the Temporal CLI takes minutes).
  readline.createInterface({ input: child.stderr! }).on('line', (line) => {
    fs.appendFileSync(logFile, `${line}\n`);
    if (/Building|Built|…|could not|exited|error|unexpectedly|again/i.test(line))
      opts.say(`  durapay start: ${line.trim()}`);
  });

  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const stop = async () => {
    running.delete(stop);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGINT');
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 60_000);
      await exited;
      clearTimeout(timer);
    }
    if (scratchDb) {
      const pg = new PgClient({ connectionString: scratchDb.admin });
      await pg.connect();
      try {
        await pg.query(`DROP DATABASE IF EXISTS "${scratchDb.name}" WITH (FORCE)`);
      } finally {
        await pg.end();
      }
    }
  };

  running.add(stop);
  try {
    // A first start may build the Temporal CLI (minutes); its progress is shown meanwhile.
    await waitForReady(`${baseUrl}/readyz`, { timeoutMs: 900_000, child, what: 'durapay start' });
    const roles: Record<string, number> = {};
    for (const pid of processTree(child.pid!).slice(1)) {
      const cmd = commandLine(pid);
      if (/durapay\.js api$/.test(cmd)) roles.api = pid;
      else if (/durapay\.js worker$/.test(cmd)) roles.worker = pid;
      else if (/ server start-dev /.test(cmd)) roles.temporal = pid;
      else if (/durapay\.js postgres /.test(cmd)) roles.postgres = pid;
    }
    if (HAS_PROC && (!roles.api || !roles.worker))
      throw new Error(`could not find the API and worker processes of durapay start (pid ${child.pid})`);
    const app = await createApp(env, `${opts.purpose ?? 'bench'}-${stamp}`, opts.appScopes ?? 'payments');
    return {
      baseUrl,
      temporalAddress: `127.0.0.1:${temporalPort}`,
      namespace: 'default',
      taskQueue: 'durapay',
      app,
      payloadKeys: env.DURAPAY_PAYLOAD_KEYS!,
      roles,
      description: `own stack (durapay start: ${scratchDb ? 'Postgres database on DATABASE_URL' : 'embedded Postgres'}, Temporal dev server)`,
      logFile,
      // The embedded cluster's credentials are fixed and local (src/cli/dev/embedded-postgres.ts).
      databaseUrl: scratchDb
        ? databaseUrlFor(scratchDb.admin, scratchDb.name)
        : `postgres://postgres:durapay@127.0.0.1:${pgPort}/durapay`,
      supervisorPid: child.pid,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw new Error(`${err instanceof Error ? err.message : String(err)} (log: ${logFile})`);
  }
}

export interface AttachOptions {
  baseUrl: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  /** Pids of the running API and worker; found by their command lines when not given. */
  apiPid?: number;
  workerPid?: number;
  appScopes?: string;
  purpose?: string;
  say: (line: string) => void;
}

/**
 * Uses a stack that is already running (`npm start`, or `durapay api` + `durapay worker`):
 * creates the bench's app in the database the environment points at (DATABASE_URL, else the
 * embedded Postgres of DURAPAY_DATA_DIR) and measures the processes it can find.
 */
export async function attachStack(opts: AttachOptions): Promise<Stack> {
  const url = assertLoopback(opts.baseUrl);
  const baseUrl = url.origin;
  await waitForReady(`${baseUrl}/readyz`, { timeoutMs: 10_000 });
  const only = (pattern: RegExp, what: string): number | undefined => {
    const found = findProcesses(pattern);
    if (found.length === 1) return found[0];
    opts.say(
      `  ${found.length === 0 ? 'no' : 'more than one'} ${what} process found: its CPU and memory are not measured (pass --${what}-pid)`,
    );
    return undefined;
  };
  const roles: Record<string, number> = {};
  const api = opts.apiPid ?? only(/durapay\.js api$/, 'api');
  const worker = opts.workerPid ?? only(/durapay\.js worker$/, 'worker');
  if (api) roles.api = api;
  if (worker) roles.worker = worker;
  const temporal = findProcesses(/ server start-dev /);
  if (temporal.length === 1) roles.temporal = temporal[0]!;
  const postgres = findProcesses(/durapay\.js postgres /);
  if (postgres.length === 1) roles.postgres = postgres[0]!;
  const app = await createApp(
    process.env,
    `${opts.purpose ?? 'bench'}-${Date.now().toString(36)}`,
    opts.appScopes ?? 'payments',
  );
  opts.say(
    "  reusing a running stack: its rate limit applies (RATE_LIMIT_PER_SEC, 100/s by default; 429s count as errors), and the bench's orders stay in its Temporal and database (it ends a phase's open orders before the next phase; their rows stay pending)",
  );
  return {
    baseUrl,
    temporalAddress: opts.temporalAddress,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    app,
    // The running stack's keys, as its processes resolve them from this environment.
    payloadKeys: resolvePayloadKeys(loadConfig())
      .keys.map((k) => `${k.id}:${k.key.toString('base64')}`)
      .join(','),
    roles,
    description: `running stack at ${baseUrl} (Temporal ${opts.temporalAddress})`,
    stop: async () => undefined,
  };
}

/** The postmaster of the Postgres server `url` points at: the parent of this connection's backend. */
async function postmasterPid(url: string): Promise<number | undefined> {
  const pg = new PgClient({ connectionString: url });
  try {
    await pg.connect();
    const { rows } = await pg.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const stat = fs.readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    // A server in another pid namespace (a container) names a pid that is not its own here.
    return /postgres/.test(fs.readFileSync(`/proc/${ppid}/comm`, 'utf8')) ? ppid : undefined;
  } catch {
    return undefined; // Not on this machine, or no /proc: its CPU is not measured.
  } finally {
    await pg.end().catch(() => undefined);
  }
}

/**
 * The production topology (`--topology cluster`): the Temporal server built from
 * go.temporal.io/server on Postgres (DATABASE_URL, else an embedded one) with four shards and
 * deploy/temporal/dynamicconfig.yaml, `apis` API processes behind a round-robin balancer (in
 * this process, measured with the bench) and `workers` workers.
 */
export async function startClusterStack(
  opts: OwnStackOptions & { apis: number; workers: number },
): Promise<Stack> {
  fs.mkdirSync(opts.workDir, { recursive: true });
  fs.chmodSync(opts.workDir, 0o755);
  let embedded: { stop(): Promise<void> } | undefined;
  let adminUrl = opts.databaseUrl;
  if (!adminUrl) {
    const spawned = await spawnEmbeddedPostgres({
      dataDir: path.join(opts.workDir, 'postgres'),
      port: await freePort(),
      database: 'postgres',
    });
    embedded = spawned;
    adminUrl = spawned.url;
  }
  let stopCluster: (() => Promise<void>) | undefined;
  const stop = async () => {
    running.delete(stop);
    await stopCluster?.();
    await embedded?.stop();
  };
  running.add(stop);
  try {
    const cluster = await startCluster({
      onStarting: (stopAll) => (stopCluster = stopAll),
      adminUrl,
      workDir: opts.workDir,
      cacheDir: loadConfig().cacheDir,
      apis: opts.apis,
      workers: opts.workers,
      nodeFlags: opts.nodeFlags,
      purpose: `${opts.purpose ?? 'bench'}_cluster`,
      env: { RATE_LIMIT_PER_SEC: '1000000', RATE_LIMIT_BURST: '1000000', ...opts.env },
      progress: (line) => opts.say(`  ${line}`),
    });
    const roles: Record<string, number> = { temporal: cluster.temporal.process.pid! };
    for (const p of [...cluster.apis, ...cluster.workers]) roles[p.name] = p.child.pid!;
    const postgres = await postmasterPid(adminUrl);
    if (postgres) roles.postgres = postgres;
    const app = await createApp(
      cluster.env,
      `${opts.purpose ?? 'bench'}-${Date.now().toString(36)}`,
      opts.appScopes ?? 'payments',
    );
    return {
      baseUrl: cluster.baseUrl,
      temporalAddress: cluster.temporalAddress,
      namespace: cluster.namespace,
      taskQueue: cluster.taskQueue,
      app,
      payloadKeys: cluster.env.DURAPAY_PAYLOAD_KEYS!,
      roles,
      description: `cluster topology (Temporal server ${cluster.temporal.address} on ${embedded ? 'embedded Postgres' : 'DATABASE_URL'}, 4 shards; ${opts.apis} APIs behind a balancer, ${opts.workers} workers)`,
      databaseUrl: cluster.databaseUrl,
      cluster,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
