/**
 * Refunds, their results and the profit share as orders decided them before the refund book
 * (patches.orderRefundBook): each refund checked against the order's totals alone, and the share
 * made whatever was refunded. Kept only so that runs which recorded them replay the commands they
 * recorded; new runs never come here, and a paid run started under the lock adopts the book at
 * its next refund, result or share (patches.orderAdoptsBook).
 *
 * When it can be deleted: once no open order run lacks both the `order-refund-book` and the
 * `order-baseline-2026-11` markers (a baseline run took the book; a paid
 * order stays open until it is refunded in full or continues as new, which takes the book), and
 * with the recorded histories that replay through it: test/fixtures/histories/before-refund-book,
 * before-payload-encryption, before-publisher-attempts, before-payment-sweeper,
 * before-polling-activities (locked, `order-handler-lock` marker) and before-handler-lock,
 * before-local-activities (the gate: no lock marker), each `order-paid-partly-refunded.json`.
 *
 * Each step keeps the `await`s of the code those histories were recorded with: the functions
 * that return a lock's promise are not `async`, so that they add no turn of the event loop.
 */
import { patched } from '@temporalio/workflow';
import {
  appFailure,
  failureOf,
  ownEntry,
  refundRefusal,
  REFUND_EXCEEDS,
  statusAfterRefunds,
  type OrderStatus,
} from '../rules';
import { releaseRefund, splitByWeight } from '../refund-book';
import { patches, type RefundRequest, type RefundResult, type RefundSettledSignal } from '../messages';
import { backgroundChannelActivities, channelActivities, dbActivities } from '../order-calls';
import type { OrderActor } from '../order-actor';
import type { OrderRefunds } from '../order-actor-refunds';

export class RefundsBeforeBook {
  constructor(
    private readonly order: OrderActor,
    private readonly refunds: OrderRefunds,
  ) {}

  /** As recorded before the lock: the whole refund inside the gate. */
  refundInGate(req: RefundRequest): Promise<RefundResult> {
    return this.order.exclusive(async (): Promise<RefundResult> => {
      const d = this.decide(req);
      return 'existing' in d ? d.existing : this.perform(req);
    });
  }

  /**
   * Decides a refund at once, with no await: the answer already given to the same refund (or
   * the same merchant_refund_no), a refusal, or a reservation of its amount. Decisions are made
   * one at a time under the lock, so concurrent refunds can never reserve more than the order.
   */
  decide(req: RefundRequest): { existing: Promise<RefundResult> } | { reserved: true } {
    const state = this.order.state;
    const earlier = this.refunds.earlierAnswer(req);
    if (earlier) return { existing: earlier };
    const refusal = refundRefusal(state.status);
    if (refusal) throw appFailure(refusal.code, refusal.message);
    const amount = state.request!.amount;
    if (req.amount > amount - state.refundedAmount - state.inFlightAmount) {
      throw appFailure(REFUND_EXCEEDS.code, REFUND_EXCEEDS.message);
    }
    state.inFlightAmount += req.amount;
    return { reserved: true };
  }

  /**
   * Makes a reserved refund at the channel and hands it to its own workflow.
   *
   * In a run under the lock, what follows the channel's answer (releasing or holding the amount)
   * changes the state outside the lock, as it did when those runs were recorded; in a run before
   * the lock all of it runs inside the gate. It stays so: each change is synchronous, so no
   * locked step sees it half made, and only histories recorded before patches.orderAdoptsBook
   * come here (a paid run under the lock adopts the book at its next refund). Taking the lock
   * there would make the refund wait for a share in progress (shareProfitNow holds the lock
   * across its activities) and move its commands after the share's.
   */
  async perform(req: RefundRequest): Promise<RefundResult> {
    const { state, input } = this.order;
    const amount = state.request!.amount;
    await dbActivities.recordRefundCreated({
      refundNo: req.refundNo,
      appId: input.appId,
      tradeNo: state.tradeNo,
      merchantRefundNo: req.merchantRefundNo,
      refundAmount: req.amount,
      reason: req.reason,
      notifyUrl: req.notifyUrl,
      createdAt: new Date().toISOString(),
    });
    let st;
    try {
      st = await channelActivities.requestChannelRefund({
        channelCode: input.channelCode,
        tradeNo: state.tradeNo,
        refundNo: req.refundNo,
        amount: req.amount,
        totalAmount: amount,
        reason: req.reason,
        callbackUrl: input.callbackUrl,
      });
    } catch (err) {
      const f = failureOf(err, 'channel_timeout');
      if (f.code === 'channel_timeout' && patched(patches.refundUnansweredStaysInFlight)) {
        // No answer is not a refusal: the channel may have accepted the refund before it was
        // cut off. The client hears channel_timeout (SPEC §3.5); the amount stays reserved, and
        // the refund's workflow asks the channel until it says how the refund stands.
        this.refunds.holdRefund(req, null);
        await this.refunds.followRefund(req, { unanswered: true });
        throw appFailure(f.code, f.message);
      }
      // Refused: the refund failed and its amount is free again (in the book too, when the
      // order adopted one while this refund was at the channel).
      state.inFlightAmount -= req.amount;
      if (state.book) releaseRefund(state.book, req.amount, []);
      await dbActivities.recordRefundSettled({
        refundNo: req.refundNo,
        status: 'failed',
        channelRefundNo: null,
        refundTime: null,
        failReason: f.message,
      });
      throw appFailure(f.code, f.message);
    }
    const channelRefundNo = st.status === 'not_found' ? null : st.channelRefundNo;
    const result = this.refunds.holdRefund(req, channelRefundNo);
    await dbActivities.recordRefundChannelNo({ refundNo: req.refundNo, channelRefundNo });
    await this.refunds.followRefund(req, {});
    return result;
  }

  /**
   * A refund's final result: releases or counts its amount (an abnormal refund's money left
   * the order: counted). Returns the order's new totals.
   */
  private settle(s: RefundSettledSignal): { refundedAmount: number; status: OrderStatus } | undefined {
    const state = this.order.state;
    const refund = ownEntry(state.refunds, s.refundNo);
    if (!refund || refund.status !== 'processing') return undefined;
    refund.status = s.status;
    refund.result = { ...refund.result, status: s.status };
    state.inFlightAmount -= refund.amount;
    if (s.status === 'failed') return undefined;
    state.refundedAmount += refund.amount;
    return {
      refundedAmount: state.refundedAmount,
      status: statusAfterRefunds(state.request!.amount, state.refundedAmount),
    };
  }

  /** Under the lock: the result applied, the status set; the caller writes the totals after. */
  settleUnderLock(
    s: RefundSettledSignal,
  ): Promise<{ refundedAmount: number; status: OrderStatus } | undefined> {
    const order = this.order;
    return order.exclusive(async () => {
      const t = this.settle(s);
      if (t) order.setStatus(t.status);
      return t;
    });
  }

  /** As recorded before the lock: the write inside the gate, the status after it. */
  settleInGate(s: RefundSettledSignal): Promise<void> {
    const order = this.order;
    return order.exclusive(async () => {
      const totals = this.settle(s);
      if (!totals) return;
      await dbActivities.recordOrderRefundTotals({ tradeNo: order.state.tradeNo, ...totals });
      order.setStatus(totals.status);
    });
  }

  /** The share when it is due, all of it, whatever was refunded (under the lock). */
  shareProfitUnderLock(): Promise<void> {
    return this.order.exclusive(() => this.shareProfitNow());
  }

  private async shareProfitNow(): Promise<void> {
    const { state, input } = this.order;
    state.profitShareAtMs = null;
    const req = state.request!;
    await dbActivities.recordProfitSharing({ tradeNo: state.tradeNo, status: 'processing' });
    let outcome: 'finished' | 'failed';
    try {
      outcome = await backgroundChannelActivities.shareProfit({
        channelCode: input.channelCode,
        tradeNo: state.tradeNo,
        receivers: splitByWeight(req.profitSharingAmount, req.receivers).map((r) => ({
          type: r.type,
          account: r.account,
          name: r.name,
          amount: r.amount,
        })),
      });
    } catch {
      outcome = 'failed';
    }
    await dbActivities.recordProfitSharing({ tradeNo: state.tradeNo, status: outcome });
  }
}
