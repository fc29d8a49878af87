/** Order and refund rules of SPEC §3, pure so that workflows and the API share them. */

export const ORDER_STATUSES = ['pending', 'paid', 'partially_refunded', 'refunded', 'closed'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export type RefundStatus = 'processing' | 'success' | 'failed';
export type ProfitSharingStatus = 'none' | 'pending' | 'processing' | 'finished' | 'failed';

export const MAX_AMOUNT = 1_000_000_000_000;
export const DEFAULT_EXPIRE_MINUTES = 30;

export function isPaidStatus(status: OrderStatus): boolean {
  return status === 'paid' || status === 'partially_refunded' || status === 'refunded';
}

/** The status after `refunded` of `amount` has succeeded. */
export function statusAfterRefunds(amount: number, refunded: number): OrderStatus {
  if (refunded <= 0) return 'paid';
  return refunded >= amount ? 'refunded' : 'partially_refunded';
}

/** The parameters that identify a create request; a repeat must match them (SPEC §3.1). */
export interface CreateIdentity {
  amount: number;
  payMethod: string;
  channelCode: string;
  merchantId: string | null;
  profitSharingAmount: number;
}

export function sameCreate(a: CreateIdentity, b: CreateIdentity): boolean {
  return (
    a.amount === b.amount &&
    a.payMethod === b.payMethod &&
    a.channelCode === b.channelCode &&
    a.merchantId === b.merchantId &&
    a.profitSharingAmount === b.profitSharingAmount
  );
}

/**
 * Splits a profit-sharing amount among receivers by weight; the remainder of the integer
 * division goes to the first receiver (SPEC §3.7).
 */
export function splitByWeight<T extends { weight: number }>(
  amount: number,
  receivers: T[],
): (T & { amount: number })[] {
  const total = receivers.reduce((s, r) => s + r.weight, 0);
  const shares = receivers.map((r) => ({ ...r, amount: Math.floor((amount * r.weight) / total) }));
  const rest = amount - shares.reduce((s, r) => s + r.amount, 0);
  if (shares[0]) shares[0].amount += rest;
  return shares;
}

/** The polling schedule of SPEC §3.2: 10 s, 30 s, 1 min, 2 min, 5 min, then every 5 min. */
export const PAYMENT_POLL_SCHEDULE_MS = [10_000, 30_000, 60_000, 120_000, 300_000];

/** SPEC §3.5: a refund is followed (same backoff) for up to 24 h. */
export const REFUND_POLL_WINDOW_MS = 24 * 3_600_000;

/** How long a closed order still accepts a payment the channel reports late (SPEC §3.2). */
export const LATE_PAYMENT_WINDOW_MS = 24 * 3_600_000;

export function pollGap(schedule: number[], index: number): number {
  return schedule[Math.min(index, schedule.length - 1)]!;
}

/** RFC 3339 in UTC with milliseconds, or null (SPEC §1). */
export function isoOrNull(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString();
}
