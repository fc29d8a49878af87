// Longer than 400 lines: a refund's decision, its making and its settlement share the in-flight map.
/**
 * The order actor's refunds (SPEC §3.5, §3.7): decided against the refund book under the lock,
 * made outside it, followed by their own workflows, and settled by what those report.
 */
import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import type { ErrorCode } from '../../platform/errors';
import { appFailure, failureOf, ownEntry, refundRefusal, setOwnEntry, statusAfterRefunds } from './rules';
import {
  decideRefund as decideInBook,
  refundedOf,
  releaseRefund,
  reserveRefund,
  returnedOf,
  returnSucceeded,
  returnUnanswered,
  settleRefund as settleInBook,
  type PlannedReturn,
} from './refund-book';
import { refundWorkflowId } from './messages';
import type { refundWorkflow } from '../refunds/workflow';
import type { RefundRequest, RefundResult, RefundSettledSignal } from './messages';
import { channelActivities, dbActivities, shareReturnActivity } from './order-calls';
import type { OrderActor } from './order-actor';

export class OrderRefunds {
  /** Refunds whose channel call is under way, by refund_no and by `m:` + merchant_refund_no. */
  private readonly inFlight = new Map<string, Promise<RefundResult>>();

  constructor(private readonly order: OrderActor) {}

  /**
   * A refund. Only the decision (and its reservation) holds the lock: refunds already reserved
   * go to the channel side by side, and a repeat of one under way waits for its answer instead
   * of refunding again.
   */
  async refund(req: RefundRequest): Promise<RefundResult> {
    const { order } = this;
    const decided = await order.exclusive(async () => {
      order.refuseIfEnded();
      if (order.state.phase === 'open') await order.payment.applyQueuedInLock();
      const d = this.decide(req);
      if ('existing' in d) return { outcome: d.existing };
      const outcome = this.perform(req, d.returns);
      this.setInFlight(req, outcome);
      return { outcome };
    });
    return decided.outcome;
  }

  private setInFlight(req: RefundRequest, outcome: Promise<RefundResult>): void {
    this.inFlight.set(req.refundNo, outcome);
    if (req.merchantRefundNo) this.inFlight.set(`m:${req.merchantRefundNo}`, outcome);
  }

  /**
   * The answer already given, or being made, to the same refund: the same request sent again
   * (the API retries a refused delivery) or another with the same merchant_refund_no.
   */
  private earlierAnswer(req: RefundRequest): Promise<RefundResult> | undefined {
    const state = this.order.state;
    if (state.phase !== 'open') throw appFailure('order_not_found', 'order not found');
    const known = ownEntry(state.refunds, req.refundNo);
    if (known) return Promise.resolve(known.result);
    const byMerchantNo = req.merchantRefundNo
      ? ownEntry(state.refundsByMerchantNo, req.merchantRefundNo)
      : undefined;
    if (byMerchantNo) return Promise.resolve(state.refunds[byMerchantNo]!.result);
    return (
      this.inFlight.get(req.refundNo) ??
      (req.merchantRefundNo ? this.inFlight.get(`m:${req.merchantRefundNo}`) : undefined)
    );
  }

  /**
   * Decides a refund against the order's book, at once and with no await (under the lock): the
   * answer already given to it, a refusal, or a reservation of its amount and of the parts of
   * the profit share that must come back from receivers first (SPEC §3.5, §3.7).
   */
  private decide(req: RefundRequest): { existing: Promise<RefundResult> } | { returns: PlannedReturn[] } {
    const state = this.order.state;
    const earlier = this.earlierAnswer(req);
    if (earlier) return { existing: earlier };
    const refusal = refundRefusal(state.status);
    if (refusal) throw appFailure(refusal.code, refusal.message);
    const { shareReturns, receivers } = state.request!;
    const d = decideInBook(state.book!, req.amount, {
      ...(shareReturns ? { returns: shareReturns } : {}),
      returnable: (r) =>
        receivers.some((x) => x.type === r.type && x.account === r.account && x.returnable === true),
    });
    if (!d.ok) throw appFailure(d.refusal.code, d.refusal.message);
    reserveRefund(state.book!, req.amount, d.returns);
    return { returns: d.returns };
  }

  /** A refund the channel may have: processing, its amount reserved, found by its numbers from now on. */
  private holdRefund(
    req: RefundRequest,
    channelRefundNo: string | null,
    withRefund: PlannedReturn[] = [],
  ): RefundResult {
    const state = this.order.state;
    const result: RefundResult = {
      refund_no: req.refundNo,
      trade_no: state.tradeNo,
      refund_amount: req.amount,
      status: 'processing',
      channel_refund_no: channelRefundNo,
    };
    state.refunds[req.refundNo] = {
      amount: req.amount,
      status: 'processing',
      result,
      ...(withRefund.length > 0 ? { withRefund } : {}),
    };
    if (req.merchantRefundNo) setOwnEntry(state.refundsByMerchantNo, req.merchantRefundNo, req.refundNo);
    return result;
  }

  /** The refund's own workflow follows it to a final state (callback or polling) and reports back. */
  private async followRefund(req: RefundRequest, how: { unanswered?: boolean }): Promise<void> {
    const { state, input } = this.order;
    await startChild<typeof refundWorkflow>('refundWorkflow', {
      workflowId: refundWorkflowId(req.refundNo),
      parentClosePolicy: ParentClosePolicy.ABANDON,
      args: [
        {
          appId: input.appId,
          tradeNo: state.tradeNo,
          refundNo: req.refundNo,
          channelCode: this.order.channelCode,
          amount: req.amount,
          orderWorkflowId: workflowInfo().workflowId,
          pollGapsMs: input.timings.refundPollGapsMs,
          pollForMs: input.timings.refundPollForMs,
          ...(how.unanswered ? { unanswered: true } : {}),
        },
      ],
    });
  }

  /**
   * Makes a refund decided against the book: its row (a refund the database refuses never
   * reaches the channel, and releases its reservation at once), then the parts of the share it
   * needs back (one receiver at a time, in order), then the refund at the channel (with the parts
   * that travel on it, where the channel takes them so), then its own workflow follows it.
   *
   * Holding a refund (`holdRefund`) after the channel answered is a write outside the lock: it
   * is synchronous (no step can be half-way through it) and touches only this refund's entries,
   * which no decision reads before it exists; taking the lock there would add a wait before the
   * refund's child workflow starts, which recorded histories do not have.
   */
  private async perform(req: RefundRequest, returns: PlannedReturn[]): Promise<RefundResult> {
    const { order } = this;
    const { state, input } = order;
    const { sharing } = order;
    const book = state.book!;
    try {
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
    } catch (err) {
      await order.exclusive(async () => releaseRefund(book, req.amount, returns));
      const f = failureOf(err, 'internal_system');
      throw appFailure(f.code, f.message);
    }
    /** The refund will not be made: its amount and the returns it still waited for are free. */
    const refuse = async (
      pending: PlannedReturn[],
      answer: { code: ErrorCode; message: string },
      reason: string,
    ): Promise<never> => {
      await order.exclusive(async () => releaseRefund(book, req.amount, pending));
      await order.recordOrLog('recordRefundSettled', () =>
        dbActivities.recordRefundSettled({
          refundNo: req.refundNo,
          status: 'failed',
          channelRefundNo: null,
          refundTime: null,
          failReason: reason,
        }),
      );
      throw appFailure(answer.code, answer.message);
    };

    const separate = state.request!.shareReturns === 'separate';
    if (separate) {
      for (const [k, r] of returns.entries()) {
        const returnNo = `${req.refundNo}-${k + 1}`;
        const receiver = sharing.receiverOf(r);
        let outcome:
          | { status: 'success'; channelReturnNo: string | null }
          | { status: 'failed' | 'processing'; reason: string };
        try {
          outcome = await shareReturnActivity(input.timings)({
            channelCode: this.order.channelCode,
            tradeNo: state.tradeNo,
            returnNo,
            receiver,
            amount: r.amount,
            refundNo: req.refundNo,
            reason: req.reason,
          });
        } catch (err) {
          // No answer for as long as the return is asked: the refund is not made, and the part
          // stays the receiver's, never asked for again, until the channel says how the return
          // ended (followed on the refund backoff).
          outcome = { status: 'processing', reason: failureOf(err, 'channel_timeout').message };
          await order.exclusive(async () => returnUnanswered(book, r));
          await sharing.followLater('return', returnNo, { ...r, refundNo: req.refundNo });
        }
        if (outcome.status === 'success') await order.exclusive(async () => returnSucceeded(book, r));
        await order.recordOrLog('recordShareStep', () =>
          dbActivities.recordShareStep({
            tradeNo: state.tradeNo,
            step: {
              stepNo: returnNo,
              kind: 'return',
              refundNo: req.refundNo,
              receivers: [{ type: receiver.type, account: receiver.account, amount: r.amount }],
              amount: r.amount,
              status: outcome.status,
              channelNo: outcome.status === 'success' ? outcome.channelReturnNo : null,
              failReason: outcome.status === 'success' ? null : outcome.reason,
            },
            order: sharing.totals(),
          }),
        );
        if (outcome.status !== 'success') {
          const why = `a part of the profit share could not be taken back: ${outcome.reason}`;
          // An unanswered part is no longer the refund's to release: it waits for the channel.
          const pending = returns.slice(outcome.status === 'processing' ? k + 1 : k);
          return refuse(pending, sharing.shareNotReturned(outcome.reason), why);
        }
      }
    }

    const withRefund = separate ? [] : returns;
    let st;
    try {
      st = await channelActivities.requestChannelRefund({
        channelCode: this.order.channelCode,
        tradeNo: state.tradeNo,
        refundNo: req.refundNo,
        amount: req.amount,
        totalAmount: state.request!.amount,
        reason: req.reason,
        callbackUrl: this.order.callbackUrl,
        ...(withRefund.length > 0
          ? { shareReturns: withRefund.map((r) => ({ ...sharing.receiverOf(r), amount: r.amount })) }
          : {}),
      });
    } catch (err) {
      const f = failureOf(err, 'channel_timeout');
      if (f.code === 'channel_timeout') {
        // No answer is not a refusal: the amount (and the parts on the refund) stay reserved
        // until the channel says how the refund ended.
        this.holdRefund(req, null, withRefund);
        await this.followRefund(req, { unanswered: true });
        throw appFailure(f.code, f.message);
      }
      return refuse(withRefund, withRefund.length > 0 ? sharing.shareNotReturned(f.message) : f, f.message);
    }
    const channelRefundNo = st.status === 'not_found' ? null : st.channelRefundNo;
    const result = this.holdRefund(req, channelRefundNo, withRefund);
    await order.recordOrLog('recordRefundChannelNo', () =>
      dbActivities.recordRefundChannelNo({ refundNo: req.refundNo, channelRefundNo }),
    );
    await this.followRefund(req, {});
    return result;
  }

  /**
   * A refund's result against the book: a success or an abnormal end counts its amount as
   * refunded, a failure frees it; parts of the share that travelled on it came back if it was
   * made. An abnormal refund paid out later changes no amount. Returns the order's new totals.
   */
  private settle(s: RefundSettledSignal) {
    const state = this.order.state;
    const book = state.book!;
    const refund = ownEntry(state.refunds, s.refundNo);
    if (!refund) return undefined;
    const from =
      refund.status === 'processing' ? 'in_flight' : refund.status === 'abnormal' ? 'abnormal' : undefined;
    if (!from || (from === 'abnormal' && s.status !== 'success')) return undefined;
    const withRefund = from === 'in_flight' ? (refund.withRefund ?? []) : [];
    settleInBook(book, refund.amount, from, s.status, withRefund);
    refund.status = s.status;
    refund.result = { ...refund.result, status: s.status };
    return {
      refundedAmount: refundedOf(book),
      status: statusAfterRefunds(state.request!.amount, refundedOf(book)),
      ...(withRefund.length > 0
        ? { sharing: { status: book.share.status, returnedAmount: returnedOf(book) } }
        : {}),
      withRefund,
    };
  }

  /**
   * Applies a settlement. The decision takes the lock for no longer than it takes to make it;
   * the read-model write follows outside it (the main loop writes totals one at a time, in
   * order), so refunds decided meanwhile never wait for the database.
   */
  async applySettlement(s: RefundSettledSignal): Promise<void> {
    const { order } = this;
    const { state, sharing } = order;
    const settled = await order.exclusive(async () => {
      const t = this.settle(s);
      if (t) order.setStatusInLock(t.status);
      return t;
    });
    if (!settled) return;
    const { withRefund, ...totals } = settled;
    await order.recordOrLog('recordOrderRefundTotals', () =>
      dbActivities.recordOrderRefundTotals({ tradeNo: state.tradeNo, ...totals }),
    );
    // Parts of the share that travelled on the refund: recorded as the refund ended.
    for (const [k, r] of withRefund.entries()) {
      const receiver = sharing.receiverOf(r);
      await order.recordOrLog('recordShareStep', () =>
        dbActivities.recordShareStep({
          tradeNo: state.tradeNo,
          step: {
            stepNo: `${s.refundNo}-${k + 1}`,
            kind: 'return',
            refundNo: s.refundNo,
            receivers: [{ type: receiver.type, account: receiver.account, amount: r.amount }],
            amount: r.amount,
            status: s.status === 'failed' ? 'failed' : 'success',
            failReason: s.status === 'failed' ? 'the refund it travelled on failed' : null,
          },
          order: sharing.totals(),
        }),
      );
    }
  }
}
