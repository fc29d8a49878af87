import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SEARCH_ATTRIBUTE_KEYS } from '../../platform/workflow/definitions';
import { stopChild } from '../../platform/process';
import { waitForTemporal } from '../../platform/temporal';
import { goInstall, isExecutable, onPath, type Progress } from './go-build';

/**
 * The Temporal CLI version durapay builds when none is installed. Later tags carry `replace`
 * directives in go.mod and cannot be built with `go install`.
 */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const TEMPORAL_CLI_MODULE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;

export type { Progress };

export function cachedCliPath(cacheDir: string): string {
  return path.join(cacheDir, `temporal-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/** TEMPORAL_CLI_PATH, then `temporal` on PATH, then the build cache. */
export function findTemporalCli(opts: { cliPath?: string; cacheDir: string }): string | undefined {
  if (opts.cliPath) {
    if (!isExecutable(opts.cliPath)) {
      throw new Error(`TEMPORAL_CLI_PATH points to ${opts.cliPath}, which is not an executable file`);
    }
    return opts.cliPath;
  }
  const cached = cachedCliPath(opts.cacheDir);
  return onPath('temporal') ?? (isExecutable(cached) ? cached : undefined);
}

/** Builds the Temporal CLI from the Go module proxy into the cache (once; a few minutes). */
export async function buildTemporalCli(cacheDir: string, progress: Progress): Promise<string> {
  const target = cachedCliPath(cacheDir);
  await goInstall(
    {
      what: `the Temporal CLI v${TEMPORAL_CLI_VERSION}`,
      packages: [TEMPORAL_CLI_MODULE],
      targetDir: path.dirname(target),
      binaries: { temporal: 'temporal' },
      withoutGo:
        'Install Go (https://go.dev/dl), or set TEMPORAL_CLI_PATH to a temporal binary, or TEMPORAL_ADDRESS to a running Temporal server.',
    },
    progress,
  );
  return target;
}

export async function ensureTemporalCli(
  opts: { cliPath?: string; cacheDir: string },
  progress: Progress,
): Promise<string> {
  return findTemporalCli(opts) ?? buildTemporalCli(opts.cacheDir, progress);
}

export interface DevServerOptions {
  cliPath: string;
  port: number;
  uiPort: number;
  /** SQLite file that keeps workflows across restarts. */
  dbFile: string;
  logFile: string;
  namespace: string;
  startTimeoutMs?: number;
  /** The codec server the UI decodes payloads through (durapay's `/codec`), as a browser reaches it. */
  codecEndpoint?: string;
}

export interface DevServer {
  address: string;
  uiUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Settings that make the single-machine dev server answer in milliseconds instead of tens of
 * them (measured with `npm run bench`; see docs/performance.md):
 *
 * - The dev server runs one history shard, and each of its task queues reads new tasks from
 *   the database at most 20 times a second per shard by default, so every hop of a workflow
 *   (workflow task, activity task, timer) waited up to 50 ms to be dispatched: about 40 ms
 *   each on an idle machine. A production cluster spreads that limit over hundreds of shards;
 *   with one shard it has to be raised.
 * - A task queue has four partitions by default, and one worker polls the normal (non-sticky)
 *   queue with two pollers: a new workflow's first task sometimes waited about 2 s in a
 *   partition no poller was on (p99 of a no-op workflow at 8 callers: 2 s, and 0.26 s with one
 *   partition). One machine needs no more than one.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number>> = {
  'history.transferProcessorMaxPollRPS': 2_000,
  'history.timerProcessorMaxPollRPS': 2_000,
  'history.visibilityProcessorMaxPollRPS': 2_000,
  'history.outboundProcessorMaxPollRPS': 2_000,
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

/**
 * SQLite's default rollback journal with full sync wrote and synced the file several times per
 * workflow step (60+ MB/s of writes at 30 workflows/s). Write-ahead logging with NORMAL sync is
 * the usual setting for a local database: a commit survives a crash of the server or of this
 * machine's processes; only an operating-system crash or power loss can drop the last commits.
 */
export const DEV_SERVER_SQLITE_PRAGMAS: Readonly<Record<string, string>> = {
  journal_mode: 'wal',
  synchronous: 'normal',
};

/** `--dynamic-config-value` arguments for DEV_SERVER_DYNAMIC_CONFIG (shared with the tests' server). */
export function devServerTuningArgs(): string[] {
  return Object.entries(DEV_SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${value}`,
  ]);
}

export function devServerArgs(opts: DevServerOptions): string[] {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--ui-port',
    String(opts.uiPort),
    '--db-filename',
    opts.dbFile,
    '--log-level',
    'warn',
  ];
  for (const [pragma, value] of Object.entries(DEV_SERVER_SQLITE_PRAGMAS)) {
    args.push('--sqlite-pragma', `${pragma}=${value}`);
  }
  args.push(...devServerTuningArgs());
  if (opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  if (opts.codecEndpoint) args.push('--ui-codec-endpoint', opts.codecEndpoint);
  for (const key of SEARCH_ATTRIBUTE_KEYS) args.push('--search-attribute', `${key.name}=Keyword`);
  return args;
}

function tailOf(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Starts `temporal server start-dev` with durapay's settings and waits until it answers. */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
  const log = fs.openSync(opts.logFile, 'a');
  // Its own process group: a terminal's Ctrl-C reaches the supervisor, which stops it last.
  const child = spawn(opts.cliPath, devServerArgs(opts), { stdio: ['ignore', log, log], detached: true });
  fs.closeSync(log);
  const address = `127.0.0.1:${opts.port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `the Temporal dev server exited (${signal ?? `code ${code}`}) before it was ready; ` +
            `last lines of ${opts.logFile}:\n${tailOf(opts.logFile)}`,
        ),
      ),
    ),
  );
  try {
    await Promise.race([waitForTemporal(address, opts.startTimeoutMs ?? 60_000), exited]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  exited.catch(() => undefined);
  return {
    address,
    uiUrl: `http://localhost:${opts.uiPort}`,
    process: child,
    stop: () => stopChild(child, 10_000),
  };
}
