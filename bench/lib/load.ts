import type { Progress } from './progress';

/**
 * One operation of a phase: resolves on success, throws on any error. It may resolve with its
 * own latency in milliseconds when only part of it is to be measured (the full cycle times the
 * payment, not the order's creation before it); otherwise its whole duration is its latency.
 */
export type Operation = (seq: number) => Promise<number | void>;

export interface ClosedLoopOptions {
  concurrency: number;
  /** How long requests are measured, after the warm-up. */
  durationMs: number;
  /** Requests started during the warm-up run but are not counted (JIT, pools, caches). */
  warmupMs: number;
  /** A hard bound on the number of operations started, warm-up included. */
  maxRequests: number;
  /** One operation's deadline; past it the operation counts as an error. */
  timeoutMs: number;
  operation: Operation;
  progress: Progress;
}

export interface ClosedLoopResult {
  /** Operations started in the measured window that succeeded. */
  requests: number;
  errors: number;
  /** Each distinct error message with its count. */
  errorCounts: Record<string, number>;
  /** Latency of every measured success, in milliseconds. */
  latenciesMs: number[];
  /** From the end of the warm-up to the last measured completion. */
  elapsedMs: number;
}

/** An error as one line, `<status> <code>: <message>` for durapay's API errors. */
export function describeError(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const { code, httpStatus, message, name } = err as {
    code?: unknown;
    httpStatus?: unknown;
    message?: unknown;
    name?: unknown;
  };
  const text = typeof message === 'string' && message ? message : String(name ?? 'error');
  if (typeof code === 'string' && typeof httpStatus === 'number') return `${httpStatus} ${code}: ${text}`;
  return text;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A closed-loop load generator: `concurrency` callers, each starting its next operation as soon
 * as its previous one ends, until the time or the request count runs out. A closed loop never
 * queues more work than the system answers, so latency is measured under the offered
 * concurrency rather than under an ever-growing backlog.
 */
export async function runClosedLoop(opts: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const started = performance.now();
  const measureFrom = started + opts.warmupMs;
  const stopAt = measureFrom + opts.durationMs;
  const latenciesMs: number[] = [];
  const errorCounts: Record<string, number> = {};
  let errors = 0;
  let next = 0;
  let lastDone = measureFrom;

  const ticker = setInterval(() => {
    const now = performance.now();
    const secs = Math.max(0, (now - measureFrom) / 1000);
    const rps = secs > 0 ? latenciesMs.length / secs : 0;
    opts.progress.update(
      Math.max(0, Math.min(opts.durationMs, now - measureFrom)) / 1000,
      now < measureFrom
        ? '(warming up)'
        : `${latenciesMs.length} ok, ${rps.toFixed(1)}/s${errors ? `, ${errors} errors` : ''}`,
    );
  }, 250);

  async function caller(): Promise<void> {
    while (next < opts.maxRequests && performance.now() < stopAt) {
      const seq = next++;
      const t0 = performance.now();
      const measured = t0 >= measureFrom;
      try {
        const own = await withTimeout(opts.operation(seq), opts.timeoutMs);
        const t1 = performance.now();
        if (measured) {
          latenciesMs.push(typeof own === 'number' ? own : t1 - t0);
          lastDone = Math.max(lastDone, t1);
        }
      } catch (err) {
        if (measured) {
          errors += 1;
          lastDone = Math.max(lastDone, performance.now());
        }
        const key = describeError(err);
        errorCounts[key] = (errorCounts[key] ?? 0) + 1;
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: opts.concurrency }, caller));
  } finally {
    clearInterval(ticker);
    opts.progress.update(
      opts.durationMs / 1000,
      `${latenciesMs.length} ok${errors ? `, ${errors} errors` : ''}`,
    );
    opts.progress.stop();
  }
  return {
    requests: latenciesMs.length,
    errors,
    errorCounts,
    latenciesMs,
    elapsedMs: lastDone - measureFrom,
  };
}

/**
 * Runs `count` operations at `concurrency` (seeding open orders): bounded by count, reported as
 * a count. Stops early and reports the first error if any operation fails.
 */
export async function runCount(opts: {
  count: number;
  concurrency: number;
  timeoutMs: number;
  operation: Operation;
  progress: Progress;
}): Promise<{ done: number; elapsedMs: number }> {
  const started = performance.now();
  let next = 0;
  let done = 0;
  let failure: unknown;
  const ticker = setInterval(() => {
    const secs = (performance.now() - started) / 1000;
    opts.progress.update(done, `${(done / Math.max(secs, 0.001)).toFixed(0)}/s`);
  }, 250);
  async function caller(): Promise<void> {
    while (next < opts.count && failure === undefined) {
      const seq = next++;
      try {
        await withTimeout(opts.operation(seq), opts.timeoutMs);
        done += 1;
      } catch (err) {
        failure ??= err;
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, Math.max(1, opts.count)) }, caller));
  } finally {
    clearInterval(ticker);
    opts.progress.update(done);
    opts.progress.stop();
  }
  if (failure !== undefined)
    throw new Error(`seeding failed after ${done} operations: ${describeError(failure)}`);
  return { done, elapsedMs: performance.now() - started };
}

export interface OpenLoopOptions {
  /** Arrivals per second, whatever the answers: a backlog shows as latency, not as a lower rate. */
  ratePerS: number;
  /** Arrivals before `measureFromMs` run but are not counted. */
  measureFromMs: number;
  /** Arrivals stop at this time (from the start), then the loop waits for the ones under way. */
  durationMs: number;
  timeoutMs: number;
  operation: Operation;
  progress: Progress;
  /** Called at `measureFromMs` (start a usage monitor), and when arrivals stop (stop it). */
  onMeasureStart?: () => void;
  onArrivalsEnd?: () => void;
}

/**
 * An open-loop load generator: operations start at a fixed rate (the k-th at k / rate seconds)
 * however long the earlier ones take, as buyers arrive at a gateway. Latency is then the
 * system's under that offered load; a closed loop of N callers measures its own queue instead.
 */
export async function runOpenLoop(opts: OpenLoopOptions): Promise<ClosedLoopResult & { offered: number }> {
  const started = performance.now();
  const latenciesMs: number[] = [];
  const errorCounts: Record<string, number> = {};
  const inFlight = new Set<Promise<void>>();
  let errors = 0;
  let offered = 0;
  let measuring = false;
  let lastDone = started + opts.measureFromMs;

  const ticker = setInterval(() => {
    const now = performance.now() - started;
    opts.progress.update(
      Math.min(opts.durationMs, now) / 1000,
      now < opts.measureFromMs
        ? `(warming up, ${inFlight.size} under way)`
        : `${latenciesMs.length} ok, ${inFlight.size} under way${errors ? `, ${errors} errors` : ''}`,
    );
  }, 250);

  const launch = (seq: number, measured: boolean) => {
    const t0 = performance.now();
    const p = withTimeout(opts.operation(seq), opts.timeoutMs).then(
      (own) => {
        const t1 = performance.now();
        if (!measured) return;
        latenciesMs.push(typeof own === 'number' ? own : t1 - t0);
        lastDone = Math.max(lastDone, t1);
      },
      (err: unknown) => {
        const key = describeError(err);
        errorCounts[key] = (errorCounts[key] ?? 0) + 1;
        if (measured) errors += 1;
      },
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  try {
    const intervalMs = 1000 / opts.ratePerS;
    for (let seq = 0; ; seq++) {
      const due = seq * intervalMs;
      if (due >= opts.durationMs) break;
      const wait = started + due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const measured = due >= opts.measureFromMs;
      if (measured && !measuring) {
        measuring = true;
        opts.onMeasureStart?.();
      }
      if (measured) offered += 1;
      launch(seq, measured);
    }
    opts.onArrivalsEnd?.();
    while (inFlight.size > 0) await Promise.race(inFlight);
  } finally {
    clearInterval(ticker);
    opts.progress.update(
      opts.durationMs / 1000,
      `${latenciesMs.length} ok${errors ? `, ${errors} errors` : ''}`,
    );
    opts.progress.stop();
  }
  return {
    requests: latenciesMs.length,
    errors,
    errorCounts,
    latenciesMs,
    elapsedMs: lastDone - (started + opts.measureFromMs),
    offered,
  };
}
