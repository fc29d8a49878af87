/**
 * The contracts' calendar (SPEC §17): when each period is due in China time, the channel's
 * deduction window, at most one success a day, when a plan has ended, and the contract clock.
 */
import fc from 'fast-check';
import {
  attemptAt,
  CHINA_DAYTIME_WINDOW,
  contractTimeOf,
  DAY_MS,
  deductionOrderNo,
  deductionWindow,
  DEDUCTION_ATTEMPTS,
  DEDUCTION_CLOSE_MARGIN_MS,
  inWindow,
  localDay,
  periodAmount,
  periodDueAt,
  planEnded,
  realTimeOf,
  windowFrom,
  type ContractPlan,
} from '../../src/modules/contracts/rules';

const at = (iso: string) => Date.parse(iso);
const plan = (p: Partial<ContractPlan> & { firstAt?: number } = {}): ContractPlan & { firstAt: number } => ({
  period: 'month',
  every: 1,
  amount: 1000,
  firstAt: at('2027-01-31T02:00:00.000Z'),
  count: null,
  totalAmount: null,
  ...p,
});

test('when a monthly plan starts on the 31st, then each period falls on the month end when the month is shorter, at the same China time', () => {
  const p = plan();
  expect([0, 1, 2, 3].map((i) => new Date(periodDueAt(p, i)).toISOString())).toEqual([
    '2027-01-31T02:00:00.000Z',
    '2027-02-28T02:00:00.000Z',
    '2027-03-31T02:00:00.000Z',
    '2027-04-30T02:00:00.000Z',
  ]);
});

test('when a monthly plan starts late on a China day that is the day before in UTC, then the China day of the month is kept', () => {
  // 2027-01-31 23:30 China time is 15:30 UTC on the 31st; 2027-02-28 23:30 China is 15:30 UTC on the 28th.
  const p = plan({ firstAt: at('2027-01-31T15:30:00.000Z') });
  expect(localDay(periodDueAt(p, 1))).toBe('2027-02-28');
  // 00:30 China time on 1 March is 16:30 UTC on 28 February.
  const q = plan({ firstAt: at('2027-02-28T16:30:00.000Z') });
  expect(localDay(q.firstAt)).toBe('2027-03-01');
  expect(localDay(periodDueAt(q, 1))).toBe('2027-04-01');
  expect(localDay(periodDueAt(q, 11))).toBe('2028-02-01');
});

test('when a plan is every 2 weeks or every 3 days, then its periods are that far apart', () => {
  const weeks = plan({ period: 'week', every: 2 });
  expect(periodDueAt(weeks, 3) - periodDueAt(weeks, 0)).toBe(42 * DAY_MS);
  const days = plan({ period: 'day', every: 3 });
  expect(periodDueAt(days, 2) - periodDueAt(days, 0)).toBe(6 * DAY_MS);
});

test('when any instant is asked for, then the window found is the one it is in or the next, always 07:00–22:00 China time', () => {
  fc.assert(
    fc.property(fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2030-01-01T00:00:00Z') }), (ms) => {
      const w = windowFrom(CHINA_DAYTIME_WINDOW, ms);
      expect(w.opensAt).toBeGreaterThanOrEqual(ms);
      expect(inWindow(CHINA_DAYTIME_WINDOW, w.opensAt)).toBe(true);
      expect(inWindow(CHINA_DAYTIME_WINDOW, w.closesAt)).toBe(false);
      expect(localDay(w.opensAt)).toBe(localDay(w.closesAt - 1));
      const closes = new Date(w.closesAt + 8 * 3_600_000).toISOString().slice(11, 16);
      expect(closes).toBe('22:00');
      // Nothing in between the instant and the window's opening is in a window.
      if (w.opensAt > ms)
        expect(inWindow(CHINA_DAYTIME_WINDOW, Math.max(ms, w.opensAt - 60_000))).toBe(false);
    }),
  );
});

test('when the last success was today, then the next deduction waits for tomorrow’s window', () => {
  const morning = at('2027-03-10T01:00:00.000Z'); // 09:00 China time
  const w = deductionWindow(CHINA_DAYTIME_WINDOW, {
    dueAt: morning,
    earliestAt: morning,
    lastSuccessDay: localDay(morning),
  });
  expect(localDay(w.opensAt)).toBe('2027-03-11');
  expect(new Date(w.opensAt).toISOString()).toBe('2027-03-10T23:00:00.000Z'); // 07:00 on the 11th
});

test('when a period falls in the last half hour of a window, then its deduction waits for the next day’s window', () => {
  const late = at('2027-03-10T13:45:00.000Z'); // 21:45 China time
  const w = deductionWindow(CHINA_DAYTIME_WINDOW, { dueAt: late, earliestAt: late, lastSuccessDay: null });
  expect(new Date(w.opensAt).toISOString()).toBe('2027-03-10T23:00:00.000Z');
  expect(attemptAt(w, 0)).toBe(w.opensAt);
});

test("when any due time, notice wait and last success are given, then the deduction's window is in the channel's day window, after both, and on a later day than the last success", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2030-01-01T00:00:00Z') }),
      fc.integer({ min: 0, max: 3 * DAY_MS }),
      fc.option(fc.integer({ min: -2 * DAY_MS, max: 2 * DAY_MS }), { nil: null }),
      (dueAt, wait, lastOffset) => {
        const lastSuccessDay = lastOffset === null ? null : localDay(dueAt + lastOffset);
        const w = deductionWindow(CHINA_DAYTIME_WINDOW, { dueAt, earliestAt: dueAt + wait, lastSuccessDay });
        expect(w.opensAt).toBeGreaterThanOrEqual(dueAt + wait);
        expect(inWindow(CHINA_DAYTIME_WINDOW, w.opensAt)).toBe(true);
        if (lastSuccessDay !== null) expect(localDay(w.opensAt) > lastSuccessDay).toBe(true);
        for (let i = 0; i < DEDUCTION_ATTEMPTS; i++) {
          const t = attemptAt(w, i);
          if (t === null) continue;
          expect(t).toBeLessThanOrEqual(w.closesAt - DEDUCTION_CLOSE_MARGIN_MS);
          expect(localDay(t)).toBe(localDay(w.opensAt));
        }
        expect(attemptAt(w, DEDUCTION_ATTEMPTS)).toBeNull();
        // There is always room for a first attempt.
        expect(attemptAt(w, 0)).toBe(w.opensAt);
      },
    ),
  );
});

test('when a plan has a count or a total amount, then it ends after its count of periods or once the total is taken, the last deduction taking what is left', () => {
  const counted = plan({ count: 3 });
  expect([0, 1, 2, 3].map((i) => planEnded(counted, i, 0))).toEqual([false, false, false, true]);
  const capped = plan({ amount: 1000, totalAmount: 2500 });
  expect(periodAmount(capped, 0)).toBe(1000);
  expect(periodAmount(capped, 2000)).toBe(500);
  expect(planEnded(capped, 2, 2000)).toBe(false);
  expect(planEnded(capped, 3, 2500)).toBe(true);
  expect(planEnded(plan(), 10_000, 10 ** 12)).toBe(false);
});

test('when the clock is scaled, then contract time runs 1/scale as fast from its origin and converts back exactly', () => {
  const clock = { originMs: at('2026-12-06T00:00:00.000Z'), scale: 0.0001 };
  const realSecondLater = clock.originMs + 1_000;
  expect(contractTimeOf(clock, realSecondLater) - clock.originMs).toBe(10_000_000);
  expect(realTimeOf(clock, contractTimeOf(clock, realSecondLater))).toBe(realSecondLater);
  const real = { originMs: 0, scale: 1 };
  expect(contractTimeOf(real, 12345)).toBe(12345);
});

test("when a deduction's order number is made, then it holds a colon no app's order number may, and is one per attempt", () => {
  const a = deductionOrderNo('K202612062113580123456789', 0, 0);
  expect(a).toBe('contract:K202612062113580123456789:1:1');
  expect(a.length).toBeLessThanOrEqual(64);
  expect(deductionOrderNo('K202612062113580123456789', 0, 1)).not.toBe(a);
  expect(/^[A-Za-z0-9_\-|*.@]{1,64}$/.test(a)).toBe(false);
});
