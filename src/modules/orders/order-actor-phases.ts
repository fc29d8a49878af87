/**
 * The order actor's phases (SPEC §3, §7): how long the order waits in each, what wakes it, and
 * when its run ends, continues as new, or saves its state and ends idle. workflow.ts only calls
 * them in turn. Each step that changes the order goes through a method of the actor that takes
 * the lock; what these loops read between steps (the queues, the book, the share's times) is
 * read with no `await` in between, so no handler runs half-way through a read.
 */
import { allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { pollGap } from './rules';
import { nothingLeftToShare } from './refund-book';
import type { OrderActor, OrderState } from './order-actor';
import type { orderWorkflow } from './workflow';

/** How a run ends: the workflow's result. */
export type OrderRunEnd = 'ended' | 'create_failed' | 'closed' | 'refunded' | 'idle';

export class OrderPhases {
  constructor(private readonly order: OrderActor) {}

  /**
   * A reopening run (SPEC §7): waits for the state its last run saved. True when there was none
   * to go on with (its requests are refused; the run ends once they are answered).
   */
  async restoredNothing(): Promise<boolean> {
    const { order } = this;
    if (!order.restored) return false;
    await order.restored;
    if (!order.hasEnded) return false;
    await condition(allHandlersFinished);
    return true;
  }

  /** Creation: the first update creates the order. False when the create failed (or never came). */
  async created(): Promise<boolean> {
    const { state } = this.order;
    if (state.phase !== 'new') return true;
    await condition(() => state.phase !== 'new', '5 minutes');
    // (The update handler changes the phase while this waits; TypeScript cannot see that.)
    if ((state.phase as OrderState['phase']) === 'open') return true;
    await condition(allHandlersFinished);
    return false;
  }

  /**
   * Pending, polled by the payment sweeper (sweeper.ts): one timer, for expiry. A payment (from
   * a callback or the sweeper) or a close wakes the run; nothing else does. At expiry the order
   * is closed at the channel, asked again after a wait when the channel does not answer.
   */
  async pending(): Promise<void> {
    const { order } = this;
    const { state, input, payments } = order;
    // A barcode order is decided within its wait, and reversed if not (SPEC §14).
    if (state.barcode) return order.barcode.follow();
    let unansweredCloses = 0;
    while (state.status === 'pending') {
      if (payments.length > 0) {
        const p = payments.shift()!;
        if (p.status === 'paid') await order.payment.apply(p);
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
      if (await order.payment.closeAtExpiry(unansweredCloses)) break;
      unansweredCloses += 1;
    }
  }

  /**
   * Closed: a late payment is still taken (and flagged for review) for the late-payment window.
   * True when the order ended closed; false when a late payment made it paid.
   */
  async closed(): Promise<boolean> {
    const { order } = this;
    const { state, input, payments } = order;
    // A barcode order closes refused or reversed, and a checkout order no buyer took to a
    // channel was never at one: no channel holds anything for a late payment.
    if (state.barcode || order.awaitsChannel) {
      await condition(allHandlersFinished);
      return true;
    }
    const lateUntil = Date.now() + input.timings.latePaymentWindowMs;
    while (state.status === 'closed' && Date.now() < lateUntil) {
      // A handler that applied a queued payment (payment.applyQueuedInLock) ends the wait too.
      await condition(
        () => payments.length > 0 || state.status !== 'closed',
        Math.max(1, lateUntil - Date.now()),
      );
      const p = payments.shift();
      if (p?.status === 'paid') await order.payment.apply(p);
    }
    if (state.status !== 'closed') return false;
    await condition(allHandlersFinished);
    return true;
  }

  /**
   * Paid: the share when it is due (or at once when refunds left nothing to share), the steps of
   * it the channel did not answer, refunds' results, until the order is refunded in full with
   * nothing in flight. With nothing left to wait for, its state is saved and the run ends when
   * nothing reaches it for the idle period (SPEC §7); it continues as new when its history is
   * long or an operator asks it to move on (moveOnSignal).
   */
  async paid(): Promise<OrderRunEnd> {
    const { order } = this;
    const { payments, settlements, sharing } = order;
    const { idleEndMs } = order.input.timings;
    let saveRefused = false;
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
      while (settlements.length > 0) await order.refunds.applySettlement(settlements.shift()!);
      if (this.isDone()) {
        await condition(allHandlersFinished);
        // Saved for a request that reopens it (a repeat of a refund, one over the amount); one
        // that reached the run while it saved is taken first.
        // (A state the database refuses for good is left stale: a run reopening it refuses.)
        const saved = !order.hasUnsavedChanges() || (await order.saveState());
        if (!saved || this.quietSinceSaved()) return 'refunded';
        continue;
      }
      if (this.shouldContinueAsNew()) await this.continueAsNewWhenQuiet();
      const followAt = sharing.nextFollowAtMs();
      const idle = !saveRefused && this.isIdle();
      if (idle && order.hasUnsavedChanges()) {
        saveRefused = !(await order.saveState());
        continue;
      }
      const wake = () => this.isWoken(followAt) || (!saveRefused && this.isIdle()) !== idle;
      const timeout = idle ? idleEndMs : this.untilNextStep(followAt);
      // With no time to wake at (a refund in flight), only a signal or a request wakes the run.
      const woken = timeout === undefined ? (await condition(wake), true) : await condition(wake, timeout);
      // A request that reached the run as the period ended is taken: the run goes on.
      if (idle && !woken && this.quietSinceSaved()) return 'idle';
    }
  }

  /** Refunded in full, with no refund, share or step of it in flight: the run may end. */
  private isDone(): boolean {
    const { state, sharing } = this.order;
    const book = state.book!;
    return (
      state.status === 'refunded' &&
      book.inFlight === 0 &&
      state.profitShareAtMs === null &&
      book.share.status !== 'processing' &&
      !sharing.isFollowing()
    );
  }

  /**
   * Nothing left to wait for (shared, no refund in flight, nothing queued): the state is saved,
   * and the run ends when nothing reaches it for the idle period (SPEC §7).
   */
  private isIdle(): boolean {
    const { state, payments, settlements, sharing } = this.order;
    const book = state.book!;
    return (
      state.profitShareAtMs === null &&
      sharing.nextFollowAtMs() == null &&
      book.inFlight === 0 &&
      book.share.status !== 'processing' &&
      !sharing.isFollowing() &&
      payments.length === 0 &&
      settlements.length === 0
    );
  }

  /**
   * What wakes the paid phase: a settlement or payment queued, the share due at once (refunds
   * left nothing to share), a step of it added or asked about (`followAt` is when the next was
   * due as the wait began), or a long history or an operator's move-on once the lock is free.
   */
  private isWoken(followAt: number | undefined): boolean {
    const { state, payments, settlements, sharing, lock } = this.order;
    return (
      settlements.length > 0 ||
      payments.length > 0 ||
      (state.profitShareAtMs !== null && nothingLeftToShare(state.book!)) ||
      sharing.nextFollowAtMs() !== followAt ||
      (this.shouldContinueAsNew() && !lock.isLocked())
    );
  }

  /** Its history is long, or an operator asked the run to move on to the code deployed now. */
  private shouldContinueAsNew(): boolean {
    return workflowInfo().continueAsNewSuggested || this.order.moveOnAsked;
  }

  /**
   * How long the paid phase waits with something still to come: until the share is due or the
   * next step of it is asked about, or, with neither, until a refund's own workflow reports
   * (a signal wakes the run; the refund workflow's polling window bounds it).
   */
  private untilNextStep(followAt: number | undefined): number | undefined {
    const { state } = this.order;
    const wakeAt = [state.profitShareAtMs, followAt].filter((t): t is number => t != null);
    return wakeAt.length === 0 ? undefined : Math.max(0, Math.min(...wakeAt) - Date.now());
  }

  /** Nothing reached the run (a request, a signal, a step) since its state was saved. */
  private quietSinceSaved(): boolean {
    const { order } = this;
    return (
      !order.hasUnsavedChanges() &&
      order.payments.length === 0 &&
      order.settlements.length === 0 &&
      allHandlersFinished() &&
      !order.lock.isLocked()
    );
  }

  /** Continues as new, carrying the state, once no handler runs and nothing is queued. */
  private async continueAsNewWhenQuiet(): Promise<void> {
    const { order } = this;
    await condition(() => !order.lock.isLocked() && allHandlersFinished());
    if (order.payments.length === 0 && order.settlements.length === 0) {
      // The next run carries the state: it is not a run that reopens the order.
      await continueAsNew<typeof orderWorkflow>({ ...order.input, resume: undefined }, order.state);
    }
  }
}
