/**
 * The reconciliation's days (SPEC §10): the channels' statements are days in China time, a
 * statement is waited for until midday of the next day, and a payment the statement lacks
 * waits three days before it is a mismatch.
 */
import fc from 'fast-check';
import {
  addDays,
  billDateOf,
  carryOverEnded,
  dayStart,
  isBillDate,
  notReadyBackoffMs,
  readyDeadline,
} from '../../src/modules/reconciliation/rules';

test('when a day is named, then it starts at midnight in China (16:00 UTC the day before)', () => {
  expect(dayStart('2026-11-26').toISOString()).toBe('2026-11-25T16:00:00.000Z');
});

test('when an instant falls either side of midnight in China, then it belongs to the day China says', () => {
  expect(billDateOf(new Date('2026-11-25T15:59:59.999Z'))).toBe('2026-11-25');
  expect(billDateOf(new Date('2026-11-25T16:00:00.000Z'))).toBe('2026-11-26');
});

test('when any instant is taken, then it lies within the day it belongs to', () => {
  fc.assert(
    fc.property(
      fc.date({ min: new Date('2000-01-01'), max: new Date('2090-01-01'), noInvalidDate: true }),
      (at) => {
        const day = billDateOf(at);
        expect(isBillDate(day)).toBe(true);
        expect(dayStart(day).getTime()).toBeLessThanOrEqual(at.getTime());
        expect(dayStart(addDays(day, 1)).getTime()).toBeGreaterThan(at.getTime());
      },
    ),
  );
});

test('when dates are checked, then only real calendar dates pass', () => {
  for (const good of ['2026-11-26', '2024-02-29', '2026-12-31']) expect(isBillDate(good)).toBe(true);
  for (const bad of [
    '2026-02-29',
    '2026-13-01',
    '2026-11-31',
    '26-11-26',
    '2026-11-26T00:00',
    '',
    '2026-1-1',
  ]) {
    expect(isBillDate(bad)).toBe(false);
  }
});

test('when days are added across a month, a year and a leap day, then the calendar is followed', () => {
  expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
  expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
  expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
});

test("when a day's statement is waited for, then it is until midday in China of the next day", () => {
  expect(readyDeadline('2026-11-26').toISOString()).toBe('2026-11-27T04:00:00.000Z');
});

test('when a payment is missing from its day, then the carry-over ends with the third day after', () => {
  const day = '2026-11-26';
  expect(carryOverEnded(day, new Date('2026-11-29T15:59:59.999Z'))).toBe(false);
  expect(carryOverEnded(day, new Date('2026-11-29T16:00:00.000Z'))).toBe(true);
});

test('when a statement is not ready, then it is asked again after 5 minutes, doubling to an hour', () => {
  expect([0, 1, 2, 3, 4, 10].map(notReadyBackoffMs)).toEqual([
    300_000, 600_000, 1_200_000, 2_400_000, 3_600_000, 3_600_000,
  ]);
});
