/**
 * The order actor's payment (SPEC §3.2, §3.4): a payment the channel reported, applied once;
 * closing, by a merchant or at expiry, unless the channel says the buyer paid. `apply`,
 * `applyAnswer` and `closeAtExpiry` take the lock; the methods named `…InLock` must be called by
 * a step that holds it (they would wait for themselves if they took it).
 */
import { log } from '@temporalio/workflow';
import type { PaymentState } from '../../channels/ports';
import { isPaidStatus, type CloseReason } from './rules';
import { closeActivities, paymentActivities, type CloseRecording } from './order-calls';
import type { OrderActor } from './order-actor';

export class OrderPayment {
  constructor(private readonly order: OrderActor) {}

  /** A payment the channel reported (callback, sweeper or poll), applied under the lock. */
  apply(p: { channelTradeNo: string | null; paidAt: string | null }): Promise<void> {
    return this.order.exclusive(() => this.markPaidInLock(p));
  }

  /** What a query of the channel said, applied under the lock. */
  applyAnswer(st: PaymentState): Promise<void> {
    return this.order.exclusive(() => this.applyChannelStateInLock(st));
  }

  /** Records the payment, once, and tells the merchant. Call under the lock. */
  async markPaidInLock(paid: { channelTradeNo: string | null; paidAt: string | null }): Promise<void> {
    const { state, input } = this.order;
    if (isPaidStatus(state.status)) return; // a duplicate result changes nothing
    const wasClosed = state.status === 'closed';
    // The payment is a fact whatever the database says: a write it refuses for good is logged for
    // an operator and the order goes on paid (the workflow's state is the truth of its money).
    await this.order.recordOrLog('recordOrderPaid', () =>
      paymentActivities.recordOrderPaid({
        tradeNo: state.tradeNo,
        channelTradeNo: paid.channelTradeNo,
        payTime: paid.paidAt ?? new Date().toISOString(),
      }),
    );
    this.order.setStatusInLock('paid');
    if (wasClosed)
      log.warn('payment reported after close; flagged for refund review', { trade_no: state.tradeNo });
    if (state.request && state.request.profitSharingAmount > 0) {
      state.profitShareAtMs = Date.now() + input.timings.profitShareDelayMs;
    }
    if (!state.paidNotified) {
      await this.order.recordOrLog('notifyOrderEvent', () =>
        paymentActivities.notifyOrderEvent({ tradeNo: state.tradeNo, type: 'payment.succeeded' }),
      );
      state.paidNotified = true;
    }
  }

  /** Records the order closed and tells the merchant. Call under the lock. */
  async markClosedInLock(
    via: CloseRecording = closeActivities.merchant,
    closeReason?: CloseReason,
  ): Promise<void> {
    const state = this.order.state;
    if (state.status !== 'pending') return;
    await this.order.recordOrLog('recordOrderClosed', () =>
      via.recordOrderClosed({
        tradeNo: state.tradeNo,
        closedAt: new Date().toISOString(),
        ...(closeReason ? { closeReason } : {}),
      }),
    );
    this.order.setStatusInLock('closed');
    await this.order.recordOrLog('notifyOrderEvent', () =>
      via.notifyOrderEvent({ tradeNo: state.tradeNo, type: 'payment.closed' }),
    );
  }

  /** What the channel said of the payment, applied. Call under the lock. */
  async applyChannelStateInLock(st: PaymentState): Promise<void> {
    if (st.status === 'paid')
      await this.markPaidInLock({
        channelTradeNo: st.channelTradeNo,
        paidAt: new Date(st.paidAt).toISOString(),
      });
  }

  /**
   * Under the lock, before a handler decides: a payment that arrived with its request (in the
   * same workflow task) is applied first, so that the order a handler sees is the one the read
   * model may already show. Handlers run before the main loop wakes to take payments from the
   * queue, and the main loop finds the queue empty afterwards. Call under the lock.
   */
  async applyQueuedInLock(): Promise<void> {
    const { state, payments } = this.order;
    if (!this.hasQueued()) return;
    while (payments.length > 0 && !isPaidStatus(state.status)) {
      const p = payments.shift()!;
      if (p.status === 'paid') await this.markPaidInLock(p);
    }
  }

  /** Whether a payment waits in the queue of an order not paid yet: what `applyQueuedInLock` applies. */
  hasQueued(): boolean {
    const { state, payments } = this.order;
    // A barcode payment being reversed: what the channel reported waits for the reverse's answer.
    if (this.order.barcode.isReversing()) return false;
    return !isPaidStatus(state.status) && payments.some((p) => p.status === 'paid');
  }

  /**
   * Expiry: close at the channel, unless the channel says the buyer paid. False when the channel
   * could not be asked: the order stays pending (callbacks still welcome) and the close is tried
   * again after a wait, since the channel is the one that knows whether the buyer paid.
   */
  closeAtExpiry(unansweredCloses: number): Promise<boolean> {
    const { state } = this.order;
    const via = closeActivities.expiry;
    return this.order.exclusive(async () => {
      if (state.status !== 'pending') return true;
      // A checkout order no buyer took to a channel (SPEC §15): nothing to close there.
      if (this.order.awaitsChannel) {
        await this.markClosedInLock(via);
        return true;
      }
      let st: PaymentState;
      try {
        st = await via.closeChannelPayment({
          channelCode: this.order.channelCode,
          tradeNo: state.tradeNo,
        });
      } catch (err) {
        log.warn('closing at the channel failed; will try again', {
          trade_no: state.tradeNo,
          attempt: unansweredCloses + 1,
          error: String(err),
        });
        return false;
      }
      if (st.status === 'paid') await this.applyChannelStateInLock(st);
      else await this.markClosedInLock(via);
      return true;
    });
  }
}
