/**
 * The Temporal server as a production deployment runs it — one `temporal-server` process with
 * all four services, Postgres persistence and visibility, several history shards and
 * deploy/temporal/dynamicconfig.yaml: the shape of docker-compose.yml's `temporal` service,
 * built from the Go module proxy and run on this machine (the bench's `--topology cluster` and
 * the cluster end-to-end test).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { stopChild } from '../../platform/process';
import { ensureSearchAttributes, waitForTemporal } from '../../platform/temporal';
import { ROOT_DIR } from '../../platform/paths';
import { goInstall, isExecutable, type Progress } from './go-build';

const run = promisify(execFile);

/**
 * The server version the pinned Temporal CLI (1.5.1) embeds, and the one docker-compose.yml's
 * image runs. Its module has no `replace` directives, so `go install` builds it.
 */
export const TEMPORAL_SERVER_VERSION = '1.29.1';

/** deploy/temporal/dynamicconfig.yaml: what the compose deployment mounts into its server. */
export const DEPLOY_DYNAMIC_CONFIG = path.join(ROOT_DIR, 'deploy', 'temporal', 'dynamicconfig.yaml');

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
}

export function cachedServerBinaries(cacheDir: string): TemporalServerBinaries {
  const dir = path.join(cacheDir, `temporal-server-${TEMPORAL_SERVER_VERSION}`);
  return { server: path.join(dir, 'temporal-server'), sqlTool: path.join(dir, 'temporal-sql-tool') };
}

/** The server and its SQL schema tool, built once from the Go module proxy (minutes) and cached. */
export async function ensureTemporalServer(
  cacheDir: string,
  progress: Progress,
): Promise<TemporalServerBinaries> {
  const bins = cachedServerBinaries(cacheDir);
  if (isExecutable(bins.server) && isExecutable(bins.sqlTool)) return bins;
  const mod = 'go.temporal.io/server';
  await goInstall(
    {
      what: `the Temporal server v${TEMPORAL_SERVER_VERSION} and its SQL schema tool`,
      packages: [
        `${mod}/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
        `${mod}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
      ],
      targetDir: path.dirname(bins.server),
      binaries: { server: 'temporal-server', sql: 'temporal-sql-tool' },
      withoutGo: 'Install Go (https://go.dev/dl) to run the production-shaped topology.',
    },
    progress,
  );
  return bins;
}

export interface ClusterServerOptions {
  binaries: TemporalServerBinaries;
  /** A Postgres role that may create databases, as a URL (its database part is ignored). */
  adminUrl: string;
  /** Temporal's two databases: `<prefix>` and `<prefix>_visibility`, created when missing. */
  databasePrefix: string;
  workDir: string;
  namespace: string;
  /** History shards; fixed for the life of the databases (docker-compose's auto-setup uses 4). */
  shards?: number;
  dynamicConfigFile?: string;
  /** The frontend's gRPC port; a free one when unset. */
  port?: number;
  /** Told of the server's process as soon as it is spawned (to stop it if start-up is interrupted). */
  onSpawn?: (child: ChildProcess) => void;
  progress: Progress;
}

export interface ClusterServer {
  address: string;
  process: ChildProcess;
  logFile: string;
  /** The config file the server was started with. */
  configFile: string;
  stop(): Promise<void>;
}

interface PgTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

function pgTarget(adminUrl: string): PgTarget {
  const url = new URL(adminUrl);
  return {
    host: url.hostname || '127.0.0.1',
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username || 'postgres'),
    password: decodeURIComponent(url.password),
  };
}

/**
 * Creates the database when missing and brings its schema to the version the server expects
 * (the same steps as auto-setup's `temporal-sql-tool setup-schema` and `update-schema`).
 */
async function setupSchema(
  sqlTool: string,
  pg: PgTarget,
  database: string,
  schemaName: string,
): Promise<void> {
  const base = [
    '--plugin',
    'postgres12',
    '--ep',
    pg.host,
    '-p',
    String(pg.port),
    '-u',
    pg.user,
    '--db',
    database,
  ];
  const env = { ...process.env, SQL_PASSWORD: pg.password };
  const tool = async (args: string[]) => {
    try {
      await run(sqlTool, [...base, ...args], { env, timeout: 120_000 });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(
        `temporal-sql-tool ${args[0]} on ${database} failed: ${(e.stderr || e.message).trim()}`,
      );
    }
  };
  try {
    await tool(['create-database']);
  } catch (err) {
    if (!/already exists/.test(String(err))) throw err;
  }
  await tool(['setup-schema', '-v', '0.0']);
  await tool(['update-schema', '--schema-name', schemaName]);
}

function sqlStore(pg: PgTarget, database: string, maxConns: number) {
  return {
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${pg.host}:${pg.port}`,
      connectProtocol: 'tcp',
      user: pg.user,
      password: pg.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  };
}

/** The server's configuration (JSON is YAML): four services on loopback, Postgres stores. */
export function clusterServerConfig(opts: {
  pg: PgTarget;
  databasePrefix: string;
  shards: number;
  dynamicConfigFile: string;
  ports: { frontend: number; frontendHttp: number; history: number; matching: number; worker: number };
  membershipPorts: { frontend: number; history: number; matching: number; worker: number };
}): Record<string, unknown> {
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: opts.shards,
      datastores: {
        default: sqlStore(opts.pg, opts.databasePrefix, 10),
        visibility: sqlStore(opts.pg, `${opts.databasePrefix}_visibility`, 5),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: service(opts.ports.frontend, opts.membershipPorts.frontend, {
        httpPort: opts.ports.frontendHttp,
      }),
      history: service(opts.ports.history, opts.membershipPorts.history),
      matching: service(opts.ports.matching, opts.membershipPorts.matching),
      worker: service(opts.ports.worker, opts.membershipPorts.worker),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${opts.ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: opts.dynamicConfigFile, pollInterval: '10s' },
  };
}

/** Checks a dynamic config file with the server's own validator (known keys, value types). */
export async function validateDynamicConfig(binaries: TemporalServerBinaries, file: string): Promise<string> {
  const { stdout, stderr } = await run(binaries.server, ['validate-dynamic-config', file], {
    timeout: 30_000,
  });
  return `${stdout}${stderr}`;
}

/** Registers the namespace (one day of retention) unless it exists, and waits until it serves. */
async function ensureNamespace(address: string, namespace: string, timeoutMs: number): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    // The frontend learns of a new namespace from its registry's refresh (every few seconds),
    // and a server that has just begun to answer may still refuse a registration for a moment.
    const deadline = Date.now() + timeoutMs;
    let registered = false;
    for (;;) {
      try {
        if (!registered) {
          try {
            await connection.workflowService.registerNamespace({
              namespace,
              workflowExecutionRetentionPeriod: msToTs('1 day'),
            });
          } catch (err) {
            if (!/already exists/i.test(String(err))) throw err;
          }
          registered = true;
        }
        await ensureSearchAttributes(connection, namespace);
        await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
        return;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`namespace ${namespace} did not become usable: ${String(err)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  } finally {
    await connection.close();
  }
}

/**
 * A free loopback port below 32768: Temporal keeps its membership ports in a smallint column,
 * and the ports the OS hands out (32768 and up on Linux) do not fit.
 */
async function freeLowPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.unref();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port below 32768 for the Temporal server');
}

function tailOf(file: string, lines = 15): string {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .slice(-lines)
      .map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line))
      .join('\n');
  } catch {
    return '';
  }
}

/**
 * Prepares Temporal's databases and starts the server on free loopback ports, with the
 * namespace registered and durapay's search attributes added (as the worker would at start).
 */
export async function startClusterServer(opts: ClusterServerOptions): Promise<ClusterServer> {
  const pg = pgTarget(opts.adminUrl);
  opts.progress(`Temporal server: schema of ${opts.databasePrefix} and ${opts.databasePrefix}_visibility`);
  await setupSchema(opts.binaries.sqlTool, pg, opts.databasePrefix, 'postgresql/v12/temporal');
  await setupSchema(
    opts.binaries.sqlTool,
    pg,
    `${opts.databasePrefix}_visibility`,
    'postgresql/v12/visibility',
  );

  const taken = new Set<number>();
  const port = async () => freeLowPort(taken);
  const ports = {
    frontend: opts.port ?? (await port()),
    frontendHttp: await port(),
    history: await port(),
    matching: await port(),
    worker: await port(),
  };
  const membershipPorts = {
    frontend: await port(),
    history: await port(),
    matching: await port(),
    worker: await port(),
  };
  const configDir = path.join(opts.workDir, 'temporal-config');
  fs.mkdirSync(configDir, { recursive: true });
  const configFile = path.join(configDir, 'cluster.yaml');
  const config = clusterServerConfig({
    pg,
    databasePrefix: opts.databasePrefix,
    shards: opts.shards ?? 4,
    dynamicConfigFile: opts.dynamicConfigFile ?? DEPLOY_DYNAMIC_CONFIG,
    ports,
    membershipPorts,
  });
  fs.writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });

  const logFile = path.join(opts.workDir, 'temporal-server.log');
  const log = fs.openSync(logFile, 'a');
  const child = spawn(
    opts.binaries.server,
    ['--root', opts.workDir, '--config', 'temporal-config', '--env', 'cluster', '--allow-no-auth', 'start'],
    { stdio: ['ignore', log, log], detached: true },
  );
  fs.closeSync(log);
  opts.onSpawn?.(child);
  const address = `127.0.0.1:${ports.frontend}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `the Temporal server exited (${signal ?? `code ${code}`}) before it was ready:\n${tailOf(logFile)}`,
        ),
      ),
    ),
  );
  exited.catch(() => undefined);
  try {
    opts.progress(
      `Temporal server v${TEMPORAL_SERVER_VERSION}: starting on ${address} (${opts.shards ?? 4} shards)`,
    );
    await Promise.race([waitForTemporal(address, 90_000), exited]);
    await Promise.race([ensureNamespace(address, opts.namespace, 60_000), exited]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return { address, process: child, logFile, configFile, stop: () => stopChild(child, 15_000) };
}
