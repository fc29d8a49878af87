/**
 * durapay in its production topology on one machine: the Temporal server on Postgres (not the
 * dev server), several API processes behind a round-robin balancer and several workers, all
 * sharing one database — what docker-compose.yml runs with `--scale api=2 --scale worker=2`.
 * Each process can be killed and started again, to prove that nothing is lost when one dies.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { databaseUrlFor } from '../../platform/db';
import { freePort, waitForReady } from '../../platform/net';
import { DURAPAY_BIN } from '../../platform/paths';
import { startBalancer, type Balancer } from './balancer';
import type { Progress } from './go-build';
import { newPayloadKeyEntry } from '../../platform/crypto/keyring';
import { ensureTemporalServer, startClusterServer, type ClusterServer } from './temporal-server';

const run = promisify(execFile);

export interface ClusterOptions {
  /** A Postgres role that may create databases; durapay's and Temporal's databases go there. */
  adminUrl: string;
  /** Scratch directory: config, logs. */
  workDir: string;
  /** Where the Temporal server is built and cached. */
  cacheDir: string;
  apis?: number;
  workers?: number;
  /** More settings for every durapay process. */
  env?: NodeJS.ProcessEnv;
  /** Node flags for durapay's processes (--cpu-prof, for instance). */
  nodeFlags?: string[];
  /** The `durapay` executable the processes run: this checkout's or installation's unless given. */
  durapayBin?: string;
  /**
   * Called at once with a function that stops whatever has been started so far: a caller
   * interrupted during start-up (Ctrl-C, a test's timeout) leaves nothing running.
   */
  onStarting?: (stop: () => Promise<void>) => void;
  /** Names the scratch databases: `durapay_<purpose>_…`, `temporal_<purpose>_…` (default `cluster`). */
  purpose?: string;
  progress: Progress;
}

export interface ClusterProcess {
  /** `api-1`, `worker-2`… */
  name: string;
  role: 'api' | 'worker';
  /** The API's own port, or the worker's metrics port. */
  port: number;
  logFile: string;
  child: ChildProcess;
  /** Resolves once the current process serves (an API answers /readyz; a worker polls). */
  ready: Promise<void>;
  alive(): boolean;
  /** SIGKILL, as a crash: nothing is flushed or drained. */
  kill(): Promise<void>;
  /** SIGTERM and wait: a graceful stop. */
  stop(): Promise<void>;
  /** Starts the process again (same port, same settings) and waits until it is ready. */
  restart(): Promise<void>;
}

export interface Cluster {
  /** The balancer in front of the APIs: what clients, pay URLs and callbacks use. */
  baseUrl: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  databaseUrl: string;
  /** The settings durapay's processes run with (for `durapay apps create`, for instance). */
  env: NodeJS.ProcessEnv;
  temporal: ClusterServer;
  balancer: Balancer;
  apis: ClusterProcess[];
  workers: ClusterProcess[];
  stop(): Promise<void>;
}

function spawnDurapay(
  role: 'api' | 'worker',
  name: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
  nodeFlags: string[],
  bin: string,
): { child: ChildProcess; ready: Promise<void> } {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...nodeFlags, bin, role], {
    env,
    stdio: ['ignore', 'pipe', log],
    detached: true,
  });
  fs.closeSync(log);
  let seen = '';
  const out = fs.createWriteStream(logFile, { flags: 'a' });
  out.on('error', () => undefined); // a log that cannot be written must not take the caller down
  // The stream ends when stdout does, which may be after the process's 'exit'.
  child.stdout!.pipe(out);
  const ready = new Promise<void>((resolve, reject) => {
    if (role === 'worker') {
      const timer = setTimeout(() => {
        reject(new Error(`${name} did not log "worker running" within 120 s; see ${logFile}`));
      }, 120_000);
      const onData = (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('"message":"worker running"')) {
          child.stdout!.off('data', onData);
          clearTimeout(timer);
          seen = '';
          resolve();
        } else if (seen.length > 100_000) seen = seen.slice(-1_000);
      };
      child.stdout!.on('data', onData);
      child.once('exit', () => clearTimeout(timer));
    }
    child.once('exit', (code, signal) =>
      reject(new Error(`${name} exited (${signal ?? `code ${code}`}) before it was ready; see ${logFile}`)),
    );
    if (role === 'api') {
      waitForReady(`http://127.0.0.1:${env.PORT}/readyz`, { timeoutMs: 120_000, child, what: name }).then(
        resolve,
        reject,
      );
    }
  });
  ready.catch(() => undefined);
  return { child, ready };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const pg = new PgClient({ connectionString: adminUrl });
  await pg.connect();
  try {
    await pg.query(`CREATE DATABASE "${name}"`);
  } finally {
    await pg.end();
  }
}

async function dropDatabases(adminUrl: string, names: string[]): Promise<void> {
  const pg = new PgClient({ connectionString: adminUrl });
  await pg.connect();
  try {
    for (const name of names) await pg.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await pg.end();
  }
}

/**
 * Builds the Temporal server when it is not cached, creates scratch databases (durapay's,
 * Temporal's and its visibility), migrates, and starts the server, the workers, the APIs and
 * the balancer. `stop()` stops them in order and drops the scratch databases.
 */
export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const apiCount = opts.apis ?? 2;
  const workerCount = opts.workers ?? 2;
  fs.mkdirSync(opts.workDir, { recursive: true });
  const logDir = path.join(opts.workDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const binaries = await ensureTemporalServer(opts.cacheDir, opts.progress);

  const stamp = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const purpose = opts.purpose ?? 'cluster';
  const durapayDb = `durapay_${purpose}_${stamp}`;
  const temporalDb = `temporal_${purpose}_${stamp}`;
  const databases = [durapayDb, temporalDb, `${temporalDb}_visibility`];
  const databaseUrl = databaseUrlFor(opts.adminUrl, durapayDb);
  const processes: ClusterProcess[] = [];
  let temporal: ClusterServer | undefined;
  let balancer: Balancer | undefined;
  let serverChild: ChildProcess | undefined;

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // APIs first, then workers (in-flight work finishes against a live server), then Temporal.
    for (const role of ['api', 'worker'] as const) {
      await Promise.all(processes.filter((p) => p.role === role).map((p) => p.stop()));
    }
    await balancer?.close();
    if (temporal) await temporal.stop();
    else if (serverChild && serverChild.exitCode === null) serverChild.kill('SIGKILL');
    await dropDatabases(opts.adminUrl, databases).catch(() => undefined);
  };

  opts.onStarting?.(stop);
  try {
    await createDatabase(opts.adminUrl, durapayDb);
    temporal = await startClusterServer({
      binaries,
      adminUrl: opts.adminUrl,
      databasePrefix: temporalDb,
      workDir: opts.workDir,
      namespace: 'default',
      onSpawn: (child) => (serverChild = child),
      progress: opts.progress,
    });
    const apiPorts: number[] = [];
    for (let i = 0; i < apiCount; i++) apiPorts.push(await freePort());
    const alive = new Set(apiPorts);
    balancer = await startBalancer(() => apiPorts.filter((p) => alive.has(p)));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'durapay',
      DURAPAY_DATA_DIR: path.join(opts.workDir, 'data'),
      DURAPAY_CACHE_DIR: opts.cacheDir,
      DURAPAY_MASTER_KEY: randomBytes(32).toString('base64'),
      DURAPAY_PAYLOAD_KEYS: newPayloadKeyEntry('cluster-1'),
      HOST: '127.0.0.1',
      // Callbacks and the sandbox's pay URLs reach whichever API is up, through the balancer.
      PUBLIC_BASE_URL: balancer.url,
      SANDBOX_BASE_URL: `${balancer.url}/sandbox`,
      SANDBOX_SECRET: randomBytes(24).toString('base64url'),
      LOG_LEVEL: 'info',
      ...opts.env,
    };

    opts.progress('durapay: migrating the cluster database');
    await run(process.execPath, [opts.durapayBin ?? DURAPAY_BIN, 'migrate'], { env, timeout: 120_000 });

    const launch = (role: 'api' | 'worker', index: number, port: number): ClusterProcess => {
      const name = `${role}-${index}`;
      const logFile = path.join(logDir, `${name}.log`);
      const procEnv =
        role === 'api' ? { ...env, PORT: String(port) } : { ...env, WORKER_METRICS_PORT: String(port) };
      const bin = opts.durapayBin ?? DURAPAY_BIN;
      let current = spawnDurapay(role, name, procEnv, logFile, opts.nodeFlags ?? [], bin);
      const proc: ClusterProcess = {
        name,
        role,
        port,
        logFile,
        get child() {
          return current.child;
        },
        get ready() {
          return current.ready;
        },
        alive: () => current.child.exitCode === null && current.child.signalCode === null,
        async kill() {
          if (role === 'api') alive.delete(port);
          const done = exited(current.child);
          current.child.kill('SIGKILL');
          await done;
        },
        async stop() {
          if (role === 'api') alive.delete(port);
          const done = exited(current.child);
          current.child.kill('SIGTERM');
          const timer = setTimeout(() => current.child.kill('SIGKILL'), 30_000);
          await done;
          clearTimeout(timer);
        },
        async restart() {
          if (proc.alive()) await proc.stop();
          current = spawnDurapay(role, name, procEnv, logFile, opts.nodeFlags ?? [], bin);
          await current.ready;
          if (role === 'api') alive.add(port);
        },
      };
      processes.push(proc);
      return proc;
    };
    // Workers first: they register the search attributes and are polling when the first request comes.
    const workerPorts: number[] = [];
    for (let i = 0; i < workerCount; i++) workerPorts.push(await freePort());
    const workers = workerPorts.map((port, i) => launch('worker', i + 1, port));
    const apis = apiPorts.map((port, i) => launch('api', i + 1, port));
    opts.progress(`durapay: ${workerCount} worker(s) and ${apiCount} API(s) starting`);
    await Promise.all([...workers, ...apis].map((p) => p.ready));

    return {
      baseUrl: balancer.url,
      temporalAddress: temporal.address,
      namespace: 'default',
      taskQueue: 'durapay',
      databaseUrl,
      env,
      temporal,
      balancer,
      apis,
      workers,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
