// Longer than 300 lines on purpose: the order's actor is one closure over its state (handlers,
// main loop, the steps they share), so that no step can reach the state without the lock. Its
// pure rules live in rules.ts, shared with the orders service.
import {
  ActivityFailure,
  ApplicationFailure,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  patched,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../worker/activities';
import type { PaymentState } from '../../channels/ports';
import type { ErrorCode } from '../../platform/errors';
import {
  closeDecision,
  closeFailure,
  failureOf,
  isPaidStatus,
  pollGap,
  refundRefusal,
  REFUND_EXCEEDS,
  repeatCreateRefusal,
  ownEntry,
  setOwnEntry,
  statusAfterRefunds,
  type CreateIdentity,
  type OrderStatus,
} from './rules';
import {
  bookFromTotals,
  decideRefund as decideInBook,
  nothingLeftToShare,
  openBook,
  refundedOf,
  releaseRefund,
  reserveRefund,
  returnedOf,
  returnSucceeded,
  returnUnanswered,
  settleRefund as settleInBook,
  shareCancelled,
  sharedOf,
  shareSettled,
  shareWhenDue,
  splitByWeight,
  startShare,
  unsettledReturnEnded,
  type PlannedReturn,
  type ReceiverPart,
  type RefundBook,
} from './refund-book';
import { searchAttributes } from '../../platform/workflow/definitions';
import {
  closeOrderUpdate,
  patches,
  createOrderUpdate,
  paymentSignal,
  refundOrderUpdate,
  refundSettledSignal,
  type CreateOrderRequest,
  type OrderInput,
  type PaymentSignal,
  type RefundRequest,
  type RefundResult,
  type RefundSettledSignal,
} from './messages';
import { refundWorkflowId } from '../refunds/messages';
import { handlerLock, legacyConditionGate } from '../../platform/workflow/lock';
import { pollUnless } from '../../platform/workflow/polling';
import {
  backgroundChannelActivities,
  channelActivities,
  createAtChannelActivity,
  dbActivities,
  expiryActivities,
  paymentActivities,
  paymentPollActivity,
  shareReturnActivity,
  type ExpiryActivities,
} from './order-calls';
import type { refundWorkflow } from '../refunds/workflow';

const channel = channelActivities;
const channelBackground = backgroundChannelActivities;
const db = dbActivities;
const localCreate = { createOrderAtChannel: createAtChannelActivity };
const shareReturnFor = (timings: OrderInput['timings']) => ({
  returnProfitShare: shareReturnActivity(timings),
});
const hot = paymentActivities;
const remoteExpiry = expiryActivities.regular;
const localExpiry: ExpiryCalls = expiryActivities.local;
type ExpiryCalls = ExpiryActivities;

export interface OrderState {
  phase: 'new' | 'open' | 'failed';
  failure?: { code: ErrorCode; message: string };
  tradeNo: string;
  status: OrderStatus;
  identity?: CreateIdentity;
  request?: CreateOrderRequest;
  payCredential?: Record<string, unknown>;
  expireAtMs: number;
  pollIndex: number;
  paidNotified: boolean;
  profitShareAtMs: number | null;
  /** Totals of runs recorded before the refund book; the book keeps them in newer runs. */
  refundedAmount: number;
  inFlightAmount: number;
  /** The order's money: refunds, the profit share, returns (refund-book.ts); from the create on. */
  book?: RefundBook;
  refunds: Record<
    string,
    {
      amount: number;
      status: RefundResult['status'];
      result: RefundResult;
      /** Parts of the share that travel on this refund (channels whose returns do). */
      withRefund?: PlannedReturn[];
    }
  >;
  refundsByMerchantNo: Record<string, string>;
  /** Share steps the channel has not said the end of, asked again on the refund backoff. */
  follows?: ShareFollow[];
}

/**
 * A share, unfreeze or return whose outcome the channel did not give in time: the order asks
 * again on the refund backoff, for as long as a refund is followed, and settles its book when
 * the channel answers. Two answers in a row that it has no such step mean it never took it.
 */
export interface ShareFollow {
  kind: 'share' | 'unfreeze' | 'return';
  /** durapay's number of the step: the channel's key for it. */
  no: string;
  /** A return's part of the share, and the refund it was asked for. */
  part?: PlannedReturn & { refundNo: string };
  gap: number;
  nextAtMs: number;
  untilMs: number;
  notFound: number;
}

function appFailure(code: ErrorCode, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, code);
}

/**
 * The order's actor (SPEC §3, §7): its single writer. Create, payment results, close and
 * refunds pass through it one at a time; the database is written only from here, through
 * activities.
 */
export async function orderWorkflow(input: OrderInput, carried?: OrderState): Promise<string> {
  // Orders started before local activities replay with the activities they recorded.
  const fast = patched(patches.orderLocalActivities) ? hot.local : hot.regular;
  // Orders started before the payment sweeper poll the channel themselves.
  const swept = patched(patches.orderPollsBySweeper);
  const state: OrderState = carried ?? {
    phase: 'new',
    tradeNo: input.tradeNo,
    status: 'pending',
    expireAtMs: 0,
    pollIndex: 0,
    paidNotified: false,
    profitShareAtMs: null,
    refundedAmount: 0,
    inFlightAmount: 0,
    refunds: {},
    refundsByMerchantNo: {},
  };
  const payments: PaymentSignal[] = [];
  const settlements: RefundSettledSignal[] = [];

  // One handler or main-loop step at a time, in arrival order: concurrent creates, closes and
  // refunds are serialized here. Runs recorded before the lock replay with the gate they used.
  const lockedRuns = patched(patches.orderHandlerLock);
  const lock = lockedRuns ? handlerLock() : legacyConditionGate();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => lock.runExclusive(fn);
  // Refunds and the profit share decided against each other. Runs started before go on their
  // own way; a run that continues as new keeps what it knew in a book of its totals.
  const booked = patched(patches.orderRefundBook);
  const bookOfTotals = () =>
    bookFromTotals({
      amount: state.request!.amount,
      refunded: state.refundedAmount,
      inFlight: state.inFlightAmount,
      plannedShare: state.request!.profitSharingAmount,
      shareStillDue: state.profitShareAtMs !== null || !isPaidStatus(state.status),
      receivers: state.request!.receivers,
    });
  if (booked && state.phase === 'open' && !state.book) state.book = bookOfTotals();

  /**
   * Whether the order decides with the book: from its start, or (a paid order whose run began
   * before the book, under the lock) from the first refund, settlement or share that this code
   * runs for it, with the book its totals make (patches.orderAdoptsBook). Runs started before
   * the lock keep their own rules; histories recorded before replay without the book.
   */
  function adoptBook(): boolean {
    if (state.book) return true;
    if (!lockedRuns || state.phase !== 'open' || !isPaidStatus(state.status)) return false;
    if (!patched(patches.orderAdoptsBook)) return false;
    state.book = bookOfTotals();
    return true;
  }
  const createsRecordItself = patched(patches.orderCreateRecordsItself);

  function setStatus(status: OrderStatus): void {
    state.status = status;
    upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: status }]);
  }

  async function markPaid(paid: { channelTradeNo: string | null; paidAt: string | null }): Promise<void> {
    if (isPaidStatus(state.status)) return; // a duplicate result changes nothing
    const wasClosed = state.status === 'closed';
    // The payment is a fact whatever the database says: a write it refuses for good is logged for
    // an operator and the order goes on paid (the workflow's state is the truth of its money).
    await recordOrLog('recordOrderPaid', () =>
      fast.recordOrderPaid({
        tradeNo: state.tradeNo,
        channelTradeNo: paid.channelTradeNo,
        payTime: paid.paidAt ?? new Date().toISOString(),
      }),
    );
    setStatus('paid');
    if (wasClosed)
      log.warn('payment reported after close; flagged for refund review', { trade_no: state.tradeNo });
    if (state.request && state.request.profitSharingAmount > 0) {
      state.profitShareAtMs = Date.now() + input.timings.profitShareDelayMs;
    }
    if (!state.paidNotified) {
      await recordOrLog('notifyOrderEvent', () =>
        fast.notifyOrderEvent({ tradeNo: state.tradeNo, type: 'payment.succeeded' }),
      );
      state.paidNotified = true;
    }
  }

  async function markClosed(via: ExpiryCalls = remoteExpiry): Promise<void> {
    if (state.status !== 'pending') return;
    await recordOrLog('recordOrderClosed', () =>
      via.recordOrderClosed({ tradeNo: state.tradeNo, closedAt: new Date().toISOString() }),
    );
    setStatus('closed');
    await recordOrLog('notifyOrderEvent', () =>
      via.notifyOrderEvent({ tradeNo: state.tradeNo, type: 'payment.closed' }),
    );
  }

  async function applyChannelState(st: PaymentState): Promise<void> {
    if (st.status === 'paid')
      await markPaid({ channelTradeNo: st.channelTradeNo, paidAt: new Date(st.paidAt).toISOString() });
  }

  /**
   * Under the lock, before a handler decides: a payment that arrived with its request (in the
   * same workflow task) is applied first, so that the order a handler sees is the one the read
   * model may already show. Handlers run before the main loop wakes to take payments from the
   * queue, and the main loop finds the queue empty afterwards.
   */
  async function applyQueuedPayments(): Promise<void> {
    if (isPaidStatus(state.status) || !payments.some((p) => p.status === 'paid')) return;
    if (!patched(patches.orderHandlersApplyQueuedPayments)) return;
    while (payments.length > 0 && !isPaidStatus(state.status)) {
      const p = payments.shift()!;
      if (p.status === 'paid') await markPaid(p);
    }
  }

  setHandler(createOrderUpdate, (req) =>
    exclusive(async () => {
      if (state.phase === 'failed') throw appFailure(state.failure!.code, state.failure!.message);
      const identity: CreateIdentity = {
        amount: req.amount,
        payMethod: req.payMethod,
        channelCode: input.channelCode,
        merchantId: req.merchantId,
        profitSharingAmount: req.profitSharingAmount,
      };
      if (state.phase === 'open') {
        await applyQueuedPayments();
        const refusal = repeatCreateRefusal({ identity: state.identity!, status: state.status }, identity);
        if (refusal) throw appFailure(refusal.code, refusal.message);
        return { trade_no: state.tradeNo, pay_credential: state.payCredential!, is_idempotent: true };
      }

      const expireAt = new Date(Date.parse(input.createdAt) + req.expireMinutes * 60_000).toISOString();
      const atChannel = {
        channelCode: input.channelCode,
        tradeNo: state.tradeNo,
        amount: req.amount,
        currency: input.currency,
        payMethod: req.payMethod,
        subject: req.subject,
        expireAt,
        callbackUrl: input.callbackUrl,
        extra: req.extra,
        subMerchantNo: req.subMerchantNo,
        profitSharing: req.profitSharingAmount > 0,
      };
      const row = {
        tradeNo: state.tradeNo,
        appId: input.appId,
        merchantOrderNo: input.merchantOrderNo,
        merchantId: req.merchantId,
        subMerchantNo: req.subMerchantNo,
        channelCode: input.channelCode,
        payMethod: req.payMethod,
        amount: req.amount,
        currency: input.currency,
        subject: req.subject,
        notifyUrl: req.notifyUrl,
        expireTime: expireAt,
        profitSharingAmount: req.profitSharingAmount,
        extra: req.extra,
        createdAt: input.createdAt,
        ...(swept
          ? {
              poll: {
                gapsMs: input.timings.pollGapsMs,
                until: new Date(Date.now() + input.timings.expireAfterMs).toISOString(),
              },
            }
          : {}),
      };
      let created;
      try {
        // One local activity makes the order at the channel and records it; a repeat of it
        // answers from the row (patches.orderCreateRecordsItself).
        created = createsRecordItself
          ? await localCreate.createOrderAtChannel({ channel: atChannel, order: row })
          : await fast.createChannelPayment(atChannel);
      } catch (err) {
        state.phase = 'failed';
        state.failure = failureOf(err, 'channel_timeout');
        throw appFailure(state.failure.code, state.failure.message);
      }
      if (!createsRecordItself) {
        await fast.recordOrderCreated({
          ...row,
          channelTradeNo: created.channelTradeNo,
          payCredential: created.payCredential,
        });
      }
      state.identity = identity;
      state.request = req;
      if (booked) state.book = openBook(req.amount, req.profitSharingAmount);
      state.payCredential = created.payCredential;
      state.expireAtMs = Date.now() + input.timings.expireAfterMs;
      state.phase = 'open';
      upsertSearchAttributes([
        { key: searchAttributes.TradeNo, value: state.tradeNo },
        { key: searchAttributes.BizStatus, value: 'pending' },
        ...(req.merchantId ? [{ key: searchAttributes.MerchantId, value: req.merchantId }] : []),
      ]);
      return { trade_no: state.tradeNo, pay_credential: created.payCredential, is_idempotent: false };
    }),
  );

  setHandler(closeOrderUpdate, () =>
    exclusive(async () => {
      if (state.phase !== 'open') throw appFailure('order_not_found', 'order not found');
      await applyQueuedPayments();
      const decision = closeDecision(state.status);
      if (decision === 'closed') return null;
      if (decision !== 'close') throw appFailure(decision.code, decision.message);
      let st: PaymentState;
      try {
        st = await channel.closeChannelPayment({ channelCode: input.channelCode, tradeNo: state.tradeNo });
      } catch (err) {
        const f = closeFailure(failureOf(err, 'channel_timeout'));
        throw appFailure(f.code, f.message);
      }
      if (st.status === 'paid') {
        await applyChannelState(st);
        throw appFailure('order_already_paid', 'order already paid');
      }
      await markClosed();
      return null;
    }),
  );

  /** Refunds whose channel call is under way, by refund_no and by `m:` + merchant_refund_no. */
  const refundsInFlight = new Map<string, Promise<RefundResult>>();

  /**
   * Decides a refund at once, with no await: the answer already given to the same refund (or
   * the same merchant_refund_no), a refusal, or a reservation of its amount. Decisions are made
   * one at a time under the lock, so concurrent refunds can never reserve more than the order.
   */
  function decideRefund(req: RefundRequest): { existing: Promise<RefundResult> } | { reserved: true } {
    const earlier = earlierAnswer(req);
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
   * The answer already given, or being made, to the same refund: the same request sent again
   * (the API retries a refused delivery) or another with the same merchant_refund_no.
   */
  function earlierAnswer(req: RefundRequest): Promise<RefundResult> | undefined {
    if (state.phase !== 'open') throw appFailure('order_not_found', 'order not found');
    const known = ownEntry(state.refunds, req.refundNo);
    if (known) return Promise.resolve(known.result);
    const byMerchantNo = req.merchantRefundNo
      ? ownEntry(state.refundsByMerchantNo, req.merchantRefundNo)
      : undefined;
    if (byMerchantNo) return Promise.resolve(state.refunds[byMerchantNo]!.result);
    return (
      refundsInFlight.get(req.refundNo) ??
      (req.merchantRefundNo ? refundsInFlight.get(`m:${req.merchantRefundNo}`) : undefined)
    );
  }

  /**
   * Decides a refund against the order's book, at once and with no await (under the lock): the
   * answer already given to it, a refusal, or a reservation of its amount and of the parts of
   * the profit share that must come back from receivers first (SPEC §3.5, §3.7).
   */
  function decideBookedRefund(
    req: RefundRequest,
  ): { existing: Promise<RefundResult> } | { returns: PlannedReturn[] } {
    const earlier = earlierAnswer(req);
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
  function holdRefund(
    req: RefundRequest,
    channelRefundNo: string | null,
    withRefund: PlannedReturn[] = [],
  ): RefundResult {
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
  async function followRefund(req: RefundRequest, how: { unanswered?: boolean }): Promise<void> {
    await startChild<typeof refundWorkflow>('refundWorkflow', {
      workflowId: refundWorkflowId(req.refundNo),
      parentClosePolicy: ParentClosePolicy.ABANDON,
      args: [
        {
          appId: input.appId,
          tradeNo: state.tradeNo,
          refundNo: req.refundNo,
          channelCode: input.channelCode,
          amount: req.amount,
          orderWorkflowId: workflowInfo().workflowId,
          pollGapsMs: input.timings.refundPollGapsMs,
          pollForMs: input.timings.refundPollForMs,
          ...(how.unanswered ? { unanswered: true } : {}),
        },
      ],
    });
  }

  /** Makes a reserved refund at the channel and hands it to its own workflow. */
  async function performRefund(req: RefundRequest): Promise<RefundResult> {
    const amount = state.request!.amount;
    await db.recordRefundCreated({
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
      st = await channel.requestChannelRefund({
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
        holdRefund(req, null);
        await followRefund(req, { unanswered: true });
        throw appFailure(f.code, f.message);
      }
      // Refused: the refund failed and its amount is free again (in the book too, when the
      // order adopted one while this refund was at the channel).
      state.inFlightAmount -= req.amount;
      if (state.book) releaseRefund(state.book, req.amount, []);
      await db.recordRefundSettled({
        refundNo: req.refundNo,
        status: 'failed',
        channelRefundNo: null,
        refundTime: null,
        failReason: f.message,
      });
      throw appFailure(f.code, f.message);
    }
    const channelRefundNo = st.status === 'not_found' ? null : st.channelRefundNo;
    const result = holdRefund(req, channelRefundNo);
    await db.recordRefundChannelNo({ refundNo: req.refundNo, channelRefundNo });
    await followRefund(req, {});
    return result;
  }

  /** A receiver of the share as the channel's port names it. */
  function receiverOf(r: PlannedReturn): { type: string; account: string; name?: string } {
    const part = state.book!.share.parts[r.receiver]!;
    return { type: part.type, account: part.account, ...(part.name ? { name: part.name } : {}) };
  }

  /** Where the order's profit share stands, for the read model. */
  function sharingTotals() {
    const book = state.book!;
    return { status: book.share.status, sharedAmount: sharedOf(book), returnedAmount: returnedOf(book) };
  }

  /** How a refused return or a refund that carried returns is answered (SPEC §3.7). */
  function shareNotReturned(reason: string): { code: ErrorCode; message: string } {
    const held = sharedOf(state.book!) - returnedOf(state.book!);
    return {
      code: REFUND_EXCEEDS.code,
      message: `${REFUND_EXCEEDS.message}: ${held} of the order is shared to profit-sharing receivers and could not be taken back (${reason})`,
    };
  }

  /**
   * A read-model write whose failure must not leave the order's money where it is: the write
   * is tried (the dbWrite profile retries a database that does not answer), and one the
   * database refuses for good is logged for an operator while the order goes on. Such a failure
   * could not be recorded before writes failed for good (they were retried for ever), so this
   * catch changes no command of an earlier history.
   */
  async function recordOrLog(what: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (err) {
      log.error('a read-model write failed for good; the order goes on', {
        trade_no: state.tradeNo,
        write: what,
        error: failureOf(err, 'internal_system').message,
      });
    }
  }

  /**
   * Makes a refund decided against the book: its row (a refund the database refuses never
   * reaches the channel, and releases its reservation at once), then the parts of the share it
   * needs back (one receiver at a time, in order), then the refund at the channel (with the parts
   * that travel on it, where the channel takes them so), then its own workflow follows it.
   */
  async function performBookedRefund(req: RefundRequest, returns: PlannedReturn[]): Promise<RefundResult> {
    const book = state.book!;
    try {
      await db.recordRefundCreated({
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
      await exclusive(async () => releaseRefund(book, req.amount, returns));
      const f = failureOf(err, 'internal_system');
      throw appFailure(f.code, f.message);
    }
    /** The refund will not be made: its amount and the returns it still waited for are free. */
    const refuse = async (
      pending: PlannedReturn[],
      answer: { code: ErrorCode; message: string },
      reason: string,
    ): Promise<never> => {
      await exclusive(async () => releaseRefund(book, req.amount, pending));
      await recordOrLog('recordRefundSettled', () =>
        db.recordRefundSettled({
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
        const receiver = receiverOf(r);
        let outcome:
          | { status: 'success'; channelReturnNo: string | null }
          | { status: 'failed' | 'processing'; reason: string };
        try {
          outcome = await shareReturnFor(input.timings).returnProfitShare({
            channelCode: input.channelCode,
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
          await exclusive(async () => returnUnanswered(book, r));
          followLater('return', returnNo, { ...r, refundNo: req.refundNo });
        }
        if (outcome.status === 'success') await exclusive(async () => returnSucceeded(book, r));
        await recordOrLog('recordShareStep', () =>
          db.recordShareStep({
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
            order: sharingTotals(),
          }),
        );
        if (outcome.status !== 'success') {
          const why = `a part of the profit share could not be taken back: ${outcome.reason}`;
          // An unanswered part is no longer the refund's to release: it waits for the channel.
          const pending = returns.slice(outcome.status === 'processing' ? k + 1 : k);
          return refuse(pending, shareNotReturned(outcome.reason), why);
        }
      }
    }

    const withRefund = separate ? [] : returns;
    let st;
    try {
      st = await channel.requestChannelRefund({
        channelCode: input.channelCode,
        tradeNo: state.tradeNo,
        refundNo: req.refundNo,
        amount: req.amount,
        totalAmount: state.request!.amount,
        reason: req.reason,
        callbackUrl: input.callbackUrl,
        ...(withRefund.length > 0
          ? { shareReturns: withRefund.map((r) => ({ ...receiverOf(r), amount: r.amount })) }
          : {}),
      });
    } catch (err) {
      const f = failureOf(err, 'channel_timeout');
      if (f.code === 'channel_timeout') {
        // No answer is not a refusal: the amount (and the parts on the refund) stay reserved
        // until the channel says how the refund ended.
        holdRefund(req, null, withRefund);
        await followRefund(req, { unanswered: true });
        throw appFailure(f.code, f.message);
      }
      return refuse(withRefund, withRefund.length > 0 ? shareNotReturned(f.message) : f, f.message);
    }
    const channelRefundNo = st.status === 'not_found' ? null : st.channelRefundNo;
    const result = holdRefund(req, channelRefundNo, withRefund);
    await recordOrLog('recordRefundChannelNo', () =>
      db.recordRefundChannelNo({ refundNo: req.refundNo, channelRefundNo }),
    );
    await followRefund(req, {});
    return result;
  }

  if (booked) {
    // The decision (and its reservation) holds the lock; the refund is made outside it, and a
    // repeat of one under way waits for its answer instead of refunding again.
    setHandler(refundOrderUpdate, async (req: RefundRequest): Promise<RefundResult> => {
      const decided = await exclusive(async () => {
        if (state.phase === 'open') await applyQueuedPayments();
        const d = decideBookedRefund(req);
        if ('existing' in d) return { outcome: d.existing };
        const outcome = performBookedRefund(req, d.returns);
        refundsInFlight.set(req.refundNo, outcome);
        if (req.merchantRefundNo) refundsInFlight.set(`m:${req.merchantRefundNo}`, outcome);
        return { outcome };
      });
      return decided.outcome;
    });
  } else if (lockedRuns) {
    // Only the decision holds the lock: refunds already reserved go to the channel side by
    // side, and a repeat of one under way waits for its answer instead of refunding again. A
    // paid order adopts the book here (adoptBook) and decides as a booked run does.
    setHandler(refundOrderUpdate, async (req: RefundRequest): Promise<RefundResult> => {
      const decided = await exclusive(async () => {
        if (adoptBook()) {
          const b = decideBookedRefund(req);
          if ('existing' in b) return { outcome: b.existing };
          const outcome = performBookedRefund(req, b.returns);
          refundsInFlight.set(req.refundNo, outcome);
          if (req.merchantRefundNo) refundsInFlight.set(`m:${req.merchantRefundNo}`, outcome);
          return { outcome };
        }
        const d = decideRefund(req);
        if ('existing' in d) return { outcome: d.existing };
        const outcome = performRefund(req);
        refundsInFlight.set(req.refundNo, outcome);
        if (req.merchantRefundNo) refundsInFlight.set(`m:${req.merchantRefundNo}`, outcome);
        return { outcome };
      });
      return decided.outcome;
    });
  } else {
    // As recorded before the lock: the whole refund inside the gate.
    setHandler(refundOrderUpdate, (req: RefundRequest) =>
      exclusive(async (): Promise<RefundResult> => {
        const d = decideRefund(req);
        return 'existing' in d ? d.existing : performRefund(req);
      }),
    );
  }

  setHandler(paymentSignal, (s) => {
    payments.push(s);
  });
  setHandler(refundSettledSignal, (s) => {
    settlements.push(s);
  });

  /**
   * A refund's final result in a run without the book: releases or counts its amount (an
   * abnormal refund's money left the order: counted). Returns the order's new totals.
   */
  function settleRefund(s: RefundSettledSignal): { refundedAmount: number; status: OrderStatus } | undefined {
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

  /**
   * A refund's result against the book: a success or an abnormal end counts its amount as
   * refunded, a failure frees it; parts of the share that travelled on it came back if it was
   * made. An abnormal refund paid out later changes no amount. Returns the order's new totals.
   */
  function settleBookedRefund(s: RefundSettledSignal) {
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
  async function applySettlement(s: RefundSettledSignal): Promise<void> {
    if (booked || adoptBook()) {
      const settled = await exclusive(async () => {
        const t = settleBookedRefund(s);
        if (t) setStatus(t.status);
        return t;
      });
      if (!settled) return;
      const { withRefund, ...totals } = settled;
      await recordOrLog('recordOrderRefundTotals', () =>
        db.recordOrderRefundTotals({ tradeNo: state.tradeNo, ...totals }),
      );
      // Parts of the share that travelled on the refund: recorded as the refund ended.
      for (const [k, r] of withRefund.entries()) {
        const receiver = receiverOf(r);
        await recordOrLog('recordShareStep', () =>
          db.recordShareStep({
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
            order: sharingTotals(),
          }),
        );
      }
      return;
    }
    if (lockedRuns) {
      const totals = await exclusive(async () => {
        const t = settleRefund(s);
        if (t) setStatus(t.status);
        return t;
      });
      if (totals) await db.recordOrderRefundTotals({ tradeNo: state.tradeNo, ...totals });
      return;
    }
    // As recorded before the lock: the write inside the gate, the status after it.
    await exclusive(async () => {
      const totals = settleRefund(s);
      if (!totals) return;
      await db.recordOrderRefundTotals({ tradeNo: state.tradeNo, ...totals });
      setStatus(totals.status);
    });
  }

  async function shareProfitNow(): Promise<void> {
    state.profitShareAtMs = null;
    const req = state.request!;
    await db.recordProfitSharing({ tradeNo: state.tradeNo, status: 'processing' });
    let outcome: 'finished' | 'failed';
    try {
      outcome = await channelBackground.shareProfit({
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
    await db.recordProfitSharing({ tradeNo: state.tradeNo, status: outcome });
  }

  /**
   * The share against the book (SPEC §3.7): at most what is unrefunded when it is made, decided
   * under the lock and made outside it (refunds decided meanwhile count it as the receivers').
   * Nothing left to share: `cancelled`, and what the payment froze is released at the channel.
   * A share whose outcome stays unknown stays `processing`: refunds never count on it failing.
   */
  async function shareProfitBooked(): Promise<void> {
    state.profitShareAtMs = null;
    const book = state.book!;
    const due = await exclusive(async () => {
      const d = shareWhenDue(book, state.request!.receivers);
      if (d === 'cancelled') shareCancelled(book);
      else startShare(book, d.parts);
      return d;
    });
    if (due === 'cancelled') {
      const unfreezeNo = `U${state.tradeNo.slice(1)}`;
      let outcome: { status: 'finished' | 'failed' | 'processing' | 'not_needed'; reason?: string };
      try {
        outcome = await channelBackground.unfreezeProfitShare({
          channelCode: input.channelCode,
          tradeNo: state.tradeNo,
          unfreezeNo,
        });
      } catch (err) {
        outcome = { status: 'failed', reason: failureOf(err, 'channel_timeout').message };
      }
      if (outcome.status === 'not_needed') {
        await recordOrLog('recordProfitSharing', () =>
          db.recordProfitSharing({ tradeNo: state.tradeNo, status: 'cancelled', sharedAmount: 0 }),
        );
        return;
      }
      if (outcome.status === 'failed') unfreezeFailed(outcome.reason);
      // Released later (WeChat Pay: PROCESSING): asked again until the channel says so.
      if (outcome.status === 'processing') followLater('unfreeze', unfreezeNo);
      await recordStep({
        stepNo: unfreezeNo,
        kind: 'unfreeze',
        receivers: [],
        amount: book.share.planned,
        status: outcome.status === 'finished' ? 'success' : outcome.status,
        failReason: outcome.reason ?? null,
      });
      return;
    }
    await recordOrLog('recordProfitSharing', () =>
      db.recordProfitSharing({ tradeNo: state.tradeNo, status: 'processing', sharedAmount: due.amount }),
    );
    const shareNo = `S${state.tradeNo.slice(1)}`;
    let outcome: 'finished' | 'failed' | 'unknown';
    let reason: string | null = null;
    try {
      outcome = await channelBackground.shareProfit({
        channelCode: input.channelCode,
        tradeNo: state.tradeNo,
        receivers: due.parts.map((p) => ({
          type: p.type,
          account: p.account,
          ...(p.name === undefined ? {} : { name: p.name }),
          amount: p.shared,
        })),
      });
    } catch (err) {
      // Refused: not shared. No answer: not known, so the receivers are taken to have it.
      const cause = err instanceof ActivityFailure ? err.cause : err;
      outcome = cause instanceof ApplicationFailure && cause.nonRetryable ? 'failed' : 'unknown';
      reason = failureOf(err, 'channel_timeout').message;
    }
    if (outcome === 'unknown') {
      // It stays processing (refunds never count on it failing) and is asked again until the
      // channel says how it ended.
      log.warn('the channel did not say how the share ended; it is followed', {
        trade_no: state.tradeNo,
        reason,
      });
      followLater('share', shareNo);
      await recordStep(shareStep(shareNo, 'processing', reason));
      return;
    }
    const settled = outcome;
    await exclusive(async () => shareSettled(book, settled));
    await recordStep(shareStep(shareNo, settled === 'finished' ? 'success' : 'failed', reason));
  }

  type ShareStepRecord = Parameters<Activities['recordShareStep']>[0]['step'];

  /** A step of the share, recorded with the order's totals as they stand now. */
  function recordStep(step: ShareStepRecord): Promise<void> {
    return recordOrLog('recordShareStep', () =>
      db.recordShareStep({ tradeNo: state.tradeNo, step, order: sharingTotals() }),
    );
  }

  /** The share's own step, with the parts it gives (the book's, or those it gave before it failed). */
  function shareStep(
    shareNo: string,
    status: ShareStepRecord['status'],
    failReason: string | null,
    parts: ReceiverPart[] = state.book!.share.parts,
  ): ShareStepRecord {
    return {
      stepNo: shareNo,
      kind: 'share',
      receivers: parts.map((p) => ({ type: p.type, account: p.account, amount: p.shared })),
      amount: parts.reduce((sum, p) => sum + p.shared, 0),
      status,
      failReason,
    };
  }

  function unfreezeFailed(reason: string | undefined): void {
    log.warn('the share was cancelled; the channel did not release the frozen amount', {
      trade_no: state.tradeNo,
      reason,
    });
  }

  /** Asks the channel again, on the refund backoff, how a step it did not answer ended. */
  function followLater(kind: ShareFollow['kind'], no: string, part?: ShareFollow['part']): void {
    (state.follows ??= []).push({
      kind,
      no,
      ...(part ? { part } : {}),
      gap: 0,
      nextAtMs: Date.now() + pollGap(input.timings.refundPollGapsMs, 0),
      untilMs: Date.now() + input.timings.refundPollForMs,
      notFound: 0,
    });
  }

  /** When the next followed step is due to be asked about; undefined when none is followed. */
  function nextFollowAtMs(): number | undefined {
    const follows = state.follows ?? [];
    return follows.length === 0 ? undefined : Math.min(...follows.map((f) => f.nextAtMs));
  }

  /**
   * Asks the channel about every followed step that is due, and settles those it has an end
   * for: a share made or not, a frozen amount released or not, a part of the share back with
   * the merchant or still the receiver's. One the channel does not know of, twice in a row, it
   * never took. Past the refund polling window a step is left for an operator.
   */
  async function followSteps(): Promise<void> {
    const book = state.book!;
    for (const f of [...(state.follows ?? [])]) {
      if (Date.now() < f.nextAtMs) continue;
      let seen: Awaited<ReturnType<Activities['queryShareStep']>>;
      try {
        seen = await channelBackground.queryShareStep({
          channelCode: input.channelCode,
          tradeNo: state.tradeNo,
          kind: f.kind,
          no: f.no,
        });
      } catch (err) {
        seen = { status: 'processing', reason: failureOf(err, 'channel_timeout').message };
      }
      f.notFound = seen.status === 'not_found' ? f.notFound + 1 : 0;
      if (f.notFound >= 2) seen = { status: 'failed', reason: `the channel has no ${f.kind} ${f.no}` };
      if (seen.status === 'processing' || seen.status === 'not_found') {
        if (Date.now() < f.untilMs) {
          f.gap += 1;
          f.nextAtMs = Date.now() + pollGap(input.timings.refundPollGapsMs, f.gap);
          continue;
        }
        log.error('the channel never said how a step of the share ended; an operator must look', {
          trade_no: state.tradeNo,
          kind: f.kind,
          step_no: f.no,
        });
      }
      state.follows = (state.follows ?? []).filter((x) => x !== f);
      if (seen.status !== 'finished' && seen.status !== 'failed') continue;
      const ended = seen;
      const failReason = ended.status === 'failed' ? ended.reason : null;
      if (f.kind === 'share') {
        const parts = book.share.parts;
        await exclusive(async () => shareSettled(book, ended.status));
        await recordStep(
          shareStep(f.no, ended.status === 'finished' ? 'success' : 'failed', failReason, parts),
        );
      } else if (f.kind === 'unfreeze') {
        if (ended.status === 'failed') unfreezeFailed(ended.reason);
        await recordStep({
          stepNo: f.no,
          kind: 'unfreeze',
          receivers: [],
          amount: book.share.planned,
          status: ended.status === 'finished' ? 'success' : 'failed',
          failReason,
        });
      } else {
        const part = f.part!;
        await exclusive(async () => unsettledReturnEnded(book, part, ended.status === 'finished'));
        const receiver = receiverOf(part);
        await recordStep({
          stepNo: f.no,
          kind: 'return',
          refundNo: part.refundNo,
          receivers: [{ type: receiver.type, account: receiver.account, amount: part.amount }],
          amount: part.amount,
          status: ended.status === 'finished' ? 'success' : 'failed',
          channelNo: ended.status === 'finished' ? (ended.channelNo ?? null) : null,
          failReason,
        });
      }
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
   * Expiry: close at the channel, unless the channel says the buyer paid. False when the channel
   * could not be asked: the order stays pending (callbacks still welcome) and the close is tried
   * again after a wait, since the channel is the one that knows whether the buyer paid.
   */
  function closeAtExpiry(unansweredCloses: number, via: ExpiryCalls = remoteExpiry): Promise<boolean> {
    return exclusive(async () => {
      if (state.status !== 'pending') return true;
      let st: PaymentState | undefined;
      try {
        st = await via.closeChannelPayment({
          channelCode: input.channelCode,
          tradeNo: state.tradeNo,
        });
      } catch (err) {
        if (patched(patches.orderExpiryWaitsForChannel)) {
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
      if (st?.status === 'paid') await applyChannelState(st);
      else await markClosed(via);
      return true;
    });
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
        if (p.status === 'paid') await exclusive(() => markPaid(p));
        continue;
      }
      if (Date.now() >= state.expireAtMs) {
        if (!(await closeAtExpiry(unansweredCloses))) {
          unansweredCloses += 1;
          continue;
        }
        break;
      }
      state.pollIndex += 1;
      try {
        const st = await fast.queryChannelPayment({
          channelCode: input.channelCode,
          tradeNo: state.tradeNo,
        });
        if (st.status === 'paid') await exclusive(() => applyChannelState(st));
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
        if (p.status === 'paid') await exclusive(() => markPaid(p));
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
          if ('answer' in outcome) await exclusive(() => applyChannelState(outcome.answer));
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
      if (await closeAtExpiry(unansweredCloses)) break;
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
        if (p.status === 'paid') await exclusive(() => markPaid(p));
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
      if (await closeAtExpiry(unansweredCloses, localExpiry)) break;
      unansweredCloses += 1;
    }
  }

  // ---- Pending: callbacks, polling on a backoff, and expiry. ----
  if (swept) await waitWhilePendingSwept();
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
      if (p?.status === 'paid') await exclusive(() => markPaid(p));
    }
    if (state.status === 'closed') {
      await condition(allHandlersFinished);
      return 'closed';
    }
  }

  // ---- Paid: profit sharing, refunds, until fully refunded. ----
  if (booked) return paidWithBook();
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
      if (adoptBook()) continue;
      await exclusive(shareProfitNow);
      continue;
    }
    while (payments.length > 0) payments.shift(); // duplicates of the payment: nothing to do
    while (settlements.length > 0) {
      const s = settlements.shift()!;
      await applySettlement(s);
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
    const shareDue = () =>
      state.profitShareAtMs !== null && (Date.now() >= state.profitShareAtMs || nothingLeftToShare(book));
    const followDue = () => {
      const at = nextFollowAtMs();
      return at !== undefined && Date.now() >= at;
    };
    for (;;) {
      if (shareDue()) {
        await shareProfitBooked();
        continue;
      }
      if (followDue()) {
        await followSteps();
        continue;
      }
      while (payments.length > 0) payments.shift(); // duplicates of the payment: nothing to do
      while (settlements.length > 0) {
        const s = settlements.shift()!;
        await applySettlement(s);
      }
      if (
        state.status === 'refunded' &&
        book.inFlight === 0 &&
        state.profitShareAtMs === null &&
        book.share.status !== 'processing' &&
        (state.follows ?? []).length === 0
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
      const followAt = nextFollowAtMs();
      const wakeAt = [state.profitShareAtMs, followAt].filter((t): t is number => t != null);
      const wait = wakeAt.length === 0 ? undefined : Math.max(0, Math.min(...wakeAt) - Date.now());
      await condition(
        () =>
          settlements.length > 0 ||
          payments.length > 0 ||
          (state.profitShareAtMs !== null && nothingLeftToShare(book)) ||
          nextFollowAtMs() !== followAt ||
          (workflowInfo().continueAsNewSuggested && !lock.isLocked()),
        wait ?? '365 days',
      );
    }
  }
}
