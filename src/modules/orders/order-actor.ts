// Longer than 400 lines: the actor's state, lock, create and close, and the saving and restoring
// of its state share its fields; its payment, refunds and profit share are files of their own.
/**
 * The order's actor (SPEC §3, §7): its single writer. It owns the order's state and decides;
 * create, payment results, close and refunds pass through it one at a time, each public method
 * taking the lock itself, and the database is written only from here, through activities.
 * Its payment and expiry (order-actor-payment.ts), refunds (order-actor-refunds.ts) and profit share
 * (order-actor-sharing.ts) are its parts; the money
 * arithmetic is refund-book.ts; workflow.ts wires the handlers and runs the phases.
 *
 * Replay: each method keeps the `await`s, and each `patched()` its place among the commands, of
 * the code recorded histories were made with.
 */
import { ApplicationFailure, log, patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { PaymentState } from '../../channels/ports';
import type { ErrorCode } from '../../platform/errors';
import { handlerLock, legacyConditionGate, type HandlerLock } from '../../platform/workflow/lock';
import { searchAttributes } from '../../platform/workflow/definitions';
import {
  appFailure,
  closeDecision,
  closeFailure,
  failureOf,
  isPaidStatus,
  repeatCreateRefusal,
  type CreateIdentity,
  type OrderStatus,
} from './rules';
import { bookFromTotals, openBook, refundedOf, type PlannedReturn, type RefundBook } from './refund-book';
import {
  ORDER_RUN_ENDED,
  patches,
  type CreateOrderRequest,
  type CreateOrderResult,
  type OrderInput,
  type OrderPatch,
  type PaymentSignal,
  type RefundRequest,
  type RefundResult,
  type RefundSettledSignal,
} from './messages';
import {
  channelActivities,
  createAtChannelActivity,
  paymentActivities,
  savedStateActivities,
  type PaymentActivities,
} from './order-calls';
import { OrderPayment } from './order-actor-payment';
import { OrderRefunds } from './order-actor-refunds';
import { OrderSharing } from './order-actor-sharing';

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

export class OrderActor {
  readonly state: OrderState;
  /** Payment results from signals, taken by the main loop (or first by a handler). */
  readonly payments: PaymentSignal[] = [];
  /** Refunds' results from signals, taken by the main loop. */
  readonly settlements: RefundSettledSignal[] = [];
  /** A run started with every patch of the order as of patches.orderBaseline. */
  private readonly baseline: boolean;
  /** Orders started before local activities replay with the activities they recorded. */
  readonly paymentCalls: PaymentActivities;
  /** Orders started before the payment sweeper poll the channel themselves. */
  readonly swept: boolean;
  /**
   * One handler or main-loop step at a time, in arrival order: concurrent creates, closes and
   * refunds are serialized here. Runs recorded before the lock replay with the gate they used.
   */
  readonly lockedRuns: boolean;
  readonly lock: HandlerLock;
  /**
   * Refunds and the profit share decided against each other. Runs started before go on their
   * own way; a run that continues as new keeps what it knew in a book of its totals.
   */
  readonly booked: boolean;
  private readonly createsRecordItself: boolean;
  readonly payment: OrderPayment;
  readonly refunds: OrderRefunds;
  readonly sharing: OrderSharing;
  /**
   * A run that reopens an order (input.resume): its state, loaded from the database under the
   * lock before any request is taken. Null in every other run.
   */
  readonly restored: Promise<void> | null = null;
  /** Why a reopening run has no state to go on with: every request is refused with it. */
  private ended: { type: string; message: string } | null = null;
  /** How many saves of its state this run has made (each save's place among them). */
  private saves = 0;
  /** The state as this run last saved (or loaded) it, serialized: unsaved changes differ. */
  savedJson: string | undefined;

  constructor(
    readonly input: OrderInput,
    carried?: OrderState,
  ) {
    // The baseline first: a run that holds it asks no other patch. Runs started before ask the
    // patches in the order (and at the point) their histories asked them.
    this.baseline = patched(patches.orderBaseline);
    this.paymentCalls = this.has(patches.orderLocalActivities)
      ? paymentActivities.local
      : paymentActivities.regular;
    this.swept = this.has(patches.orderPollsBySweeper);
    this.state = carried ?? {
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
    this.lockedRuns = this.has(patches.orderHandlerLock);
    this.lock = this.lockedRuns ? handlerLock() : legacyConditionGate();
    this.booked = this.has(patches.orderRefundBook);
    if (this.booked && this.state.phase === 'open' && !this.state.book) this.state.book = this.bookOfTotals();
    this.createsRecordItself = this.has(patches.orderCreateRecordsItself);
    this.payment = new OrderPayment(this);
    this.refunds = new OrderRefunds(this);
    this.sharing = new OrderSharing(this);
    // Taken before any handler is set, so every request waits for the state behind it. A run
    // that continued as new carries its state: the saved one may be older.
    if (input.resume && !carried) this.restored = this.exclusive(() => this.restore());
  }

  /**
   * Whether this run takes the change `patch` names: every change when the run holds the
   * baseline (patches.orderBaseline), else what `patched()` answers, asked here as before.
   */
  has(patch: OrderPatch): boolean {
    return this.baseline || patched(patch);
  }

  /** Whether a reopening run found no state to go on with (its requests are refused). */
  get hasEnded(): boolean {
    return this.ended !== null;
  }

  /** Refuses a request to a reopening run that found no state to go on with. */
  refuseIfEnded(): void {
    if (this.ended) throw ApplicationFailure.nonRetryable(this.ended.message, this.ended.type);
  }

  /** Loads the state the order's last run saved when it ended idle (SPEC §7). */
  private async restore(): Promise<void> {
    let loaded;
    try {
      loaded = await savedStateActivities.load({ tradeNo: this.input.tradeNo });
    } catch (err) {
      loaded = {
        found: 'unrestorable' as const,
        reason: `its saved state could not be read (${failureOf(err, 'internal_system').message})`,
      };
    }
    if (loaded.found === 'state') {
      Object.assign(this.state, loaded.state as OrderState);
      this.savedJson = JSON.stringify(this.state);
      return;
    }
    if (loaded.found === 'none') {
      // Its last run ended closed or refunded before runs saved their state: the read model says how.
      this.ended = { type: ORDER_RUN_ENDED, message: 'the order has ended' };
      return;
    }
    log.error("an order's saved state is not its read model's: an operator must look at it", {
      trade_no: this.input.tradeNo,
      reason: loaded.reason,
    });
    this.ended = {
      type: 'internal_system',
      message: `order ${this.input.tradeNo} cannot be reopened: ${loaded.reason}`,
    };
  }

  /**
   * Saves the order's state for the run that reopens it (SPEC §7). False when the database
   * refused it for good (logged): the run then does not end idle.
   */
  async saveState(): Promise<boolean> {
    const json = JSON.stringify(this.state);
    const info = workflowInfo();
    try {
      await savedStateActivities.save({
        tradeNo: this.state.tradeNo,
        state: this.state,
        status: this.state.status,
        refundedAmount: this.state.book ? refundedOf(this.state.book) : this.state.refundedAmount,
        version: {
          runId: info.runId,
          runStartedMs: info.runStartTime.getTime(),
          historyLength: info.historyLength,
          saveSeq: this.saves++,
        },
      });
    } catch (err) {
      log.error("an order's state could not be saved; its run stays open", {
        trade_no: this.state.tradeNo,
        error: failureOf(err, 'internal_system').message,
      });
      return false;
    }
    this.savedJson = json;
    return true;
  }

  /** Whether the state has changed since this run last saved (or loaded) it. */
  hasUnsavedChanges(): boolean {
    return JSON.stringify(this.state) !== this.savedJson;
  }

  /** Runs `fn` under the order's lock (or, in runs recorded before it, its gate). */
  readonly exclusive = <T>(fn: () => Promise<T>): Promise<T> => this.lock.runExclusive(fn);

  private bookOfTotals(): RefundBook {
    const state = this.state;
    return bookFromTotals({
      amount: state.request!.amount,
      refunded: state.refundedAmount,
      inFlight: state.inFlightAmount,
      plannedShare: state.request!.profitSharingAmount,
      shareStillDue: state.profitShareAtMs !== null || !isPaidStatus(state.status),
      receivers: state.request!.receivers,
    });
  }

  /**
   * Whether the order decides with the book: from its start, or (a paid order whose run began
   * before the book, under the lock) from the first refund, settlement or share that this code
   * runs for it, with the book its totals make (patches.orderAdoptsBook). Runs started before
   * the lock keep their own rules; histories recorded before replay without the book.
   */
  adoptBook(): boolean {
    const state = this.state;
    if (state.book) return true;
    if (!this.lockedRuns || state.phase !== 'open' || !isPaidStatus(state.status)) return false;
    if (!this.has(patches.orderAdoptsBook)) return false;
    state.book = this.bookOfTotals();
    return true;
  }

  /** Sets the order's status and its search attribute (under the lock, or in a step that holds it). */
  setStatus(status: OrderStatus): void {
    this.state.status = status;
    upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: status }]);
  }

  /**
   * A read-model write whose failure must not leave the order's money where it is: the write
   * is tried (the dbWrite profile retries a database that does not answer), and one the
   * database refuses for good is logged for an operator while the order goes on. Such a failure
   * could not be recorded before writes failed for good (they were retried for ever), so this
   * catch changes no command of an earlier history.
   */
  async recordOrLog(what: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (err) {
      log.error('a read-model write failed for good; the order goes on', {
        trade_no: this.state.tradeNo,
        write: what,
        error: failureOf(err, 'internal_system').message,
      });
    }
  }

  // ---- Signals: queued for the main loop. ----

  receivePayment(s: PaymentSignal): void {
    this.payments.push(s);
  }

  receiveSettlement(s: RefundSettledSignal): void {
    this.settlements.push(s);
  }

  // ---- Update handlers. ----

  /** createOrder (SPEC §3.1): the first create makes the order; a repeat answers it. */
  create(req: CreateOrderRequest): Promise<CreateOrderResult> {
    const { state, input } = this;
    return this.exclusive(async () => {
      this.refuseIfEnded();
      if (state.phase === 'failed') throw appFailure(state.failure!.code, state.failure!.message);
      const identity: CreateIdentity = {
        amount: req.amount,
        payMethod: req.payMethod,
        channelCode: input.channelCode,
        merchantId: req.merchantId,
        profitSharingAmount: req.profitSharingAmount,
      };
      if (state.phase === 'open') {
        await this.payment.applyQueued();
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
        channelAccountId: req.channelAccountId ?? null,
        profitSharing: req.profitSharingAmount > 0,
      };
      const row = {
        tradeNo: state.tradeNo,
        appId: input.appId,
        merchantOrderNo: input.merchantOrderNo,
        merchantId: req.merchantId,
        subMerchantNo: req.subMerchantNo,
        channelAccountId: req.channelAccountId ?? null,
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
        ...(this.swept
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
        created = this.createsRecordItself
          ? await createAtChannelActivity({ channel: atChannel, order: row })
          : await this.paymentCalls.createChannelPayment(atChannel);
      } catch (err) {
        state.phase = 'failed';
        state.failure = failureOf(err, 'channel_timeout');
        throw appFailure(state.failure.code, state.failure.message);
      }
      if (!this.createsRecordItself) {
        await this.paymentCalls.recordOrderCreated({
          ...row,
          channelTradeNo: created.channelTradeNo,
          payCredential: created.payCredential,
        });
      }
      state.identity = identity;
      state.request = req;
      if (this.booked) state.book = openBook(req.amount, req.profitSharingAmount);
      state.payCredential = created.payCredential;
      state.expireAtMs = Date.now() + input.timings.expireAfterMs;
      state.phase = 'open';
      upsertSearchAttributes([
        { key: searchAttributes.TradeNo, value: state.tradeNo },
        { key: searchAttributes.BizStatus, value: 'pending' },
        ...(req.merchantId ? [{ key: searchAttributes.MerchantId, value: req.merchantId }] : []),
      ]);
      return { trade_no: state.tradeNo, pay_credential: created.payCredential, is_idempotent: false };
    });
  }

  /** closeOrder (SPEC §3.4): closed at the channel unless the buyer paid meanwhile. */
  close(): Promise<null> {
    const { state, input } = this;
    return this.exclusive(async () => {
      this.refuseIfEnded();
      if (state.phase !== 'open') throw appFailure('order_not_found', 'order not found');
      await this.payment.applyQueued();
      const decision = closeDecision(state.status);
      if (decision === 'closed') return null;
      if (decision !== 'close') throw appFailure(decision.code, decision.message);
      let st: PaymentState;
      try {
        st = await channelActivities.closeChannelPayment({
          channelCode: input.channelCode,
          tradeNo: state.tradeNo,
        });
      } catch (err) {
        const f = closeFailure(failureOf(err, 'channel_timeout'));
        throw appFailure(f.code, f.message);
      }
      if (st.status === 'paid') {
        await this.payment.applyChannelState(st);
        throw appFailure('order_already_paid', 'order already paid');
      }
      await this.payment.markClosed();
      return null;
    });
  }

  /** refundOrder (SPEC §3.5), as the run's version decides refunds (order-actor-refunds.ts). */
  refund(req: RefundRequest): Promise<RefundResult> {
    return this.refunds.refund(req);
  }
}
