/**
 * A paid order as runs started before the refund book (patches.orderRefundBook) waited: the share
 * made in full when due, refunds' results applied one by one, until refunded in full. A run under
 * the lock leaves it for the book's loop as soon as it adopts the book (patches.orderAdoptsBook);
 * a run started before the lock stays in it until it ends.
 *
 * When it can be deleted: with legacy/refunds-before-book.ts, once no open order run lacks both
 * the `order-refund-book` and the `order-baseline-2026-11` markers (a baseline run took the book), and with the recorded histories that replay through it
 * (test/fixtures/histories/before-*, their order-paid-partly-refunded.json and
 * order-paid-by-polling.json).
 */
import { allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { OrderActor } from '../order-actor';
import type { orderWorkflow } from '../workflow';

/** Runs the paid phase until it ends, or hands the order to `paidWithBook` once it has a book. */
export async function paidBeforeBook(
  actor: OrderActor,
  paidWithBook: () => Promise<string>,
): Promise<string> {
  const { state, input, payments, settlements, lock } = actor;
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
}
