/**
 * What every phase measures with: the connection to the stack under test (its API through the
 * SDK, its Temporal server, a local webhook receiver), the closed- and open-loop measurements
 * with the stack's processes watched, the reset between phases, and the stack's own lifetime.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { parsePayloadKeys } from '../src/platform/crypto/keyring';
import { sealedDataConverter } from '../src/platform/data-converter';
import { DurapayClient } from '../src/sdk';
import { say } from './lib/cli';
import { runClosedLoop, runCount, runOpenLoop, type Operation } from './lib/load';
import { UsageMonitor, type Usage } from './lib/procstat';
import { progressBar, silentProgress } from './lib/progress';
import { WebhookReceiver } from './lib/receiver';
import type { PhaseResult } from './lib/report';
import { assertLoopback, attachStack, startClusterStack, startOwnStack, type Stack } from './lib/stack';
import { cpuPerOp, summarize } from './lib/stats';
import type { Options } from './options';

/** Everything a phase needs from the stack it runs against. */
export interface Bench {
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

export const REQUEST_TIMEOUT_MS = 30_000;

/** Pays an order as its buyer would, on the sandbox's pay page (loopback only). */
export async function payAsBuyer(order: {
  trade_no: string;
  pay_credential: Record<string, unknown>;
}): Promise<void> {
  const payUrl = String(order.pay_credential.pay_url);
  assertLoopback(payUrl);
  const res = await fetch(payUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'success' }),
  });
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`paying ${order.trade_no} answered ${res.status} ${text.slice(0, 200)}`);
}

/** Runs a warm-up, then the measured closed loop with the stack's processes watched. */
export async function measure(
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

/**
 * Ends the order workflows the bench's app opened, so that the next phase starts from the same
 * state as the first: an open order polls its channel (10 s, 30 s, 1 min … after creation), and
 * the orders of one phase would otherwise poll during the next and be charged to it. The cost of
 * open orders is what the growth phases measure. Only this run's app's orders are touched (on a
 * reused stack too); their rows stay `pending` in the read model.
 */
export async function resetOrders(b: Bench): Promise<void> {
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

/** An open-loop phase's CPU and memory figures: the API and worker together, and per operation offered. */
export function openLoopUsage(
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
export async function measureOpen(
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
    offered: r.offered,
    rate_fraction: fraction,
    measures,
  };
}

export async function withStack<T>(
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
