/**
 * The phases run on the first stack, in order: the Temporal floor, order creation (closed loop),
 * later rounds of both, open-loop creates and full cycles at shares of the floor's throughput,
 * the full payment cycle, and in the cluster topology the same again with one worker.
 */
import { WithStartWorkflowOperation } from '@temporalio/client';
import { benchFloorUpdate, benchFloorWorkflowId } from '../src/diagnostics/messages';
import { say } from './lib/cli';
import type { Operation } from './lib/load';
import type { PhaseResult } from './lib/report';
import { REQUEST_TIMEOUT_MS, measure, measureOpen, payAsBuyer, resetOrders, type Bench } from './harness';
import type { PhaseKind } from './options';

export function orderInput(b: Bench, label: string) {
  const seq = b.nextId();
  return {
    merchant_order_no: `bench-${b.runTag}-${label}-${seq}`,
    pay_method: 'qr_code' as const,
    amount: 100 + (seq % 900),
    subject: 'durapay bench order',
    notify_url: b.receiver.url,
  };
}

export function createOperation(b: Bench, label: string): Operation {
  return async () => {
    const order = await b.sdk.createOrder(orderInput(b, label));
    if (!order.trade_no || order.is_idempotent) {
      throw new Error(`unexpected create answer ${JSON.stringify(order)}`);
    }
  };
}

export async function floorPhases(
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

export async function createPhases(
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
export async function laterRounds(b: Bench, out: PhaseResult[], kinds: PhaseKind[]): Promise<void> {
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

/** The open-loop rates: each of --open-rates as a share of the floor's throughput, to 0.1/s. */
export function openRates(b: Bench, out: PhaseResult[]): { pct: number; rate: number; floorRps: number }[] {
  const floorRps = floorThroughput(b, out);
  return b.opts.openRates.map((pct) => ({
    pct,
    rate: Math.round(((floorRps * pct) / 100) * 10) / 10,
    floorRps,
  }));
}

/**
 * Open-loop phases: arrivals at a fixed rate (a share of the floor's throughput), whatever the
 * answers' latency, so the latency is the service's and not a queue of the bench's own callers.
 * For each rate, creates alone, then full cycles (create, then the buyer pays; the latency is
 * from paying to payment.succeeded verified at the receiver).
 */
export async function openPhases(b: Bench, out: PhaseResult[]): Promise<void> {
  for (const { pct, rate, floorRps } of openRates(b, out)) {
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

export async function fullPhases(b: Bench, out: PhaseResult[]): Promise<void> {
  for (const c of b.opts.fullConcurrency) {
    await resetOrders(b);
    await fullPhase(b, c, out);
  }
}

/**
 * The cluster topology's scaling figure: the create and full phases again (at the highest
 * concurrency) after one of the two workers is stopped, named `…-1-worker`.
 */
export async function oneWorkerPhases(b: Bench, out: PhaseResult[]): Promise<void> {
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
    const t0 = performance.now();
    await payAsBuyer(order);
    const at = await b.receiver.waitFor('payment.succeeded', order.trade_no, REQUEST_TIMEOUT_MS - 1_000);
    return at - t0;
  };
}
