/**
 * The order workflow (SPEC §3, §7): it wires the order's messages to its actor (actor.ts, which
 * owns the state, takes the lock and decides) and runs the order's phases: created, pending,
 * closed or paid, until it ends or continues as new.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  patched,
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
import { pollUnless } from '../../platform/workflow/polling';
import { expiryActivities, paymentPollActivity } from './order-calls';
import { OrderActor, type OrderState } from './actor';

export type { OrderState, ShareFollow } from './actor';

export async function orderWorkflow(input: OrderInput, carried?: OrderState): Promise<string> {
  const actor = new OrderActor(input, carried);
  const { state, payments, settlements, lock } = actor;

  setHandler(createOrderUpdate, (req) => actor.create(req));
  setHandler(closeOrderUpdate, () => actor.close());
  setHandler(refundOrderUpdate, (req) => actor.refund(req));
  setHandler(paymentSignal, (s) => actor.receivePayment(s));
  setHandler(refundSettledSignal, (s) => actor.receiveSettlement(s));

  // ---- Creation: the first update creates the order; a failed create ends this run. ----
  if (state.phase === 'new') {
    await condition(() => state.phase !== 'new', '5 minutes');
    // (The update handler changes the phase while this waits; TypeScript cannot see that.)
    if ((state.phase as OrderState['phase']) !== 'open') {
      await condition(allHandlersFinished);
      return 'create_failed';
    }
  }

  /** Pending as recorded before polling became one activity: a timer and a query per gap. */
  async function waitWhilePendingByTimers(): Promise<void> {
    // Closes at expiry the channel did not answer; each waits as the poll of that index would.
    let unansweredCloses = 0;
    while (state.status === 'pending') {
      const untilExpiry = Math.max(0, state.expireAtMs - Date.now());
      const wait =
        unansweredCloses > 0
          ? pollGap(input.timings.pollGapsMs, unansweredCloses - 1)
          : Math.min(pollGap(input.timings.pollGapsMs, state.pollIndex), untilExpiry);
      await condition(() => payments.length > 0 || state.status !== 'pending', wait);
      if (state.status !== 'pending') break;
      if (payments.length > 0) {
        const p = payments.shift()!;
        if (p.status === 'paid') await actor.payment.apply(p);
        continue;
      }
      if (Date.now() >= state.expireAtMs) {
        if (!(await actor.payment.closeAtExpiry(unansweredCloses))) {
          unansweredCloses += 1;
          continue;
        }
        break;
      }
      state.pollIndex += 1;
      try {
        const st = await actor.paymentCalls.queryChannelPayment({
          channelCode: input.channelCode,
          tradeNo: state.tradeNo,
        });
        if (st.status === 'paid') await actor.payment.applyAnswer(st);
      } catch (err) {
        log.warn('payment query failed; will poll again', { trade_no: state.tradeNo, error: String(err) });
      }
    }
  }

  /**
   * Pending: one polling activity follows the backoff until expiry (platform/polling.ts), so an
   * order that waits costs a workflow task only when something happens: a callback or a close
   * (either cancels the poll), a payment the poll found, or expiry.
   */
  async function waitWhilePendingByActivity(): Promise<void> {
    let unansweredCloses = 0;
    let due = false;
    while (state.status === 'pending') {
      if (payments.length > 0) {
        const p = payments.shift()!;
        if (p.status === 'paid') await actor.payment.apply(p);
        continue;
      }
      if (unansweredCloses > 0) {
        const wait = pollGap(input.timings.pollGapsMs, unansweredCloses - 1);
        await condition(() => payments.length > 0 || state.status !== 'pending', wait);
        if (state.status !== 'pending' || payments.length > 0) continue;
      } else if (!due && Date.now() < state.expireAtMs) {
        const awaitPayment = paymentPollActivity(
          state.expireAtMs,
          pollGap(input.timings.pollGapsMs, Infinity),
        );
        const waited = await pollUnless(
          () =>
            awaitPayment({
              channelCode: input.channelCode,
              tradeNo: state.tradeNo,
              gapsMs: input.timings.pollGapsMs,
              firstGap: state.pollIndex,
              deadlineMs: state.expireAtMs,
              askAtDeadline: false,
            }),
          () => payments.length > 0 || state.status !== 'pending',
        );
        if ('done' in waited) {
          const outcome = waited.done;
          if ('answer' in outcome) await actor.payment.applyAnswer(outcome.answer);
          else due = true;
        } else if ('failed' in waited) {
          // Only a poll that outlived its deadline ends this way: expiry takes over.
          log.warn('payment polling ended without an answer', {
            trade_no: state.tradeNo,
            error: String(waited.failed),
          });
          due = true;
        }
        continue;
      }
      if (await actor.payment.closeAtExpiry(unansweredCloses)) break;
      unansweredCloses += 1;
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
  else if (patched(patches.orderPollsAsActivity)) await waitWhilePendingByActivity();
  else await waitWhilePendingByTimers();

  // ---- Closed: accept a late payment for a while, then end. ----
  if (state.status === 'closed') {
    const lateUntil = Date.now() + input.timings.latePaymentWindowMs;
    while (state.status === 'closed' && Date.now() < lateUntil) {
      // A handler that applied a queued payment (applyQueuedPayments) ends the wait too.
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
  for (;;) {
    // An order that adopted the book (a refund's handler, a settlement, its share) goes on as
    // a booked one; a run recorded before never has one here.
    if (state.book) return paidWithBook();
    const profitWait =
      state.profitShareAtMs === null ? undefined : Math.max(0, state.profitShareAtMs - Date.now());
    const woke = await condition(
      () =>
        settlements.length > 0 ||
        payments.length > 0 ||
        state.book !== undefined ||
        (workflowInfo().continueAsNewSuggested && !lock.isLocked()),
      profitWait ?? '365 days',
    );
    if (!woke && state.profitShareAtMs !== null) {
      // The share is due: with the book, at most what is unrefunded (paidWithBook makes it).
      if (actor.adoptBook()) continue;
      await actor.refunds.shareProfitBeforeBook();
      continue;
    }
    while (payments.length > 0) payments.shift(); // duplicates of the payment: nothing to do
    while (settlements.length > 0) {
      const s = settlements.shift()!;
      await actor.refunds.applySettlement(s);
    }
    if (state.status === 'refunded' && state.inFlightAmount === 0 && state.profitShareAtMs === null) {
      await condition(allHandlersFinished);
      return 'refunded';
    }
    if (workflowInfo().continueAsNewSuggested) {
      await condition(() => !lock.isLocked() && allHandlersFinished());
      if (payments.length === 0 && settlements.length === 0) {
        await continueAsNew<typeof orderWorkflow>(input, state);
      }
    }
  }

  /**
   * Paid, with the book: the share when it is due (or at once when refunds left nothing to
   * share), refunds' results, until the order is refunded in full with nothing in flight.
   */
  async function paidWithBook(): Promise<string> {
    const book = state.book!;
    const { sharing } = actor;
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
        return 'refunded';
      }
      if (workflowInfo().continueAsNewSuggested) {
        await condition(() => !lock.isLocked() && allHandlersFinished());
        if (payments.length === 0 && settlements.length === 0) {
          await continueAsNew<typeof orderWorkflow>(input, state);
        }
      }
      // Woken by the share when it is due, or by the next step of it the channel is asked about
      // (a refund's handler may add one meanwhile: the wait is then made again).
      const followAt = sharing.nextFollowAtMs();
      const wakeAt = [state.profitShareAtMs, followAt].filter((t): t is number => t != null);
      const wait = wakeAt.length === 0 ? undefined : Math.max(0, Math.min(...wakeAt) - Date.now());
      await condition(
        () =>
          settlements.length > 0 ||
          payments.length > 0 ||
          (state.profitShareAtMs !== null && nothingLeftToShare(book)) ||
          sharing.nextFollowAtMs() !== followAt ||
          (workflowInfo().continueAsNewSuggested && !lock.isLocked()),
        wait ?? '365 days',
      );
    }
  }
}
