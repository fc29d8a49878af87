/**
 * How pending orders waited before the payment sweeper polled them (patches.orderPollsBySweeper),
 * kept only so that the runs which waited so replay the commands they recorded. New runs wait in
 * workflow.ts (one timer, for expiry).
 *
 * When they can be deleted: a run that waited in one of these loops replays through it for as
 * long as it is open, and an order stays open long after it stopped pending (closed: for the late
 * payment window; paid: until refunded in full, or until it continues as new, which starts a run
 * on today's code). Each loop goes once every open order run holds the marker that retired it
 * or the `order-baseline-2026-11` marker (which stands for it), with
 * the recorded histories that replay through it:
 * - `waitWhilePendingByTimers`: runs with neither `order-polls-as-activity` nor
 *   `order-polls-by-sweeper`; test/fixtures/histories/before-local-activities,
 *   before-handler-lock and before-polling-activities (their order-closed-at-expiry.json and
 *   order-paid-partly-refunded.json).
 * - `waitWhilePendingByActivity`: runs with `order-polls-as-activity` and without
 *   `order-polls-by-sweeper`; test/fixtures/histories/before-payment-sweeper (its
 *   order-closed-at-expiry.json, order-paid-by-polling.json and order-paid-partly-refunded.json).
 */
import { condition, log } from '@temporalio/workflow';
import { pollGap } from '../rules';
import { pollUnless } from '../../../platform/workflow/polling';
import { paymentPollActivity } from '../order-calls';
import type { OrderActor } from '../order-actor';

/**
 * Pending as recorded before polling became one activity: a timer and a query per gap.
 *
 * `pollIndex` moves outside the lock, as recorded: it is this loop's own cursor (no handler reads
 * or writes it), and taking the lock for it would make a poll wait for a close a merchant asked
 * for (the close holds the lock across its channel call), moving the query after the close's
 * activity in the histories these runs recorded.
 */
export async function waitWhilePendingByTimers(actor: OrderActor): Promise<void> {
  const { state, input, payments } = actor;
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
 * Pending as recorded before the payment sweeper: one polling activity follows the backoff until
 * expiry (platform/polling.ts), so an order that waits costs a workflow task only when something
 * happens: a callback or a close (either cancels the poll), a payment the poll found, or expiry.
 */
export async function waitWhilePendingByActivity(actor: OrderActor): Promise<void> {
  const { state, input, payments } = actor;
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
      const awaitPayment = paymentPollActivity(state.expireAtMs, pollGap(input.timings.pollGapsMs, Infinity));
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
