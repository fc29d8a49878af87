// Longer than 400 lines: the benchmark is one run read top to bottom (its options, the stack, the
// phases in order, the targets they are judged by); what the phases measure with is in ./lib.
/**
 * `npm run bench`: how fast durapay takes payments, side by side with the floor of the Temporal
 * server it runs on, measured in the same run on the same machine. See docs/performance.md
 * for what each phase measures and the latest figures.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../src/platform/config';
import { DurapayClient } from '../src/sdk';
import { TEMPORAL_CLI_VERSION } from '../src/cli/dev/temporal-cli';
import { TEMPORAL_SERVER_VERSION } from '../src/cli/dev/temporal-server';
import { benchFloorUpdate, benchFloorWorkflowId } from '../src/diagnostics/messages';
import { intOption, say } from './lib/cli';
import { describeError, runClosedLoop, runCount, runOpenLoop, type Operation } from './lib/load';
import { HAS_PROC, UsageMonitor, type Usage } from './lib/procstat';
import { progressBar, silentProgress } from './lib/progress';
import { WebhookReceiver } from './lib/receiver';
import {
  latencyChartSvg,
  markdownSummary,
  type BenchResult,
  type PhaseResult,
  type Target,
} from './lib/report';
import {
  assertLoopback,
  attachStack,
  startClusterStack,
  startOwnStack,
  stopAllStacks,
  type Stack,
} from './lib/stack';
import { parsePayloadKeys } from '../src/platform/crypto/keyring';
import { sealedDataConverter } from '../src/platform/data-converter';
import { cpuPerOp, ratio, steadyFate, summarize } from './lib/stats';

const ROOT = path.join(__dirname, '..');
const PHASES = ['floor', 'create', 'open', 'full', 'steady', 'growth'] as const;
type PhaseKind = (typeof PHASES)[number];

interface Options {
  duration: number;
  warmup: number;
  concurrency: number[];
  fullConcurrency: number[];
  growth: number[];
  growthConcurrency: number;
  seedConcurrency: number;
  phases: PhaseKind[];
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

function parseOptions(argv: string[]): Options {
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
    .option('--phases <list>', `phases to run (${PHASES.join(',')})`, phaseList, [...PHASES])
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

function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  return {
    cpus: cpus.length,
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    temporal_cli: TEMPORAL_CLI_VERSION,
    temporal_server: TEMPORAL_SERVER_VERSION,
    durapay_commit: commit,
  };
}

/** Everything a phase needs from the stack it runs against. */
interface Bench {
  stack: Stack;
  sdk: DurapayClient;
  temporal: Client;
  connection: Connection;
  receiver: WebhookReceiver;
  runTag: string;
  /** Numbers the bench's orders and floor workflows across all loops (warm-ups included). */
  nextId: () => number;
  opts: Options;
}

async function connectBench(stack: Stack, opts: Options): Promise<Bench> {
  // The same Temporal client settings the API uses (src/api/server.ts): defaults, one connection.
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const receiver = await new WebhookReceiver(stack.app.webhook_secret).start();
  return {
    stack,
    sdk: new DurapayClient({ baseUrl: stack.baseUrl, appId: stack.app.app_id, secret: stack.app.secret }),
    temporal: new Client({
      connection,
      namespace: stack.namespace,
      dataConverter: sealedDataConverter(parsePayloadKeys(stack.payloadKeys, 'the stack payload keys')),
    }),
    connection,
    receiver,
    runTag: randomBytes(4).toString('hex'),
    nextId: (() => {
      let id = 0;
      return () => id++;
    })(),
    opts,
  };
}

async function closeBench(b: Bench): Promise<void> {
  await b.receiver.stop();
  await b.connection.close();
}

const REQUEST_TIMEOUT_MS = 30_000;

/** Runs a warm-up, then the measured closed loop with the stack's processes watched. */
async function measure(
  b: Bench,
  name: string,
  concurrency: number,
  measures: string,
  operation: Operation,
  extra: Partial<PhaseResult> = {},
): Promise<PhaseResult> {
  const common = { concurrency, maxRequests: b.opts.maxRequests, timeoutMs: REQUEST_TIMEOUT_MS, operation };
  const warm =
    b.opts.warmup > 0
      ? await runClosedLoop({
          ...common,
          durationMs: b.opts.warmup * 1000,
          warmupMs: 0,
          progress: silentProgress,
        })
      : undefined;
  // The load generator itself shares the machine: its own use is reported too (as `bench`).
  const monitor = new UsageMonitor({ ...b.stack.roles, bench: process.pid }, new Set(['bench']));
  monitor.start();
  const r = await runClosedLoop({
    ...common,
    durationMs: b.opts.duration * 1000,
    warmupMs: 0,
    progress: progressBar(name, b.opts.duration, 's'),
  });
  const processes: Record<string, Usage> = monitor.stop();
  const apiWorker = ['api', 'worker'].filter((role) => processes[role]);
  const errorMessages = { ...(warm?.errorCounts ?? {}) };
  for (const [k, v] of Object.entries(r.errorCounts)) errorMessages[k] = (errorMessages[k] ?? 0) + v;
  const result: PhaseResult = {
    name,
    concurrency,
    requests: r.requests,
    throughput_rps: Math.round((r.requests / Math.max(r.elapsedMs, 1)) * 1000 * 10) / 10,
    latency_ms: summarize(r.latenciesMs),
    errors: r.errors,
    cpu_s: apiWorker.length
      ? Math.round(apiWorker.reduce((sum, role) => sum + processes[role]!.cpu_s, 0) * 100) / 100
      : null,
    peak_rss_mb: apiWorker.length
      ? Math.round(apiWorker.reduce((sum, role) => sum + processes[role]!.peak_rss_mb, 0) * 10) / 10
      : null,
    processes,
    cpu_ms_per_op: cpuPerOp(processes, r.requests),
    error_messages: errorMessages,
    measures,
    ...extra,
  };
  const distinct = Object.entries(errorMessages).sort((x, y) => y[1] - x[1]);
  for (const [message, count] of distinct.slice(0, 10)) {
    process.stdout.write(`${name}: ${count} × error: ${message}\n`);
  }
  if (distinct.length > 10) {
    process.stdout.write(`${name}: … and ${distinct.length - 10} more distinct errors (all in the JSON)\n`);
  }
  return result;
}

function orderInput(b: Bench, label: string) {
  const seq = b.nextId();
  return {
    merchant_order_no: `bench-${b.runTag}-${label}-${seq}`,
    pay_method: 'qr_code' as const,
    amount: 100 + (seq % 900),
    subject: 'durapay bench order',
    notify_url: b.receiver.url,
  };
}

function createOperation(b: Bench, label: string): Operation {
  return async () => {
    const order = await b.sdk.createOrder(orderInput(b, label));
    if (!order.trade_no || order.is_idempotent) {
      throw new Error(`unexpected create answer ${JSON.stringify(order)}`);
    }
  };
}

async function floorPhases(
  b: Bench,
  out: PhaseResult[],
  levels = b.opts.concurrency,
  round = 1,
): Promise<void> {
  for (const c of levels) {
    out.push(
      await measure(
        b,
        `floor-c${c}`,
        c,
        'update-with-start of a no-op workflow whose update answers at once, from this process',
        async () => {
          await b.temporal.workflow.executeUpdateWithStart(benchFloorUpdate, {
            startWorkflowOperation: new WithStartWorkflowOperation('benchFloorWorkflow', {
              workflowId: benchFloorWorkflowId(`${b.runTag}-${b.nextId()}`),
              taskQueue: b.stack.taskQueue,
              workflowIdConflictPolicy: 'USE_EXISTING',
              args: [],
            }),
          });
        },
        { round },
      ),
    );
  }
}

/**
 * Ends the order workflows the bench's app opened, so that the next phase starts from the same
 * state as the first: an open order polls its channel (10 s, 30 s, 1 min … after creation), and
 * the orders of one phase would otherwise poll during the next and be charged to it. The cost of
 * open orders is what the growth phases measure. Only this run's app's orders are touched (on a
 * reused stack too); their rows stay `pending` in the read model.
 */
async function resetOrders(b: Bench): Promise<void> {
  const query = `WorkflowType = 'orderWorkflow' AND ExecutionStatus = 'Running' AND AppId = '${b.stack.app.app_id}'`;
  for (let round = 0; round < 10; round++) {
    const ids: string[] = [];
    for await (const wf of b.temporal.workflow.list({ query })) ids.push(wf.workflowId);
    if (ids.length === 0) return;
    await runCount({
      count: ids.length,
      concurrency: 16,
      timeoutMs: REQUEST_TIMEOUT_MS,
      operation: async (i) => {
        try {
          await b.temporal.workflow.getHandle(ids[i]!).terminate('durapay bench: reset between phases');
        } catch (err) {
          // Already ended (it completed, or an earlier round got it): nothing to do.
          if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
        }
      },
      progress: progressBar('reset', ids.length, 'orders ended'),
    });
    await dropPolls(b);
    // The visibility store catches up with the terminations a moment later.
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('the orders of the last phase could not all be ended');
}

/**
 * Ends the sweeper's polls of the orders just ended: their rows stay pending, and the payment
 * sweeper would otherwise poll them until they expire. Needs the stack's database (own stack).
 */
async function dropPolls(b: Bench): Promise<void> {
  if (!b.stack.databaseUrl) return;
  const pg = new PgClient({ connectionString: b.stack.databaseUrl });
  await pg.connect();
  try {
    await pg.query(
      `DELETE FROM payment_polls p USING orders o WHERE o.trade_no = p.trade_no AND o.app_id = $1`,
      [b.stack.app.app_id],
    );
  } finally {
    await pg.end();
  }
}

async function createPhases(
  b: Bench,
  out: PhaseResult[],
  levels = b.opts.concurrency,
  round = 1,
): Promise<void> {
  for (const c of levels) {
    await resetOrders(b);
    out.push(
      await measure(
        b,
        `create-c${c}`,
        c,
        'signed POST /api/v1/pay/unified-order on the sandbox channel, until its answer',
        createOperation(b, `c${c}r${round}`),
        { round },
      ),
    );
  }
}

/**
 * Rounds 2… of the floor and the create phase at the highest concurrency, each round one floor
 * then one create (A B A B): machine noise moves both, and shows as the range of their ratio.
 */
async function laterRounds(b: Bench, out: PhaseResult[], kinds: PhaseKind[]): Promise<void> {
  const top = [Math.max(...b.opts.concurrency)];
  for (let round = 2; round <= b.opts.rounds; round++) {
    if (kinds.includes('floor')) await floorPhases(b, out, top, round);
    if (kinds.includes('create')) await createPhases(b, out, top, round);
  }
}

/** The floor's throughput at the highest concurrency: the mean over its rounds, or --floor-rps. */
function floorThroughput(b: Bench, out: PhaseResult[]): number {
  if (b.opts.floorRps) return b.opts.floorRps;
  const floors = out.filter((p) => p.name === `floor-c${Math.max(...b.opts.concurrency)}`);
  if (floors.length === 0)
    throw new Error(
      "the open phases take their rates from the floor's throughput: run the floor phase, or pass --floor-rps",
    );
  return floors.reduce((sum, p) => sum + p.throughput_rps, 0) / floors.length;
}

/**
 * Open-loop phases: arrivals at a fixed rate (a share of the floor's throughput), whatever the
 * answers' latency, so the latency is the service's and not a queue of the bench's own callers.
 * For each rate, creates alone, then full cycles (create, then the buyer pays; the latency is
 * from paying to payment.succeeded verified at the receiver).
 */
async function openPhases(b: Bench, out: PhaseResult[]): Promise<void> {
  const floorRps = floorThroughput(b, out);
  for (const pct of b.opts.openRates) {
    const rate = Math.round(((floorRps * pct) / 100) * 10) / 10;
    await resetOrders(b);
    out.push(
      await measureOpen(
        b,
        `open-create-${pct}`,
        rate,
        pct / 100,
        `signed POST /api/v1/pay/unified-order arriving at ${rate}/s (${pct} % of the floor's ${floorRps.toFixed(1)}/s), until its answer`,
        async () => {
          const t0 = performance.now();
          await createOperation(b, `o${pct}`)(0);
          return performance.now() - t0;
        },
      ),
    );
    await resetOrders(b);
    out.push(
      await measureOpen(
        b,
        `open-full-${pct}`,
        rate,
        pct / 100,
        `full cycles arriving at ${rate}/s (${pct} % of the floor's ${floorRps.toFixed(1)}/s): the create is not timed; from the buyer paying in the sandbox to payment.succeeded verified at a local receiver`,
        fullCycleOperation(b, `of${pct}`),
      ),
    );
  }
}

/** An open-loop phase's CPU and memory figures: the API and worker together, and per operation offered. */
function openLoopUsage(
  processes: Record<string, Usage>,
  offered: number,
): Pick<PhaseResult, 'cpu_s' | 'peak_rss_mb' | 'processes' | 'cpu_ms_per_op'> {
  const { api, worker } = processes;
  return {
    cpu_s: api && worker ? Math.round((api.cpu_s + worker.cpu_s) * 100) / 100 : null,
    peak_rss_mb: api && worker ? Math.round((api.peak_rss_mb + worker.peak_rss_mb) * 10) / 10 : null,
    processes,
    cpu_ms_per_op: cpuPerOp(processes, offered),
  };
}

/** An open-loop phase: a warm-up at the same rate, then the measured window with the stack watched. */
async function measureOpen(
  b: Bench,
  name: string,
  rate: number,
  fraction: number,
  measures: string,
  operation: Operation,
): Promise<PhaseResult> {
  const warmMs = b.opts.warmup * 1000;
  const monitor = new UsageMonitor({ ...b.stack.roles, bench: process.pid }, new Set(['bench']));
  let processes: Record<string, Usage> = {};
  const r = await runOpenLoop({
    ratePerS: rate,
    measureFromMs: warmMs,
    durationMs: warmMs + b.opts.duration * 1000,
    timeoutMs: REQUEST_TIMEOUT_MS,
    operation,
    progress: progressBar(name, (warmMs + b.opts.duration * 1000) / 1000, 's'),
    onMeasureStart: () => monitor.start(),
    onArrivalsEnd: () => (processes = monitor.stop()),
  });
  for (const [message, count] of Object.entries(r.errorCounts)) {
    process.stdout.write(`${name}: ${count} × error: ${message}\n`);
  }
  return {
    name,
    concurrency: 0,
    requests: r.requests,
    throughput_rps: Math.round((r.requests / Math.max(r.elapsedMs, 1)) * 1000 * 10) / 10,
    latency_ms: summarize(r.latenciesMs),
    errors: r.errors,
    ...openLoopUsage(processes, r.offered),
    error_messages: r.errorCounts,
    rate_per_s: rate,
    rate_fraction: fraction,
    measures,
  };
}

async function fullPhases(b: Bench, out: PhaseResult[]): Promise<void> {
  for (const c of b.opts.fullConcurrency) {
    await resetOrders(b);
    await fullPhase(b, c, out);
  }
}

/**
 * The cluster topology's scaling figure: the create and full phases again (at the highest
 * concurrency) after one of the two workers is stopped, named `…-1-worker`.
 */
async function oneWorkerPhases(b: Bench, out: PhaseResult[]): Promise<void> {
  const cluster = b.stack.cluster!;
  const [, second] = cluster.workers;
  if (!second) return;
  say(`  stopping ${second.name}: the next phases run with one worker`);
  await second.stop();
  delete b.stack.roles[second.name];
  const c = Math.max(...b.opts.concurrency);
  if (b.opts.phases.includes('create')) {
    await resetOrders(b);
    out.push(
      await measure(
        b,
        `create-c${c}-1-worker`,
        c,
        'create, as the create phase, with one of the two workers stopped',
        createOperation(b, `c${c}w1`),
      ),
    );
  }
  if (b.opts.phases.includes('full')) {
    await resetOrders(b);
    await fullPhase(b, Math.max(...b.opts.fullConcurrency), out, '-1-worker');
  }
}

async function fullPhase(b: Bench, c: number, out: PhaseResult[], suffix = ''): Promise<void> {
  out.push(
    await measure(
      b,
      `full-c${c}${suffix}`,
      c,
      'from the buyer paying in the sandbox to payment.succeeded verified at a local receiver (the create before it is not timed)',
      fullCycleOperation(b, `full${c}${suffix}`),
    ),
  );
}

/** Creates an order (not timed), pays it as the buyer, and times paying → notification verified. */
function fullCycleOperation(b: Bench, label: string): Operation {
  return async () => {
    const order = await b.sdk.createOrder(orderInput(b, label));
    const payUrl = String(order.pay_credential.pay_url);
    assertLoopback(payUrl);
    const t0 = performance.now();
    const res = await fetch(payUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'success' }),
    });
    const text = await res.text();
    if (res.status !== 200)
      throw new Error(`paying ${order.trade_no} answered ${res.status} ${text.slice(0, 200)}`);
    const at = await b.receiver.waitFor('payment.succeeded', order.trade_no, REQUEST_TIMEOUT_MS - 1_000);
    return at - t0;
  };
}

/**
 * The steady state (own stack, time scaled): orders arrive at a fixed rate for one order
 * lifetime (a 30-minute expiry, scaled) before the measured window, so that within it the
 * waiting, polls and expiries of older orders overlap new creates as they do in production.
 * 7 in 10 expire unpaid, 3 are paid by the buyer at a random moment of their first half-life,
 * and 1 of those is then refunded in full. The stack's CPU over the window divided by the
 * orders created in it is the lifetime CPU of one order.
 */
async function steadyPhase(b: Bench, out: PhaseResult[]): Promise<void> {
  const { steadyRate: rate, steadyWindow: windowS, timeScale } = b.opts;
  const lifetimeMs = 30 * 60_000 * timeScale;
  const warmMs = lifetimeMs + 5_000;
  const sideTasks = new Set<Promise<void>>();
  const side = { done: 0, errors: {} as Record<string, number> };
  const follow = (task: Promise<void>) => {
    const p = task.then(
      () => void (side.done += 1),
      (err: unknown) => {
        const key = describeError(err);
        side.errors[key] = (side.errors[key] ?? 0) + 1;
      },
    );
    sideTasks.add(p);
    void p.finally(() => sideTasks.delete(p));
  };
  const payLater = async (
    order: { trade_no: string; pay_credential: Record<string, unknown> },
    refund: boolean,
    amount: number,
  ) => {
    await new Promise((r) => setTimeout(r, Math.random() * (lifetimeMs / 2)));
    const payUrl = String(order.pay_credential.pay_url);
    assertLoopback(payUrl);
    const res = await fetch(payUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'success' }),
    });
    await res.text();
    if (res.status !== 200) throw new Error(`paying ${order.trade_no} answered ${res.status}`);
    await b.receiver.waitFor('payment.succeeded', order.trade_no, REQUEST_TIMEOUT_MS);
    if (refund) await b.sdk.refund({ trade_no: order.trade_no, refund_amount: amount });
  };

  const monitor = new UsageMonitor({ ...b.stack.roles, bench: process.pid }, new Set(['bench']));
  let processes: Record<string, Usage> = {};
  const r = await runOpenLoop({
    ratePerS: rate,
    measureFromMs: warmMs,
    durationMs: warmMs + windowS * 1000,
    timeoutMs: REQUEST_TIMEOUT_MS,
    operation: async (seq) => {
      const input = orderInput(b, 'steady');
      const t0 = performance.now();
      const order = await b.sdk.createOrder(input);
      const took = performance.now() - t0;
      const fate = steadyFate(seq);
      if (fate !== 'expire') follow(payLater(order, fate === 'pay-refund', input.amount));
      return took;
    },
    progress: progressBar('steady', (warmMs + windowS * 1000) / 1000, 's'),
    onMeasureStart: () => monitor.start(),
    onArrivalsEnd: () => (processes = monitor.stop()),
  });
  say(`  steady: waiting for ${sideTasks.size} payments and refunds under way …`);
  while (sideTasks.size > 0) await Promise.race(sideTasks);
  for (const [message, count] of Object.entries(side.errors)) {
    process.stdout.write(`steady: ${count} × payment or refund error: ${message}\n`);
  }
  const sideErrors = Object.values(side.errors).reduce((a, n) => a + n, 0);
  out.push({
    name: 'steady',
    concurrency: 0,
    requests: r.requests,
    throughput_rps: Math.round((r.requests / Math.max(r.elapsedMs, 1)) * 1000 * 10) / 10,
    latency_ms: summarize(r.latenciesMs),
    errors: r.errors + sideErrors,
    ...openLoopUsage(processes, r.offered),
    error_messages: { ...r.errorCounts, ...side.errors },
    rate_per_s: rate,
    time_scale: timeScale,
    measures: `orders created open-loop at ${rate}/s with DURAPAY_TIME_SCALE=${timeScale} (a 30-minute expiry lasts ${(lifetimeMs / 1000).toFixed(0)} s): 7 in 10 expire unpaid, 3 are paid, 1 of those refunded; latency is the create's; CPU over ${windowS} s after one lifetime of warm-up, per order created in it, is an order's lifetime CPU`,
  });
}

async function countOpenOrders(b: Bench): Promise<number> {
  const { count } = await b.temporal.workflow.count(
    "WorkflowType = 'orderWorkflow' AND ExecutionStatus = 'Running'",
  );
  return count;
}

/** Waits for the visibility store to count at least `atLeast` open orders (it lags a little). */
async function settledOpenOrders(b: Bench, atLeast: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  let open = await countOpenOrders(b);
  while (open < atLeast && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    open = await countOpenOrders(b);
  }
  return open;
}

/**
 * An order for the growth phases' population: created like any other, and sent again with the
 * same merchant_order_no when an answer fails (an overloaded stack answers channel_timeout past
 * its 10 s deadline while the order may still open): a repeat is idempotent, so each seeded
 * order is one order, and every retry is reported.
 */
function seedOperation(b: Bench, label: string, stats: { retries: number; lastError?: string }): Operation {
  return async () => {
    const input = orderInput(b, label);
    for (let attempt = 1; ; attempt++) {
      try {
        await b.sdk.createOrder(input);
        return;
      } catch (err) {
        stats.retries += 1;
        stats.lastError = describeError(err);
        if (attempt >= 5) throw err;
        await new Promise((r) => setTimeout(r, 1_000 * attempt));
      }
    }
  };
}

async function growthPhases(b: Bench, out: PhaseResult[]): Promise<void> {
  const c = b.opts.growthConcurrency;
  for (const level of [...b.opts.growth].sort((x, y) => x - y)) {
    let open = await countOpenOrders(b);
    let seeding: PhaseResult['seeding'];
    if (open < level) {
      const missing = level - open;
      const stats = { retries: 0, lastError: undefined as string | undefined };
      const seeded = await runCount({
        count: missing,
        concurrency: b.opts.seedConcurrency,
        timeoutMs: REQUEST_TIMEOUT_MS * 6,
        operation: seedOperation(b, `seed${level}`, stats),
        progress: progressBar(`seed to ${level}`, missing, 'orders'),
      });
      seeding = {
        orders: seeded.done,
        seconds: Math.round(seeded.elapsedMs / 100) / 10,
        orders_per_s: Math.round((seeded.done / (seeded.elapsedMs / 1000)) * 10) / 10,
        retries: stats.retries,
      };
      if (stats.retries > 0) {
        process.stdout.write(
          `seed to ${level}: ${stats.retries} create(s) sent again, last error: ${stats.lastError}\n`,
        );
      }
      open = await settledOpenOrders(b, level);
    }
    out.push(
      await measure(
        b,
        `growth-${level}`,
        c,
        `create, as create-c${c}, with ${open} order workflows open when the phase began`,
        createOperation(b, `g${level}`),
        { open_orders: open, ...(seeding ? { seeding } : {}) },
      ),
    );
  }
}

function targets(phases: PhaseResult[], ratios: BenchResult['ratios'], opts: Options): Target[] {
  const out: Target[] = [];
  const maxC = Math.max(...opts.concurrency);
  const create = phases.find((p) => p.name === `create-c${maxC}`);
  if (create) {
    out.push({
      name: `create-c${maxC} throughput`,
      target: '≥ 0.5 × floor',
      measured: `${ratios.create_vs_floor ?? '–'} × floor`,
      met: ratios.create_vs_floor === null ? null : ratios.create_vs_floor >= 0.5,
    });
    out.push({
      name: `create-c${maxC} p99`,
      target: '≤ 150 ms',
      measured: `${create.latency_ms?.p99 ?? '–'} ms`,
      met: create.latency_ms ? create.latency_ms.p99 <= 150 : null,
    });
  }
  for (const full of phases.filter((p) => p.name.startsWith('full'))) {
    out.push({
      name: `${full.name} p50`,
      target: '≤ 250 ms',
      measured: `${full.latency_ms?.p50 ?? '–'} ms`,
      met: full.latency_ms ? full.latency_ms.p50 <= 250 : null,
    });
  }
  if (ratios.create_cpu_vs_floor !== null) {
    out.push({
      name: `create-c${maxC} CPU per request`,
      target: '≤ 1.5 × floor',
      measured: `${ratios.create_cpu_vs_floor} × floor`,
      met: ratios.create_cpu_vs_floor <= 1.5,
    });
  }
  if (ratios.lifetime_cpu_vs_create !== null) {
    out.push({
      name: "an order's lifetime CPU (steady)",
      target: '≤ 2 × its create',
      measured: `${ratios.lifetime_cpu_vs_create} ×`,
      met: ratios.lifetime_cpu_vs_create <= 2,
    });
  }
  const openCreate = phases.find((p) => p.name === 'open-create-50');
  if (openCreate) {
    out.push({
      name: 'open-create-50 p99',
      target: '≤ 150 ms',
      measured: `${openCreate.latency_ms?.p99 ?? '–'} ms`,
      met: openCreate.latency_ms ? openCreate.latency_ms.p99 <= 150 : null,
    });
  }
  const openFull = phases.find((p) => p.name === 'open-full-50');
  if (openFull) {
    out.push({
      name: 'open-full-50 p50 (buyer pays → notification delivered)',
      target: '≤ 100 ms',
      measured: `${openFull.latency_ms?.p50 ?? '–'} ms`,
      met: openFull.latency_ms ? openFull.latency_ms.p50 <= 100 : null,
    });
  }
  const growth = phases.filter((p) => p.name.startsWith('growth'));
  if (growth.length > 1) {
    const last = growth[growth.length - 1]!;
    out.push({
      name: `${last.name} p50`,
      target: `≤ 1.2 × ${growth[0]!.name} p50`,
      measured: `${ratios.growth_p50_top_vs_0 ?? '–'} ×`,
      met: ratios.growth_p50_top_vs_0 === null ? null : ratios.growth_p50_top_vs_0 <= 1.2,
    });
    if (ratios.worker_rss_mb_at_10k !== null) {
      out.push({
        name: 'worker peak RSS at 10 000 open orders',
        target: '≤ 700 MiB',
        measured: `${ratios.worker_rss_mb_at_10k} MiB`,
        met: ratios.worker_rss_mb_at_10k <= 700,
      });
    }
    const rss = growth.map((p) => `${p.processes.worker?.peak_rss_mb ?? '–'}`).join(' → ');
    out.push({
      name: 'worker peak RSS across growth',
      target: `bounded by the worker's workflow cache (WORKER_MAX_CACHED_WORKFLOWS, ${process.env.WORKER_MAX_CACHED_WORKFLOWS || DEFAULT_MAX_CACHED_WORKFLOWS} on the bench's own stack unless set)`,
      measured: `${rss} MiB`,
      met: null,
    });
  }
  return out;
}

// The stacks' processes run in their own process group: Ctrl-C reaches only the bench, which
// stops them before it exits.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`\n${signal}: stopping …`);
    void stopAllStacks().finally(() => process.exit(130));
  });
}

async function withStack<T>(
  opts: Options,
  workDir: string,
  label: string,
  fn: (b: Bench) => Promise<T>,
  env: NodeJS.ProcessEnv = {},
): Promise<T> {
  const started = Date.now();
  say(
    opts.baseUrl
      ? `Using the durapay at ${opts.baseUrl}`
      : `Starting a durapay stack for the ${label} phases …`,
  );
  const stack = opts.baseUrl
    ? await attachStack({
        baseUrl: opts.baseUrl,
        temporalAddress: opts.temporalAddress,
        namespace: opts.namespace,
        taskQueue: opts.taskQueue,
        apiPid: opts.apiPid,
        workerPid: opts.workerPid,
        say,
      })
    : await (opts.topology === 'cluster' ? startClusterStack : startOwnStack)({
        workDir,
        databaseUrl: process.env.DATABASE_URL || undefined,
        nodeFlags: opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.join(opts.outDir, 'profiles')}`] : [],
        env,
        say,
        apis: 2,
        workers: 2,
      });
  say(`  ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${stack.description}`);
  try {
    const b = await connectBench(stack, opts);
    try {
      return await fn(b);
    } finally {
      await closeBench(b);
    }
  } finally {
    if (!opts.baseUrl) say('  stopping the stack …');
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv);
  if (!HAS_PROC)
    say('No /proc on this system: CPU and memory of the processes are not measured (Linux only).');
  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  fs.mkdirSync(opts.outDir, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-bench-'));
  // Under root, the embedded Postgres runs as the `postgres` user, which must reach its data dir.
  fs.chmodSync(scratch, 0o755);
  const phases: PhaseResult[] = [];
  const failures: { stage: string; error: string }[] = [];
  let stackDescription = '';
  /** A failed stage is reported and the run goes on, so the phases measured so far are kept. */
  const attempt = async (stage: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      failures.push({ stage, error });
      process.stdout.write(`${stage} failed: ${error}\n`);
    }
  };
  try {
    const first = opts.phases.filter((p) => p !== 'growth' && p !== 'steady');
    if (first.length) {
      await attempt(first.join(', '), () =>
        withStack(opts, path.join(scratch, 'stack-a'), first.join(', '), async (b) => {
          stackDescription = b.stack.description;
          if (first.includes('floor')) await attempt('floor', () => floorPhases(b, phases));
          if (first.includes('create')) await attempt('create', () => createPhases(b, phases));
          if (b.opts.rounds > 1) await attempt('later rounds', () => laterRounds(b, phases, first));
          if (first.includes('open')) await attempt('open', () => openPhases(b, phases));
          if (first.includes('full')) await attempt('full', () => fullPhases(b, phases));
          if (b.stack.cluster) await attempt('one worker', () => oneWorkerPhases(b, phases));
        }),
      );
    }
    if (opts.phases.includes('steady')) {
      // Its own stack, time scaled so that an order's whole life fits in the run; a running
      // stack (--base-url) must run with DURAPAY_TIME_SCALE equal to --time-scale.
      await attempt('steady', () =>
        withStack(
          opts,
          path.join(scratch, 'stack-s'),
          'steady',
          async (b) => {
            stackDescription ||= b.stack.description;
            await steadyPhase(b, phases);
          },
          { DURAPAY_TIME_SCALE: String(opts.timeScale) },
        ),
      );
    }
    if (opts.phases.includes('growth')) {
      // A fresh stack, so that "0 open orders" is not the orders of the phases before.
      await attempt('growth', () =>
        withStack(opts, path.join(scratch, 'stack-b'), 'growth', async (b) => {
          stackDescription ||= b.stack.description;
          await growthPhases(b, phases);
        }),
      );
    }
  } finally {
    if (!opts.keep) fs.rmSync(scratch, { recursive: true, force: true });
    else say(`Kept the scratch directory ${scratch}`);
  }

  const maxC = Math.max(...opts.concurrency);
  const maxFullC = Math.max(...opts.fullConcurrency);
  const growth = phases.filter((p) => p.name.startsWith('growth'));
  const ratios: BenchResult['ratios'] = {
    create_vs_floor: ratio(
      phases.find((p) => p.name === `create-c${maxC}`)?.throughput_rps,
      phases.find((p) => p.name === `floor-c${maxC}`)?.throughput_rps,
    ),
    growth_p50_10k_vs_0: ratio(
      growth.find((p) => p.name === 'growth-10000')?.latency_ms?.p50,
      growth.find((p) => p.name === 'growth-0')?.latency_ms?.p50,
    ),
    growth_p50_top_vs_0:
      growth.length > 1 && growth[0]!.name === 'growth-0'
        ? ratio(growth[growth.length - 1]!.latency_ms?.p50, growth[0]!.latency_ms?.p50)
        : null,
    growth_top_level: growth.length ? Number(growth[growth.length - 1]!.name.slice('growth-'.length)) : null,
    lifetime_cpu_vs_create: ratio(
      phases.find((p) => p.name === 'steady')?.cpu_ms_per_op?.total,
      phases.find((p) => p.name === `create-c${maxC}`)?.cpu_ms_per_op?.total,
    ),
    create_cpu_vs_floor: ratio(
      phases.find((p) => p.name === `create-c${maxC}`)?.cpu_ms_per_op?.total,
      phases.find((p) => p.name === `floor-c${maxC}`)?.cpu_ms_per_op?.total,
    ),
    worker_rss_mb_at_10k:
      growth.find((p) => p.name === 'growth-10000')?.processes.worker?.peak_rss_mb ?? null,
    cluster_create_2_vs_1_workers: ratio(
      phases.find((p) => p.name === `create-c${maxC}` && opts.topology === 'cluster')?.throughput_rps,
      phases.find((p) => p.name === `create-c${maxC}-1-worker`)?.throughput_rps,
    ),
    cluster_full_2_vs_1_workers: ratio(
      phases.find((p) => p.name === `full-c${maxFullC}` && opts.topology === 'cluster')?.throughput_rps,
      phases.find((p) => p.name === `full-c${maxFullC}-1-worker`)?.throughput_rps,
    ),
  };
  const perRound = (num: (p: PhaseResult) => number | null | undefined) => {
    const values: number[] = [];
    for (const create of phases.filter((p) => p.name === `create-c${maxC}`)) {
      const floor = phases.find((p) => p.name === `floor-c${maxC}` && p.round === create.round);
      const r = ratio(num(create), floor ? num(floor) : undefined);
      if (r !== null) values.push(r);
    }
    return values.length ? ([Math.min(...values), Math.max(...values)] as [number, number]) : null;
  };
  const ratioRanges: BenchResult['ratio_ranges'] = {
    create_vs_floor: perRound((p) => p.throughput_rps),
    create_cpu_vs_floor: perRound((p) => p.cpu_ms_per_op?.total),
  };
  const result: BenchResult = {
    started_at: startedAt.toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    machine: machine(),
    stack: stackDescription,
    settings: {
      duration_s: opts.duration,
      warmup_s: opts.warmup,
      concurrency: opts.concurrency,
      full_concurrency: opts.fullConcurrency,
      growth: opts.growth,
      growth_concurrency: opts.growthConcurrency,
      seed_concurrency: opts.seedConcurrency,
      steady_rate: opts.steadyRate,
      steady_window_s: opts.steadyWindow,
      time_scale: opts.timeScale,
      phases: opts.phases,
      topology: opts.topology,
      rounds: opts.rounds,
      open_rates_percent: opts.openRates,
    },
    phases,
    failures,
    ratios,
    ratio_ranges: ratioRanges,
    targets: targets(phases, ratios, opts),
  };
  const jsonPath = path.join(opts.outDir, `${stamp}.json`);
  const svgPath = path.join(opts.outDir, `${stamp}.svg`);
  fs.writeFileSync(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
  fs.writeFileSync(svgPath, latencyChartSvg(result));
  process.stdout.write(`\n${markdownSummary(result)}\n`);
  say(`Wrote ${path.relative(process.cwd(), jsonPath)} and ${path.relative(process.cwd(), svgPath)}`);
  // An open-loop phase offered more than the stack can take times out requests by design: its
  // errors are a measurement (reported, in the JSON too), not a failure of the run.
  const overload = phases.filter((p) => p.rate_fraction !== undefined).reduce((sum, p) => sum + p.errors, 0);
  const errors = phases.reduce((sum, p) => sum + p.errors, 0) - overload;
  if (overload > 0) say(`${overload} request(s) of the open-loop phases failed under their offered load`);
  if (errors > 0 || failures.length > 0) {
    say(`${errors} request(s) and ${failures.length} stage(s) failed: see the errors printed above`);
    process.exitCode = 1;
  }
}

main()
  .then(() => process.exit(process.exitCode ?? 0))
  .catch((err: unknown) => {
    say(`bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
