/**
 * The money of one paid order (SPEC §3.5, §3.7): what went back to the buyer, what went to
 * profit-sharing receivers and what came back from them. Pure and deterministic, so that the
 * order workflow decides with it and property tests can drive it through any interleaving.
 *
 * Where an order's money is at any moment:
 *   amount = to the buyer (refunds succeeded, abnormal or in flight)
 *          + with the receivers (the share being made or made, less what came back)
 *          + with the merchant (the rest)
 * A refund may take only what is with the merchant, and what the receivers can give back. While
 * a return is under way its amount is still with a receiver but already promised to the refund
 * that asked for it, so it is counted once, on the buyer's side.
 */
import { REFUND_EXCEEDS, type ProfitSharingStatus, type Refusal } from './rules';

/** A receiver as the merchant configured it (SPEC §5.1). */
export interface ShareReceiver {
  type: string;
  account: string;
  name?: string;
}

/** A receiver's part of the order's share. */
export interface ReceiverPart extends ShareReceiver {
  /** What the share gives (or gave) this receiver. */
  shared: number;
  /** What came back from it for refunds. */
  returned: number;
  /** Asked back for a refund and not confirmed yet. */
  returning: number;
  /**
   * Asked back and never answered (the channel could not be asked for as long as the refund
   * waited): with the receiver until the channel says otherwise, and never asked for again
   * meanwhile. Absent in books kept before it existed.
   */
  unsettled?: number;
}

export interface RefundBook {
  amount: number;
  /** Refunds that succeeded. */
  succeeded: number;
  /** Refunds the channel ended ABNORMAL: the money left the order (SPEC §3.5). */
  abnormal: number;
  /** Refunds decided and not settled: reserved. */
  inFlight: number;
  share: {
    /** The order's profit_sharing_amount. */
    planned: number;
    status: ProfitSharingStatus;
    /** The receivers' parts, once the share is decided (empty before). */
    parts: ReceiverPart[];
  };
}

export function openBook(amount: number, plannedShare: number): RefundBook {
  return {
    amount,
    succeeded: 0,
    abnormal: 0,
    inFlight: 0,
    share: { planned: plannedShare, status: plannedShare > 0 ? 'pending' : 'none', parts: [] },
  };
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

/** The order's refunded_amount: the money that left the order for the buyer. */
export function refundedOf(book: RefundBook): number {
  return book.succeeded + book.abnormal;
}

/** What the share gives its receivers, whether being made or made (0 before, or if it failed). */
export function sharedOf(book: RefundBook): number {
  return sum(book.share.parts.map((p) => p.shared));
}

export function returnedOf(book: RefundBook): number {
  return sum(book.share.parts.map((p) => p.returned));
}

/** With the receivers and not promised to a refund. */
function heldByReceivers(book: RefundBook): number {
  return sum(book.share.parts.map((p) => p.shared - p.returned - p.returning));
}

/** Refunds that left or may leave the order: succeeded, abnormal or in flight. */
function toBuyer(book: RefundBook): number {
  return book.succeeded + book.abnormal + book.inFlight;
}

/** What is with the merchant, free for a refund without asking anyone for money back. */
export function unsharedRemainder(book: RefundBook): number {
  return book.amount - toBuyer(book) - heldByReceivers(book);
}

/** How much of a receiver's part can still be asked back. */
function returnableOf(part: ReceiverPart): number {
  return part.shared - part.returned - part.returning - (part.unsettled ?? 0);
}

/** What the channel can do about a share (ProfitSharingPort): take parts back, and from whom. */
export interface ReturnAbility {
  /** `separate`: returns before the refund; `with_refund`: on the refund itself; none: never. */
  returns?: 'separate' | 'with_refund';
  returnable(receiver: ShareReceiver): boolean;
}

/** A part of the share to take back from one receiver (by its index in the parts) for a refund. */
export interface PlannedReturn {
  receiver: number;
  amount: number;
}

export type RefundDecision = { ok: true; returns: PlannedReturn[] } | { ok: false; refusal: Refusal };

/**
 * Whether a refund of `refund` fits the order now, and which parts of the share must come back
 * first (SPEC §3.7): none when the merchant's remainder covers it; else the missing part, from
 * the receivers in their order, when the channel can take it back from them; else refused.
 */
export function decideRefund(book: RefundBook, refund: number, ability: ReturnAbility): RefundDecision {
  const exceeds = (message: string): RefundDecision => ({
    ok: false,
    refusal: { code: 'refund_amount_exceed', message },
  });
  if (refund > book.amount - toBuyer(book)) return exceeds(REFUND_EXCEEDS.message);
  const free = unsharedRemainder(book);
  if (refund <= free) return { ok: true, returns: [] };
  let need = refund - free;
  const shared = sharedOf(book) - returnedOf(book);
  const cannot = (why: string) =>
    exceeds(
      `${REFUND_EXCEEDS.message}: ${shared} of the order is shared to profit-sharing receivers and ${why}; ` +
        `at most ${Math.max(0, free)} can be refunded now`,
    );
  if (book.share.status === 'processing') return cannot('the sharing is still under way at the channel');
  if (!ability.returns) return cannot('the channel cannot take a share back');
  const returns: PlannedReturn[] = [];
  for (const [i, part] of book.share.parts.entries()) {
    if (need === 0) break;
    if (!ability.returnable(part)) continue;
    const take = Math.min(need, returnableOf(part));
    if (take > 0) {
      returns.push({ receiver: i, amount: take });
      need -= take;
    }
  }
  if (need > 0) return cannot('cannot be taken back from its receivers');
  return { ok: true, returns };
}

/** Reserves a refund decided with `decideRefund`, and the returns it needs. */
export function reserveRefund(book: RefundBook, refund: number, returns: PlannedReturn[]): void {
  book.inFlight += refund;
  for (const r of returns) book.share.parts[r.receiver]!.returning += r.amount;
}

/** A return the channel confirmed: the amount came back from the receiver. */
export function returnSucceeded(book: RefundBook, r: PlannedReturn): void {
  const part = book.share.parts[r.receiver]!;
  part.returning -= r.amount;
  part.returned += r.amount;
  if (sharedOf(book) > 0 && returnedOf(book) === sharedOf(book)) book.share.status = 'returned';
}

/**
 * A return the channel never answered: the part stays with the receiver as far as refunds go,
 * and is not asked for again until the channel says how the return ended (`unsettledReturnEnded`).
 */
export function returnUnanswered(book: RefundBook, r: PlannedReturn): void {
  const part = book.share.parts[r.receiver]!;
  part.returning -= r.amount;
  part.unsettled = (part.unsettled ?? 0) + r.amount;
}

/** The channel's late word on an unanswered return: came back (with the merchant), or not. */
export function unsettledReturnEnded(book: RefundBook, r: PlannedReturn, came: boolean): void {
  const part = book.share.parts[r.receiver]!;
  part.unsettled = (part.unsettled ?? 0) - r.amount;
  if (!came) return;
  part.returned += r.amount;
  if (sharedOf(book) > 0 && returnedOf(book) === sharedOf(book)) book.share.status = 'returned';
}

/**
 * A refund that will not be made after all (its row could not be recorded, a return or the
 * channel refused it): its amount and the returns it still waited for are free again. Returns
 * that succeeded stay with the merchant.
 */
export function releaseRefund(book: RefundBook, refund: number, pendingReturns: PlannedReturn[]): void {
  book.inFlight -= refund;
  for (const r of pendingReturns) book.share.parts[r.receiver]!.returning -= r.amount;
}

/**
 * A refund's result. `from` is where its amount was counted: in flight, or abnormal (an abnormal
 * refund paid out another way later). A failed refund's amount goes back to the merchant; parts
 * of the share returned for it stay with the merchant too. `withRefund`: the returns that
 * travelled on the refund itself (`with_refund` channels), which happened if the refund did.
 */
export function settleRefund(
  book: RefundBook,
  refund: number,
  from: 'in_flight' | 'abnormal',
  to: 'success' | 'failed' | 'abnormal',
  withRefund: PlannedReturn[] = [],
): void {
  if (from === 'in_flight') book.inFlight -= refund;
  else book.abnormal -= refund;
  if (to === 'success') book.succeeded += refund;
  else if (to === 'abnormal') book.abnormal += refund;
  for (const r of withRefund) {
    if (to === 'failed') book.share.parts[r.receiver]!.returning -= r.amount;
    else returnSucceeded(book, r);
  }
}

/**
 * The share when it is due (SPEC §3.7): at most what is still unrefunded (refunds succeeded,
 * abnormal or in flight count), split by weight; nothing at all when that is 0 (`cancelled`).
 */
export function shareWhenDue<R extends ShareReceiver & { weight: number }>(
  book: RefundBook,
  receivers: R[],
): { amount: number; parts: ReceiverPart[] } | 'cancelled' {
  const amount = Math.min(book.share.planned, book.amount - toBuyer(book));
  if (amount <= 0 || receivers.length === 0) return 'cancelled';
  return {
    amount,
    parts: splitByWeight(amount, receivers).map((r) => ({
      type: r.type,
      account: r.account,
      ...(r.name === undefined ? {} : { name: r.name }),
      shared: r.amount,
      returned: 0,
      returning: 0,
    })),
  };
}

/** The share is being made with these parts: they count as the receivers' from now on. */
export function startShare(book: RefundBook, parts: ReceiverPart[]): void {
  book.share.parts = parts;
  book.share.status = 'processing';
}

/** The channel's answer to the share: made, or not made (the merchant keeps it all). */
export function shareSettled(book: RefundBook, outcome: 'finished' | 'failed'): void {
  book.share.status = outcome;
  if (outcome === 'failed') book.share.parts = [];
}

export function shareCancelled(book: RefundBook): void {
  book.share.status = 'cancelled';
  book.share.parts = [];
}

/** Whether the share is due before its time: nothing is left that it could take. */
export function nothingLeftToShare(book: RefundBook): boolean {
  return book.share.status === 'pending' && book.inFlight === 0 && book.amount - toBuyer(book) <= 0;
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
