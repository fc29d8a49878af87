/**
 * The order actor's payment (SPEC §3.2, §3.4): a payment the channel reported, applied once;
 * closing, by a merchant or at expiry, unless the channel says the buyer paid. `apply`,
 * `applyAnswer` and `closeAtExpiry` take the lock; the others run inside a step that holds it.
 */
import { log } from '@temporalio/workflow';
import type { PaymentState } from '../../channels/ports';
import { isPaidStatus } from './rules';
import { patches, type OrderPatch } from './messages';
import { expiryActivities, type ExpiryActivities } from './order-calls';
import type { OrderActor } from './order-actor';

export class OrderPayment {
  constructor(private readonly order: OrderActor) {}

  /** A payment the channel reported (callback, sweeper or poll), applied under the lock. */
  apply(p: { channelTradeNo: string | null; paidAt: string | null }): Promise<void> {
    return this.order.exclusive(() => this.markPaid(p));
  }

  /** What a query of the channel said, applied under the lock. */
  applyAnswer(st: PaymentState): Promise<void> {
    return this.order.exclusive(() => this.applyChannelState(st));
  }

  private async markPaid(paid: { channelTradeNo: string | null; paidAt: string | null }): Promise<void> {
    const { state, input } = this.order;
    if (isPaidStatus(state.status)) return; // a duplicate result changes nothing
    const wasClosed = state.status === 'closed';
    // The payment is a fact whatever the database says: a write it refuses for good is logged for
    // an operator and the order goes on paid (the workflow's state is the truth of its money).
    await this.order.recordOrLog('recordOrderPaid', () =>
      this.order.paymentCalls.recordOrderPaid({
        tradeNo: state.tradeNo,
        channelTradeNo: paid.channelTradeNo,
        payTime: paid.paidAt ?? new Date().toISOString(),
      }),
    );
    this.order.setStatus('paid');
    if (wasClosed)
      log.warn('payment reported after close; flagged for refund review', { trade_no: state.tradeNo });
    if (state.request && state.request.profitSharingAmount > 0) {
      state.profitShareAtMs = Date.now() + input.timings.profitShareDelayMs;
    }
    if (!state.paidNotified) {
      await this.order.recordOrLog('notifyOrderEvent', () =>
        this.order.paymentCalls.notifyOrderEvent({ tradeNo: state.tradeNo, type: 'payment.succeeded' }),
      );
      state.paidNotified = true;
    }
  }

  async markClosed(via: ExpiryActivities = expiryActivities.regular): Promise<void> {
    const state = this.order.state;
    if (state.status !== 'pending') return;
    await this.order.recordOrLog('recordOrderClosed', () =>
      via.recordOrderClosed({ tradeNo: state.tradeNo, closedAt: new Date().toISOString() }),
    );
    this.order.setStatus('closed');
    await this.order.recordOrLog('notifyOrderEvent', () =>
      via.notifyOrderEvent({ tradeNo: state.tradeNo, type: 'payment.closed' }),
    );
  }

  async applyChannelState(st: PaymentState): Promise<void> {
    if (st.status === 'paid')
      await this.markPaid({ channelTradeNo: st.channelTradeNo, paidAt: new Date(st.paidAt).toISOString() });
  }

  /**
   * Under the lock, before a handler decides: a payment that arrived with its request (in the
   * same workflow task) is applied first, so that the order a handler sees is the one the read
   * model may already show. Handlers run before the main loop wakes to take payments from the
   * queue, and the main loop finds the queue empty afterwards. `patch`: the marker the handler's
   * runs record it under.
   */
  async applyQueued(patch: OrderPatch = patches.orderHandlersApplyQueuedPayments): Promise<void> {
    const { state, payments } = this.order;
    if (!this.hasQueued()) return;
    if (!this.order.has(patch)) return;
    while (payments.length > 0 && !isPaidStatus(state.status)) {
      const p = payments.shift()!;
      if (p.status === 'paid') await this.markPaid(p);
    }
  }

  /** Whether a payment waits in the queue of an order not paid yet: what `applyQueued` applies. */
  hasQueued(): boolean {
    const { state, payments } = this.order;
    return !isPaidStatus(state.status) && payments.some((p) => p.status === 'paid');
  }

  /**
   * Expiry: close at the channel, unless the channel says the buyer paid. False when the channel
   * could not be asked: the order stays pending (callbacks still welcome) and the close is tried
   * again after a wait, since the channel is the one that knows whether the buyer paid.
   */
  closeAtExpiry(
    unansweredCloses: number,
    via: ExpiryActivities = expiryActivities.regular,
  ): Promise<boolean> {
    const { state, input } = this.order;
    return this.order.exclusive(async () => {
      if (state.status !== 'pending') return true;
      let st: PaymentState | undefined;
      try {
        st = await via.closeChannelPayment({
          channelCode: input.channelCode,
          tradeNo: state.tradeNo,
        });
      } catch (err) {
        if (this.order.has(patches.orderExpiryWaitsForChannel)) {
          log.warn('closing at the channel failed; will try again', {
            trade_no: state.tradeNo,
            attempt: unansweredCloses + 1,
            error: String(err),
          });
          return false;
        }
        log.warn('closing at the channel failed; closing locally', {
          trade_no: state.tradeNo,
          error: String(err),
        });
      }
      if (st?.status === 'paid') await this.applyChannelState(st);
      else await this.markClosed(via);
      return true;
    });
  }
}
