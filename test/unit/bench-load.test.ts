import { runClosedLoop, runCount } from '../../bench/lib/load';
import { silentProgress } from '../../bench/lib/progress';

const tick = () => new Promise((r) => setImmediate(r));

describe('bench load generator', () => {
  test('when the request bound is reached, then no more operations start and each caller has at most one in flight', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const seen: number[] = [];
    const result = await runClosedLoop({
      concurrency: 4,
      durationMs: 60_000,
      warmupMs: 0,
      maxRequests: 50,
      timeoutMs: 5_000,
      progress: silentProgress,
      operation: async (seq) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        seen.push(seq);
        await tick();
        inFlight -= 1;
      },
    });
    expect(result.requests).toBe(50);
    expect(result.errors).toBe(0);
    expect(result.latenciesMs).toHaveLength(50);
    expect(maxInFlight).toBe(4);
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  test('when operations fail, then they count as errors, grouped by message, and not as requests', async () => {
    const result = await runClosedLoop({
      concurrency: 2,
      durationMs: 60_000,
      warmupMs: 0,
      maxRequests: 10,
      timeoutMs: 5_000,
      progress: silentProgress,
      operation: async (seq) => {
        await tick();
        if (seq % 2 === 1) {
          throw Object.assign(new Error('order closed'), { code: 'order_closed', httpStatus: 422 });
        }
      },
    });
    expect(result.requests).toBe(5);
    expect(result.errors).toBe(5);
    expect(result.errorCounts).toEqual({ '422 order_closed: order closed': 5 });
  });

  test('when an operation reports its own latency, then that is recorded instead of its duration', async () => {
    const result = await runClosedLoop({
      concurrency: 1,
      durationMs: 60_000,
      warmupMs: 0,
      maxRequests: 3,
      timeoutMs: 5_000,
      progress: silentProgress,
      operation: async (seq) => 1000 + seq,
    });
    expect(result.latenciesMs).toEqual([1000, 1001, 1002]);
  });

  test('when an operation never answers, then it fails at its deadline instead of hanging the phase', async () => {
    const result = await runClosedLoop({
      concurrency: 1,
      durationMs: 60_000,
      warmupMs: 0,
      maxRequests: 1,
      timeoutMs: 50,
      progress: silentProgress,
      operation: () => new Promise<void>(() => undefined),
    });
    expect(result.errors).toBe(1);
    expect(Object.keys(result.errorCounts)).toEqual(['no answer within 50 ms']);
  });

  test('when seeding, then exactly the count runs, and the first failure stops it with its message', async () => {
    let calls = 0;
    const ok = await runCount({
      count: 25,
      concurrency: 8,
      timeoutMs: 5_000,
      progress: silentProgress,
      operation: async () => {
        calls += 1;
        await tick();
      },
    });
    expect(ok.done).toBe(25);
    expect(calls).toBe(25);

    await expect(
      runCount({
        count: 25,
        concurrency: 1,
        timeoutMs: 5_000,
        progress: silentProgress,
        operation: async (seq) => {
          if (seq === 3) throw new Error('database unreachable');
        },
      }),
    ).rejects.toThrow('seeding failed after 3 operations: database unreachable');
  });
});
