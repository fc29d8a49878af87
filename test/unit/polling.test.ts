/**
 * One attempt of a polling activity (platform/polling.ts), run in Temporal's activity test
 * environment: what it asks, what it returns and the retry delay it asks the server for.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { pollAttempt, STILL_WAITING, type PollPlan } from '../../src/platform/polling';

const GAPS = [10_000, 30_000, 60_000, 120_000, 300_000];

function plan(over: Partial<PollPlan> = {}): PollPlan {
  return { gapsMs: GAPS, deadlineMs: Date.now() + 30 * 60_000, askAtDeadline: false, ...over };
}

/** Runs attempt `attempt`; returns what it returned, or the failure it threw. */
async function attemptNo(attempt: number, p: PollPlan, ask: () => Promise<string | undefined>) {
  const env = new MockActivityEnvironment({ attempt });
  const askFailures: unknown[] = [];
  try {
    const out = await env.run(() => pollAttempt(p, ask, (err) => askFailures.push(err)));
    return { out, askFailures };
  } catch (err) {
    return { failure: err as ApplicationFailure, askFailures };
  }
}

const delayOf = (f: ApplicationFailure | undefined) =>
  f?.nextRetryDelay === undefined || f.nextRetryDelay === null ? undefined : msToNumber(f.nextRetryDelay);

describe('pollAttempt', () => {
  test('when it is the first attempt, then it asks nothing and waits the first gap', async () => {
    const ask = jest.fn(async () => 'paid');
    const r = await attemptNo(1, plan(), ask);
    expect(ask).not.toHaveBeenCalled();
    expect(r.failure).toBeInstanceOf(ApplicationFailure);
    expect(r.failure!.type).toBe(STILL_WAITING);
    expect(r.failure!.nonRetryable).toBe(false);
    expect(r.failure!.category).toBe(ApplicationFailureCategory.BENIGN);
    expect(delayOf(r.failure)).toBe(10_000);
  });

  test.each([
    [2, 30_000],
    [3, 60_000],
    [5, 300_000],
    [9, 300_000],
  ])(
    'when attempt %i finds nothing final, then it waits the next gap of the schedule (%i ms)',
    async (attempt, gap) => {
      const ask = jest.fn(async () => undefined);
      const r = await attemptNo(attempt, plan(), ask);
      expect(ask).toHaveBeenCalledTimes(1);
      expect(delayOf(r.failure)).toBe(gap);
    },
  );

  test('when a poll is scheduled again further along, then it continues the schedule from there', async () => {
    const r = await attemptNo(1, plan({ firstGap: 2 }), async () => undefined);
    expect(delayOf(r.failure)).toBe(60_000);
    const r2 = await attemptNo(3, plan({ firstGap: 2 }), async () => undefined);
    expect(delayOf(r2.failure)).toBe(300_000);
  });

  test('when the answer is final, then the attempt returns it with the gap a later poll continues from', async () => {
    const r = await attemptNo(3, plan({ firstGap: 1 }), async () => 'paid');
    expect(r.out).toEqual({ answer: 'paid', nextGap: 3 });
  });

  test('when the next gap would pass the deadline, then the attempt waits only until the deadline', async () => {
    const r = await attemptNo(4, plan({ deadlineMs: Date.now() + 5_000 }), async () => undefined);
    const delay = delayOf(r.failure)!;
    expect(delay).toBeGreaterThan(4_000);
    expect(delay).toBeLessThanOrEqual(5_000);
  });

  test('when the deadline has come and the caller makes the final check, then it returns due without asking', async () => {
    const ask = jest.fn(async () => 'paid');
    const r = await attemptNo(6, plan({ deadlineMs: Date.now() - 1 }), ask);
    expect(ask).not.toHaveBeenCalled();
    expect(r.out).toEqual({ due: true });
  });

  test('when the deadline has come and the poll makes the final check, then it asks once more first', async () => {
    const final = await attemptNo(
      6,
      plan({ deadlineMs: Date.now() - 1, askAtDeadline: true }),
      async () => 'ok',
    );
    expect(final.out).toEqual({ answer: 'ok', nextGap: 5 });
    const nothing = await attemptNo(
      6,
      plan({ deadlineMs: Date.now() - 1, askAtDeadline: true }),
      async () => undefined,
    );
    expect(nothing.out).toEqual({ due: true });
  });

  test('when the query fails, then the failure is reported and the schedule goes on as after a pending answer', async () => {
    const r = await attemptNo(2, plan(), async () => {
      throw new Error('channel unreachable');
    });
    expect(r.askFailures).toHaveLength(1);
    expect(String(r.askFailures[0])).toContain('channel unreachable');
    expect(r.failure!.type).toBe(STILL_WAITING);
    expect(delayOf(r.failure)).toBe(30_000);
  });
});
