/**
 * Recurring contracts' rules (SPEC §17), pure so that the contract's workflow and its service
 * share them: the plan's calendar (when each period's deduction is due, in China time), the
 * channel's deduction window, when a plan has ended, and the clock a time-scaled stack lives by.
 *
 * Every time here is epoch milliseconds of the contract's clock (`ContractClock`): real time in
 * production, and a faster one on a time-scaled stack, so that a month of deductions passes in
 * seconds while the calendar (month ends, China's days, 07:00–22:00) stays a real calendar.
 */

export const CONTRACT_STATUSES = ['signing', 'active', 'cancelled', 'ended', 'failed'] as const;
export type ContractStatus = (typeof CONTRACT_STATUSES)[number];

export const CONTRACT_PERIODS = ['day', 'week', 'month'] as const;
export type ContractPeriod = (typeof CONTRACT_PERIODS)[number];

import type { ScaledClock } from '../../platform/workflow/clock';

export { CONTRACT_PAY_METHOD } from '../orders/rules';

export function isFinalContractStatus(status: ContractStatus): boolean {
  return status === 'cancelled' || status === 'ended' || status === 'failed';
}

/** A contract's plan, validated: `firstAt` is set once the buyer has signed (its default: then). */
export interface ContractPlan {
  period: ContractPeriod;
  every: number;
  amount: number;
  firstAt: number | null;
  count: number | null;
  totalAmount: number | null;
}

export const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** China's clocks: UTC+8 all year (no daylight saving). */
export const CHINA_UTC_OFFSET_MINUTES = 480;

/**
 * A channel's deduction window: the minutes of the local day in which it takes deductions
 * (WeChat Pay's 委托代扣: 07:00–22:00 China time), and how many may succeed per local day.
 */
export interface DeductionWindow {
  startMinute: number;
  endMinute: number;
  utcOffsetMinutes: number;
}

export const CHINA_DAYTIME_WINDOW: DeductionWindow = {
  startMinute: 7 * 60,
  endMinute: 22 * 60,
  utcOffsetMinutes: CHINA_UTC_OFFSET_MINUTES,
};

/** A contract's clock (platform/clock.ts): real time in production, faster on a time-scaled stack. */
export type ContractClock = ScaledClock;
export { realTimeOf, scaledTimeOf as contractTimeOf } from '../../platform/workflow/clock';

/** The local calendar day of an instant, `YYYY-MM-DD`. */
export function localDay(ms: number, utcOffsetMinutes = CHINA_UTC_OFFSET_MINUTES): string {
  return new Date(ms + utcOffsetMinutes * MINUTE_MS).toISOString().slice(0, 10);
}

/** The instant the local day of `ms` began. */
export function localDayStart(ms: number, utcOffsetMinutes = CHINA_UTC_OFFSET_MINUTES): number {
  const offset = utcOffsetMinutes * MINUTE_MS;
  return Math.floor((ms + offset) / DAY_MS) * DAY_MS - offset;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * When period `index` (0 for the first) of a plan is due: `every` days, weeks or months after
 * the one before, counted from `firstAt`. A month keeps the first's day of the month and time
 * of day in China time, or the month's last day when it is shorter (31 January, then 28 or 29
 * February, then 31 March).
 */
export function periodDueAt(plan: ContractPlan & { firstAt: number }, index: number): number {
  switch (plan.period) {
    case 'day':
      return plan.firstAt + index * plan.every * DAY_MS;
    case 'week':
      return plan.firstAt + index * plan.every * 7 * DAY_MS;
    case 'month': {
      const offset = CHINA_UTC_OFFSET_MINUTES * MINUTE_MS;
      const local = new Date(plan.firstAt + offset);
      const months = local.getUTCMonth() + index * plan.every;
      const year = local.getUTCFullYear() + Math.floor(months / 12);
      const month = ((months % 12) + 12) % 12;
      const day = Math.min(local.getUTCDate(), daysInMonth(year, month));
      const timeOfDay = (plan.firstAt + offset) % DAY_MS;
      return Date.UTC(year, month, day) + timeOfDay - offset;
    }
  }
}

/**
 * The window in which a deduction may be made at `ms` or next: the rest of the window `ms` is
 * in, or the next one to open.
 */
export function windowFrom(window: DeductionWindow, ms: number): { opensAt: number; closesAt: number } {
  const dayStart = localDayStart(ms, window.utcOffsetMinutes);
  const opens = dayStart + window.startMinute * MINUTE_MS;
  const closes = dayStart + window.endMinute * MINUTE_MS;
  if (ms < opens) return { opensAt: opens, closesAt: closes };
  if (ms < closes) return { opensAt: ms, closesAt: closes };
  return { opensAt: opens + DAY_MS, closesAt: closes + DAY_MS };
}

/** Whether the channel takes a deduction at `ms`. */
export function inWindow(window: DeductionWindow, ms: number): boolean {
  return windowFrom(window, ms).opensAt === ms;
}

/**
 * The window of a period's deduction: the first that opens at or after the period is due and
 * after the pre-deduction notice's wait (`earliestAt`), on a later day than the contract's last
 * successful deduction (at most one a day, SPEC §17).
 */
export function deductionWindow(
  window: DeductionWindow,
  p: { dueAt: number; earliestAt: number; lastSuccessDay: string | null },
): { opensAt: number; closesAt: number } {
  let found = windowFrom(window, Math.max(p.dueAt, p.earliestAt));
  const tooLate = () =>
    (p.lastSuccessDay !== null && localDay(found.opensAt, window.utcOffsetMinutes) <= p.lastSuccessDay) ||
    // The rest of a window too short for one attempt is no window: the next day's is.
    found.opensAt > found.closesAt - DEDUCTION_CLOSE_MARGIN_MS;
  while (tooLate()) {
    found = windowFrom(window, localDayStart(found.opensAt, window.utcOffsetMinutes) + DAY_MS);
  }
  return found;
}

/** What a period deducts: the plan's amount, or what is left of `total_amount` when less. */
export function periodAmount(plan: ContractPlan, deductedAmount: number): number {
  if (plan.totalAmount === null) return plan.amount;
  return Math.max(0, Math.min(plan.amount, plan.totalAmount - deductedAmount));
}

/**
 * Whether a plan has ended before period `index`: its `count` of periods has passed (a period
 * whose deduction failed counts: the plan is a calendar), or `total_amount` has been taken.
 */
export function planEnded(plan: ContractPlan, index: number, deductedAmount: number): boolean {
  if (plan.count !== null && index >= plan.count) return true;
  return periodAmount(plan, deductedAmount) === 0;
}

/**
 * The days a period's deduction may be made on, from its window's: a window missed before any
 * attempt (the worker down) moves to the next day's, as WeChat Pay's deduction period allows.
 */
export const DEDUCTION_DAYS = 3;

/** A period's deduction attempts: at most three, two hours apart, each half an hour before the window closes. */
export const DEDUCTION_ATTEMPTS = 3;
export const DEDUCTION_RETRY_GAP_MS = 2 * 3_600_000;
export const DEDUCTION_CLOSE_MARGIN_MS = 30 * MINUTE_MS;

/** When attempt `attempt` (0 for the first) of a period is made; null when the window leaves no room for it. */
export function attemptAt(w: { opensAt: number; closesAt: number }, attempt: number): number | null {
  if (attempt >= DEDUCTION_ATTEMPTS) return null;
  const at = w.opensAt + attempt * DEDUCTION_RETRY_GAP_MS;
  return at <= w.closesAt - DEDUCTION_CLOSE_MARGIN_MS ? at : null;
}

/** How long a buyer has to sign before the contract fails (and its signing page stops taking signatures). */
export const SIGN_WITHIN_MS = DAY_MS;

/**
 * The merchant order number of a deduction: durapay's own form (a `:` no app's order number
 * may hold), one per attempt, so that a retry is a new order as the channels require.
 */
export function deductionOrderNo(contractNo: string, period: number, attempt: number): string {
  return `contract:${contractNo}:${period + 1}:${attempt + 1}`;
}
