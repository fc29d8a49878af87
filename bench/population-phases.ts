/**
 * The phases that measure creation with other orders alive beside it, each on a stack of its
 * own: the steady state (orders arriving for a whole scaled lifetime: expiring, paid, refunded)
 * and growth (creates with thousands of order workflows open).
 */
import { describeError, runCount, runOpenLoop, type Operation } from './lib/load';
import { say } from './lib/cli';
import { UsageMonitor, type Usage } from './lib/procstat';
import { progressBar } from './lib/progress';
import type { PhaseResult } from './lib/report';
import { steadyFate, summarize } from './lib/stats';
import { REQUEST_TIMEOUT_MS, measure, openLoopUsage, payAsBuyer, type Bench } from './harness';
import { createOperation, orderInput } from './phases';

/** The stack's idle period before scaling (ORDER_IDLE_END's default). */
const IDLE_END_MS = 10 * 60_000;

/**
 * The steady state (own stack, time scaled): orders arrive at a fixed rate for one order
 * lifetime (a 30-minute expiry, scaled) before the measured window, so that within it the
 * waiting, polls and expiries of older orders overlap new creates as they do in production.
 * 7 in 10 expire unpaid, 3 are paid by the buyer at a random moment of their first half-life,
 * and 1 of those is then refunded in full. The stack's CPU over the window divided by the
 * orders created in it is the lifetime CPU of one order.
 */
export async function steadyPhase(b: Bench, out: PhaseResult[]): Promise<void> {
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
  /** Orders paid in the phase and not refunded: what the idle count and the late refund take. */
  const paidKept: string[] = [];
  let paid = 0;
  const payLater = async (
    order: { trade_no: string; pay_credential: Record<string, unknown> },
    refund: boolean,
    amount: number,
    askedAt: number,
  ) => {
    // The buyer pays within the first half of the order's life, counted from when it was asked
    // for: a create answered late (a loaded machine) leaves the buyer less time, never an order
    // already expired.
    const payAt = askedAt + Math.random() * (lifetimeMs / 2);
    await new Promise((r) => setTimeout(r, Math.max(0, payAt - performance.now())));
    await payAsBuyer(order);
    await b.receiver.waitFor('payment.succeeded', order.trade_no, REQUEST_TIMEOUT_MS);
    paid += 1;
    if (refund) await b.sdk.refund({ trade_no: order.trade_no, refund_amount: amount });
    else paidKept.push(order.trade_no);
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
      if (fate !== 'expire') follow(payLater(order, fate === 'pay-refund', input.amount, t0));
      return took;
    },
    progress: progressBar('steady', (warmMs + windowS * 1000) / 1000, 's'),
    onMeasureStart: () => monitor.start(),
    onArrivalsEnd: () => (processes = monitor.stop()),
  });
  say(`  steady: waiting for ${sideTasks.size} payments and refunds under way …`);
  while (sideTasks.size > 0) await Promise.race(sideTasks);
  for (const [message, count] of Object.entries(r.errorCounts)) {
    process.stdout.write(`steady: ${count} × error: ${message}\n`);
  }
  for (const [message, count] of Object.entries(side.errors)) {
    process.stdout.write(`steady: ${count} × payment or refund error: ${message}\n`);
  }
  const sideErrors = Object.values(side.errors).reduce((a, n) => a + n, 0);
  const idle = await afterIdle(b, paid, paidKept);
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
    idle,
    measures: `orders created open-loop at ${rate}/s with DURAPAY_TIME_SCALE=${timeScale} (a 30-minute expiry lasts ${(lifetimeMs / 1000).toFixed(0)} s): 7 in 10 expire unpaid, 3 are paid, 1 of those refunded; latency is the create's; CPU over ${windowS} s after one lifetime of warm-up, per order created in it, is an order's lifetime CPU`,
  });
}

/**
 * SPEC §7: once the orders paid in the steady phase have had the idle period (10 minutes,
 * scaled) with nothing to wait for, how many of their workflows are still open; and a refund of
 * one of them, which reopens it, made once.
 */
async function afterIdle(b: Bench, paid: number, paidKept: string[]): Promise<PhaseResult['idle']> {
  const waitedMs = 2 * IDLE_END_MS * b.opts.timeScale + 5_000;
  say(`  steady: ${paid} orders paid; waiting ${(waitedMs / 1000).toFixed(0)} s (the idle period, twice) …`);
  await new Promise((r) => setTimeout(r, waitedMs));
  const { count: open } = await b.temporal.workflow.count(
    `WorkflowType = 'orderWorkflow' AND ExecutionStatus = 'Running' AND AppId = '${b.stack.app.app_id}' ` +
      "AND BizStatus IN ('paid', 'partially_refunded', 'refunded')",
  );
  let refund = 'no paid order to refund';
  const tradeNo = paidKept[0];
  if (tradeNo) {
    try {
      const r = await b.sdk.refund({ trade_no: tradeNo, refund_amount: 1 });
      await b.receiver.waitFor('refund.succeeded', tradeNo, REQUEST_TIMEOUT_MS);
      refund = `${r.status}, then refund.succeeded`;
    } catch (err) {
      refund = describeError(err);
    }
  }
  return {
    paid_orders: paid,
    open_after_idle: open,
    waited_s: Math.round(waitedMs / 1000),
    refund_after_idle: refund,
  };
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

export async function growthPhases(b: Bench, out: PhaseResult[]): Promise<void> {
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
