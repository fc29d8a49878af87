/**
 * The order workflow (SPEC §3, §7): it wires the order's messages to its actor (order-actor.ts, which
 * owns the state, takes the lock and decides) and runs the order's phases: created, pending,
 * closed or paid, until it ends or continues as new.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { pollGap } from './rules';
import { nothingLeftToShare } from './refund-book';
import {
  closeOrderUpdate,
  patches,
  createOrderUpdate,
  paymentSignal,
  refundOrderUpdate,
  refundSettledSignal,
  type OrderInput,
} from './messages';
import { expiryActivities } from './order-calls';
import { OrderActor, type OrderState } from './order-actor';
import { waitWhilePendingByActivity, waitWhilePendingByTimers } from './legacy/pending-loops';
import { paidBeforeBook } from './legacy/paid-before-book';

export type { OrderState, ShareFollow } from './order-actor';

export async function orderWorkflow(input: OrderInput, carried?: OrderState): Promise<string> {
  const actor = new OrderActor(input, carried);
  const { state, payments, settlements, lock } = actor;

  setHandler(createOrderUpdate, (req) => actor.create(req));
  setHandler(closeOrderUpdate, () => actor.close());
  setHandler(refundOrderUpdate, (req) => actor.refund(req));
  setHandler(paymentSignal, (s) => actor.receivePayment(s));
  setHandler(refundSettledSignal, (s) => actor.receiveSettlement(s));

  // ---- Reopened (SPEC §7): the state its last run saved, or, with none, its requests refused. ----
  if (actor.restored) {
    await actor.restored;
    if (actor.hasEnded) {
      await condition(allHandlersFinished);
      return 'ended';
    }
  }

  // ---- Creation: the first update creates the order; a failed create ends this run. ----
  if (state.phase === 'new') {
    await condition(() => state.phase !== 'new', '5 minutes');
    // (The update handler changes the phase while this waits; TypeScript cannot see that.)
    if ((state.phase as OrderState['phase']) !== 'open') {
      await condition(allHandlersFinished);
      return 'create_failed';
    }
  }

  /**
   * Pending, polled by the payment sweeper: one timer, for expiry. A payment (from a callback or
   * the sweeper) or a close wakes the workflow; nothing else does.
   */
  async function waitWhilePendingSwept(): Promise<void> {
    let unansweredCloses = 0;
    while (state.status === 'pending') {
      if (payments.length > 0) {
        const p = payments.shift()!;
        if (p.status === 'paid') await actor.payment.apply(p);
        continue;
      }
      const woken = () => payments.length > 0 || state.status !== 'pending';
      if (unansweredCloses > 0) {
        // The channel could not be asked to close: ask again after a wait.
        await condition(woken, pollGap(input.timings.pollGapsMs, unansweredCloses - 1));
        if (woken()) continue;
      } else if (state.expireAtMs > Date.now()) {
        await condition(woken, state.expireAtMs - Date.now());
        continue;
      }
      if (await actor.payment.closeAtExpiry(unansweredCloses, expiryActivities.local)) break;
      unansweredCloses += 1;
    }
  }

  // ---- Pending: callbacks, polling on a backoff, and expiry. ----
  if (actor.swept) await waitWhilePendingSwept();
  else if (actor.has(patches.orderPollsAsActivity)) await waitWhilePendingByActivity(actor);
  else await waitWhilePendingByTimers(actor);

  // ---- Closed: accept a late payment for a while, then end. ----
  if (state.status === 'closed') {
    const lateUntil = Date.now() + input.timings.latePaymentWindowMs;
    while (state.status === 'closed' && Date.now() < lateUntil) {
      // A handler that applied a queued payment (payment.applyQueued) ends the wait too.
      await condition(
        () => payments.length > 0 || state.status !== 'closed',
        Math.max(1, lateUntil - Date.now()),
      );
      const p = payments.shift();
      if (p?.status === 'paid') await actor.payment.apply(p);
    }
    if (state.status === 'closed') {
      await condition(allHandlersFinished);
      return 'closed';
    }
  }

  // ---- Paid: profit sharing, refunds, until fully refunded. ----
  if (actor.booked) return paidWithBook();
  return paidBeforeBook(actor, paidWithBook);

  /**
   * Paid, with the book: the share when it is due (or at once when refunds left nothing to
   * share), refunds' results, until the order is refunded in full with nothing in flight.
   */
  async function paidWithBook(): Promise<string> {
    const book = state.book!;
    const { sharing } = actor;
    // Asked where the run enters this phase: runs that got here before wait as they did.
    const idleEndMs =
      input.timings.idleEndMs !== undefined && actor.has(patches.orderEndsWhenIdle)
        ? input.timings.idleEndMs
        : undefined;
    let saveRefused = false;
    /** Nothing reached the run (a request, a signal, a step) since its state was saved. */
    const quietSinceSaved = () =>
      !actor.hasUnsavedChanges() &&
      payments.length === 0 &&
      settlements.length === 0 &&
      allHandlersFinished() &&
      !lock.isLocked();
    for (;;) {
      if (sharing.isDue()) {
        await sharing.shareWhenDue();
        continue;
      }
      if (sharing.isFollowDue()) {
        await sharing.followSteps();
        continue;
      }
      while (payments.length > 0) payments.shift(); // duplicates of the payment: nothing to do
      while (settlements.length > 0) {
        const s = settlements.shift()!;
        await actor.refunds.applySettlement(s);
      }
      if (
        state.status === 'refunded' &&
        book.inFlight === 0 &&
        state.profitShareAtMs === null &&
        book.share.status !== 'processing' &&
        !sharing.isFollowing()
      ) {
        await condition(allHandlersFinished);
        if (idleEndMs === undefined) return 'refunded';
        // Saved for a request that reopens it (a repeat of a refund, one over the amount); one
        // that reached the run while it saved is taken first.
        // (A state the database refuses for good is left stale: a run reopening it refuses.)
        const saved = !actor.hasUnsavedChanges() || (await actor.saveState());
        if (!saved || quietSinceSaved()) return 'refunded';
        continue;
      }
      if (workflowInfo().continueAsNewSuggested) {
        await condition(() => !lock.isLocked() && allHandlersFinished());
        if (payments.length === 0 && settlements.length === 0) {
          // The next run carries the state: it is not a run that reopens the order.
          await continueAsNew<typeof orderWorkflow>({ ...input, resume: undefined }, state);
        }
      }
      // Woken by the share when it is due, or by the next step of it the channel is asked about
      // (a refund's handler may add one meanwhile: the wait is then made again).
      const followAt = sharing.nextFollowAtMs();
      const wakeAt = [state.profitShareAtMs, followAt].filter((t): t is number => t != null);
      const wait = wakeAt.length === 0 ? undefined : Math.max(0, Math.min(...wakeAt) - Date.now());
      // Nothing left to wait for (shared, no refund in flight): the state is saved, and the run
      // ends when nothing reaches it for the idle period (SPEC §7).
      const idleNow = () =>
        idleEndMs !== undefined &&
        !saveRefused &&
        state.profitShareAtMs === null &&
        sharing.nextFollowAtMs() == null &&
        book.inFlight === 0 &&
        book.share.status !== 'processing' &&
        !sharing.isFollowing() &&
        payments.length === 0 &&
        settlements.length === 0;
      const idle = idleNow();
      if (idle && actor.hasUnsavedChanges()) {
        saveRefused = !(await actor.saveState());
        continue;
      }
      const woken = await condition(
        () =>
          settlements.length > 0 ||
          payments.length > 0 ||
          (state.profitShareAtMs !== null && nothingLeftToShare(book)) ||
          sharing.nextFollowAtMs() !== followAt ||
          (workflowInfo().continueAsNewSuggested && !lock.isLocked()) ||
          // A refund that reserved its amount and then released it (refused) leaves the order
          // idle again; one that reserved while the run idled makes it busy.
          idleNow() !== idle,
        idle && idleEndMs !== undefined ? idleEndMs : (wait ?? '365 days'),
      );
      // A request that reached the run as the period ended is taken: the run goes on.
      if (idle && !woken && quietSinceSaved()) return 'idle';
    }
  }
}
