/**
 * The bench's command line: its flags, their defaults and checks, and the phases they select.
 */
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { intOption } from './lib/cli';
import { assertLoopback } from './lib/stack';

export const ROOT = path.join(__dirname, '..');
export const PHASES = [
  'floor',
  'create',
  'open',
  'full',
  'steady',
  'growth',
  'reconcile',
  'console',
  'barcode',
  'checkout',
  'contracts',
] as const;
export type PhaseKind = (typeof PHASES)[number];
/**
 * What a run without --phases measures: reconcile, console and contracts, minutes of their own,
 * and barcode and checkout (their rates are the floor's: `--phases floor,barcode`), only when asked for.
 */
export const DEFAULT_PHASES: readonly PhaseKind[] = PHASES.filter(
  (p) => p !== 'reconcile' && p !== 'console' && p !== 'barcode' && p !== 'checkout' && p !== 'contracts',
);

export interface Options {
  duration: number;
  warmup: number;
  concurrency: number[];
  fullConcurrency: number[];
  growth: number[];
  growthConcurrency: number;
  seedConcurrency: number;
  phases: PhaseKind[];
  reconcileRows: number;
  consoleOrders: number;
  /** The contracts phase: how many contracts, and how long the idle stack is watched (s). */
  contracts: number;
  contractsWindow: number;
  steadyRate: number;
  steadyWindow: number;
  timeScale: number;
  maxRequests: number;
  baseUrl?: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  apiPid?: number;
  workerPid?: number;
  outDir: string;
  cpuProf: boolean;
  keep: boolean;
  topology: 'dev' | 'cluster';
  rounds: number;
  openRates: number[];
  floorRps?: number;
}

function intList(name: string, min: number) {
  return (value: string): number[] => {
    const list = value.split(',').map((v) => v.trim());
    const out = list.map((v) => Number(v));
    if (list.length === 0 || out.some((n, i) => list[i] === '' || !Number.isInteger(n) || n < min)) {
      throw new InvalidArgumentError(`${name} must be a comma-separated list of integers ≥ ${min}`);
    }
    return out;
  };
}

function phaseList(value: string): PhaseKind[] {
  const list = value.split(',').map((v) => v.trim());
  const unknown = list.filter((p) => !(PHASES as readonly string[]).includes(p));
  if (unknown.length)
    throw new InvalidArgumentError(`unknown phase ${unknown.join(', ')} (phases: ${PHASES.join(', ')})`);
  return list as PhaseKind[];
}

export function parseOptions(argv: string[]): Options {
  const program = new Command()
    .name('npm run bench --')
    .description(
      'Measure durapay: the Temporal floor, order creation, the full payment cycle, and creation with many open orders.',
    )
    .option('--duration <s>', 'measured seconds per phase', intOption('--duration'), 10)
    .option('--warmup <s>', 'unmeasured seconds before each phase', intOption('--warmup', 0), 2)
    .option(
      '--concurrency <list>',
      'callers for the floor and create phases',
      intList('--concurrency', 1),
      [1, 8, 32],
    )
    .option(
      '--full-concurrency <list>',
      'callers for the full cycle',
      intList('--full-concurrency', 1),
      [1, 8],
    )
    .option(
      '--growth <list>',
      'open orders before each growth phase',
      intList('--growth', 0),
      [0, 1_000, 2_000],
    )
    .option('--growth-concurrency <n>', 'callers for the growth phases', intOption('--growth-concurrency'), 8)
    .option(
      '--seed-concurrency <n>',
      'callers that create the open orders',
      intOption('--seed-concurrency'),
      16,
    )
    .option(
      '--phases <list>',
      `phases to run (${PHASES.join(',')}; all but reconcile, console, barcode, checkout and contracts by default)`,
      phaseList,
      [...DEFAULT_PHASES],
    )
    .option(
      '--reconcile-rows <n>',
      "the reconcile phase's statement lines (paid orders of one account's day)",
      intOption('--reconcile-rows'),
      1_000_000,
    )
    .option(
      '--console-orders <n>',
      "the console phase's orders (spread over 30 days) that its lists and overview are read over",
      intOption('--console-orders'),
      100_000,
    )
    .option(
      '--contracts <n>',
      "the contracts phase's monthly contracts, signed and left waiting for their first deduction",
      intOption('--contracts'),
      10_000,
    )
    .option(
      '--contracts-window <s>',
      'how long the contracts phase watches the idle stack, in seconds',
      intOption('--contracts-window'),
      120,
    )
    .option(
      '--rounds <n>',
      'rounds of the floor and create phases at the highest concurrency, alternating (floor, create, floor, create …), so that their ratio shows as a range',
      intOption('--rounds'),
      2,
    )
    .option(
      '--open-rates <list>',
      "the open phases' arrival rates, in percent of the floor's throughput at the highest concurrency",
      intList('--open-rates', 1),
      [25, 50, 75],
    )
    .option(
      '--floor-rps <n>',
      "the floor's throughput the open rates are taken of, when the floor phase does not run",
      intOption('--floor-rps'),
    )
    .option(
      '--steady-rate <n>',
      'orders created per second in the steady phase',
      intOption('--steady-rate'),
      4,
    )
    .option(
      '--steady-window <s>',
      'measured seconds of the steady phase, after one order lifetime of warm-up',
      intOption('--steady-window'),
      30,
    )
    .option(
      '--time-scale <x>',
      "the steady phase's DURAPAY_TIME_SCALE: a 30-minute expiry and its polling schedule pass in 30 min × x",
      (v: string) => {
        const x = Number(v);
        if (!(x > 0 && x <= 1)) throw new InvalidArgumentError('--time-scale must be a number in (0, 1]');
        return x;
      },
      0.02,
    )
    .option(
      '--max-requests <n>',
      'at most this many requests per phase',
      intOption('--max-requests'),
      100_000,
    )
    .option('--base-url <url>', 'use the durapay running there (loopback only) instead of starting one')
    .option(
      '--temporal-address <host:port>',
      'with --base-url: its Temporal server, for the floor and for counting open orders',
      process.env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    )
    .option(
      '--namespace <ns>',
      'with --base-url: Temporal namespace',
      process.env.TEMPORAL_NAMESPACE || 'default',
    )
    .option(
      '--task-queue <tq>',
      "with --base-url: the worker's task queue",
      process.env.TEMPORAL_TASK_QUEUE || 'durapay',
    )
    .option('--api-pid <pid>', 'with --base-url: the API process to measure', intOption('--api-pid'))
    .option('--worker-pid <pid>', 'with --base-url: the worker process to measure', intOption('--worker-pid'))
    .option('--out-dir <dir>', 'where results are written', path.join(ROOT, 'bench', 'results'))
    .option(
      '--cpu-prof',
      'write V8 CPU profiles of the API and worker (own stack only) beside the results',
      false,
    )
    .option('--keep', "keep the own stack's scratch directory (data and logs)", false)
    .addOption(
      new Option(
        '--topology <kind>',
        'dev: `durapay start` (dev server, one API, one worker); cluster: the Temporal server on Postgres with 4 shards, 2 APIs behind a balancer and 2 workers, then the create and full phases again with 1 worker',
      )
        .choices(['dev', 'cluster'])
        .default('dev'),
    )
    .showHelpAfterError();
  program.parse(argv);
  const o = program.opts<Options>();
  if (o.baseUrl) assertLoopback(o.baseUrl);
  if (o.cpuProf && o.baseUrl)
    throw new InvalidArgumentError("--cpu-prof needs the bench's own stack (no --base-url)");
  if (o.topology === 'cluster' && o.baseUrl)
    throw new InvalidArgumentError('--topology cluster starts its own processes (no --base-url)');
  return o;
}
