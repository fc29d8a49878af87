// The reconciliation's pure rules (SPEC §10): days, deadlines, carry-over. Workflow-safe.

/** The channels' statements are days in China's time (UTC+8, no daylight saving). */
export const CHANNEL_UTC_OFFSET_MS = 8 * 3_600_000;
export const DAY_MS = 86_400_000;
/** A payment durapay has and the statement has not waits this many days (cross-midnight timing). */
export const CARRY_OVER_DAYS = 3;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether a string is a real calendar date YYYY-MM-DD. */
export function isBillDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === s;
}

/** The instant a bill date starts (00:00 in China). */
export function dayStart(billDate: string): Date {
  return new Date(Date.parse(`${billDate}T00:00:00Z`) - CHANNEL_UTC_OFFSET_MS);
}

/** The bill date `days` after (or before) another. */
export function addDays(billDate: string, days: number): string {
  return new Date(Date.parse(`${billDate}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The bill date an instant falls on in China. */
export function billDateOf(at: Date): string {
  return new Date(at.getTime() + CHANNEL_UTC_OFFSET_MS).toISOString().slice(0, 10);
}

/** Until when a day's statement is waited for: midday (China) of the next day. */
export function readyDeadline(billDate: string): Date {
  return new Date(dayStart(addDays(billDate, 1)).getTime() + 12 * 3_600_000);
}

/** Whether the carry-over of a day's payments has passed at `now`: it ends with the third day after. */
export function carryOverEnded(billDate: string, now: Date): boolean {
  return now.getTime() >= dayStart(addDays(billDate, CARRY_OVER_DAYS + 1)).getTime();
}

/** The waits between asks for a statement not ready: 5 min doubling to an hour. */
export function notReadyBackoffMs(attempt: number): number {
  return Math.min(60 * 60_000, 5 * 60_000 * 2 ** Math.max(0, attempt));
}
