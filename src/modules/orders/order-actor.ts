// Longer than 400 lines: the order's single writer, its state, its lock, its saved state and the
// create and close it decides itself; what else it decides is in its parts beside it
// (order-actor-payment, -refunds, -sharing, -barcode, -checkout, -phases).
/**
 * The order's actor (SPEC §3, §7): its single writer. It owns the order's state and decides;
 * create, payment results, close and refunds pass through it one at a time: each public method
 * that changes the order takes the lock itself, and those named `…InLock` are called by a step
 * that holds it. The database is written only from here, through activities. Its payment and
 * expiry (order-actor-payment.ts), refunds (order-actor-refunds.ts), profit share
 * (order-actor-sharing.ts) and phases (order-actor-phases.ts: what each waits for, when the run
 * ends, saves its state or continues as new) are its parts; the money arithmetic is
 * refund-book.ts; workflow.ts only wires the handlers and calls the phases in turn.
 *
 * Replay: each method keeps the `await`s of the code that recorded 1.0's histories
 * (test/fixtures/histories); a change that alters the commands a run makes is asked with
 * `patched()` (docs/operations.md, "Retiring a workflow version").
 */
import { ApplicationFailure, log, patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { PaymentState } from '../../channels/ports';
import type { ErrorCode } from '../../platform/errors';
import { handlerLock, type HandlerLock } from '../../platform/workflow/lock';
import { searchAttributes } from '../../platform/workflow/definitions';
import {
  appFailure,
  closeDecision,
  closeFailure,
  failureOf,
  repeatCreateRefusal,
  CHECKOUT_PAY_METHOD,
  type CreateIdentity,
  type OrderStatus,
} from './rules';
import { openBook, refundedOf, type PlannedReturn, type RefundBook } from './refund-book';
import {
  ORDER_RUN_ENDED,
  expireAtOf,
  orderRowOf,
  patches,
  type ChooseChannelRequest,
  type CreateOrderRequest,
  type CreateOrderResult,
  type OrderInput,
  type PaymentSignal,
  type RefundRequest,
  type RefundResult,
  type RefundSettledSignal,
} from './messages';
import { channelActivities, createAtChannelActivity, savedStateActivities } from './order-calls';
import { OrderPayment } from './order-actor-payment';
import { OrderRefunds } from './order-actor-refunds';
import { OrderSharing } from './order-actor-sharing';
import { OrderPhases } from './order-actor-phases';
import { OrderBarcode, type BarcodeFollow } from './order-actor-barcode';
import { OrderCheckout, type CheckoutChannel, type CheckoutChannelTried } from './order-actor-checkout';

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
  /** A barcode order's payment being decided (SPEC §14, order-actor-barcode.ts). */
  barcode?: BarcodeFollow;
  /**
   * A `checkout` order's channel once its buyer picked one on the hosted page (SPEC §15,
   * order-actor-checkout.ts); absent before, and in every other order.
   */
  channel?: CheckoutChannel;
  /** A `checkout` order's pick the channel did not answer: only the same one is asked again. */
  channelTried?: CheckoutChannelTried;
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
  /** Whether an operator asked this run to continue as new (moveOnSignal). */
  moveOnAsked = false;
  /**
   * One handler or main-loop step at a time, in arrival order: concurrent creates, closes and
   * refunds are serialized here.
   */
  readonly lock: HandlerLock = handlerLock();
  readonly payment: OrderPayment;
  readonly refunds: OrderRefunds;
  readonly sharing: OrderSharing;
  readonly phases: OrderPhases;
  readonly barcode: OrderBarcode;
  readonly checkout: OrderCheckout;
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
    // Every run of 1.0 holds the baseline; one that lacks it was started by a build before 1.0,
    // whose commands this code does not make (CHANGELOG, 1.0.0: drain such runs first). Its
    // workflow task fails with this message, for an operator, instead of a determinism error.
    if (!patched(patches.orderBaseline)) {
      throw new Error(
        'this order run was started by a durapay build before 1.0: finish it on that build (CHANGELOG, 1.0.0)',
      );
    }
    this.state = carried ?? {
      phase: 'new',
      tradeNo: input.tradeNo,
      status: 'pending',
      expireAtMs: 0,
      pollIndex: 0,
      paidNotified: false,
      profitShareAtMs: null,
      refunds: {},
      refundsByMerchantNo: {},
    };
    this.payment = new OrderPayment(this);
    this.refunds = new OrderRefunds(this);
    this.sharing = new OrderSharing(this);
    this.phases = new OrderPhases(this);
    this.barcode = new OrderBarcode(this);
    this.checkout = new OrderCheckout(this);
    // Taken before any handler is set, so every request waits for the state behind it. A run
    // that continued as new carries its state: the saved one may be older.
    if (input.resume && !carried) this.restored = this.exclusive(() => this.restore());
  }

  /**
   * The order's channel: its input's, or a `checkout` order's once its buyer picked one (empty
   * before: such an order closes without asking any channel).
   */
  get channelCode(): string {
    return this.state.channel?.code ?? this.input.channelCode;
  }

  /** Where the order's channel posts callbacks: its input's, or a `checkout` order's channel's. */
  get callbackUrl(): string {
    return this.state.channel?.callbackUrl ?? this.input.callbackUrl;
  }

  /** Whether the order is a `checkout` one whose buyer has not picked a channel yet. */
  get awaitsChannel(): boolean {
    return this.channelCode === '';
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
   * refused it for good (logged): the run then does not end idle. It takes no lock: it changes
   * nothing of the order, only this run's note of what it saved, and takes its copy of the state
   * before its first `await`.
   */
  async saveState(): Promise<boolean> {
    const json = JSON.stringify(this.state);
    const info = workflowInfo();
    try {
      await savedStateActivities.save({
        tradeNo: this.state.tradeNo,
        state: this.state,
        status: this.state.status,
        refundedAmount: refundedOf(this.state.book!),
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

  /** Runs `fn` under the order's lock. */
  readonly exclusive = <T>(fn: () => Promise<T>): Promise<T> => this.lock.runExclusive(fn);

  /** Sets the order's status and its search attribute. Call under the lock. */
  setStatusInLock(status: OrderStatus): void {
    this.state.status = status;
    upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: status }]);
  }

  /**
   * A read-model write whose failure must not leave the order's money where it is: the write
   * is tried (the dbWrite profile retries a database that does not answer), and one the
   * database refuses for good is logged for an operator while the order goes on.
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

  /** An operator asked the run to continue as new (moveOnSignal): the paid phase does, when quiet. */
  receiveMoveOn(): void {
    this.moveOnAsked = true;
  }

  // ---- Update handlers. ----

  /** createOrder (SPEC §3.1): the first create makes the order; a repeat answers it. */
  create(req: CreateOrderRequest): Promise<CreateOrderResult> {
    // A barcode order (SPEC §14): its channel takes the payment at once, or the order reverses it.
    if (req.barcode) return this.barcode.create(req);
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
        await this.payment.applyQueuedInLock();
        const refusal = repeatCreateRefusal({ identity: state.identity!, status: state.status }, identity);
        if (refusal) throw appFailure(refusal.code, refusal.message);
        return { trade_no: state.tradeNo, pay_credential: state.payCredential!, is_idempotent: true };
      }

      const expireAt = expireAtOf(input, req.expireMinutes);
      // No channel yet (SPEC §15): the order's row, and its hosted page as its credential.
      if (req.payMethod === CHECKOUT_PAY_METHOD) return this.checkout.createInLock(req, identity, expireAt);
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
        ...orderRowOf(input, state.tradeNo, req, expireAt),
        // The payment sweeper (sweeper.ts) polls the channel for it on this backoff until expiry.
        poll: {
          gapsMs: input.timings.pollGapsMs,
          until: new Date(Date.now() + input.timings.expireAfterMs).toISOString(),
        },
      };
      let created;
      try {
        // One local activity makes the order at the channel and records it; a repeat of it
        // answers from the row.
        created = await createAtChannelActivity({ channel: atChannel, order: row });
      } catch (err) {
        state.phase = 'failed';
        state.failure = failureOf(err, 'channel_timeout');
        throw appFailure(state.failure.code, state.failure.message);
      }
      this.openInLock(req, identity, created.payCredential);
      return { trade_no: state.tradeNo, pay_credential: created.payCredential, is_idempotent: false };
    });
  }

  /** The order made: its state open, pending until expiry. Call under the lock. */
  openInLock(
    req: CreateOrderRequest,
    identity: CreateIdentity,
    payCredential: Record<string, unknown>,
  ): void {
    const { state, input } = this;
    state.identity = identity;
    state.request = req;
    state.book = openBook(req.amount, req.profitSharingAmount);
    state.payCredential = payCredential;
    state.expireAtMs = Date.now() + input.timings.expireAfterMs;
    state.phase = 'open';
    upsertSearchAttributes([
      { key: searchAttributes.TradeNo, value: state.tradeNo },
      { key: searchAttributes.BizStatus, value: 'pending' },
      ...(req.merchantId ? [{ key: searchAttributes.MerchantId, value: req.merchantId }] : []),
    ]);
  }

  /** chooseChannel (SPEC §15): a `checkout` order's buyer picked a channel (order-actor-checkout.ts). */
  chooseChannel(req: ChooseChannelRequest): Promise<CreateOrderResult> {
    return this.checkout.choose(req);
  }

  /** closeOrder (SPEC §3.4): closed at the channel unless the buyer paid meanwhile. */
  close(): Promise<null> {
    // A barcode order is reversed, not closed (SPEC §14).
    if (this.state.barcode) return this.barcode.close();
    const { state } = this;
    return this.exclusive(async () => {
      this.refuseIfEnded();
      if (state.phase !== 'open') throw appFailure('order_not_found', 'order not found');
      await this.payment.applyQueuedInLock();
      const decision = closeDecision(state.status);
      if (decision === 'closed') return null;
      if (decision !== 'close') throw appFailure(decision.code, decision.message);
      // A checkout order no buyer took to a channel: nothing to close there.
      if (this.awaitsChannel) {
        await this.payment.markClosedInLock();
        return null;
      }
      let st: PaymentState;
      try {
        st = await channelActivities.closeChannelPayment({
          channelCode: this.channelCode,
          tradeNo: state.tradeNo,
        });
      } catch (err) {
        const f = closeFailure(failureOf(err, 'channel_timeout'));
        throw appFailure(f.code, f.message);
      }
      if (st.status === 'paid') {
        await this.payment.applyChannelStateInLock(st);
        throw appFailure('order_already_paid', 'order already paid');
      }
      await this.payment.markClosedInLock();
      return null;
    });
  }

  /** refundOrder (SPEC §3.5), decided against the refund book (order-actor-refunds.ts). */
  refund(req: RefundRequest): Promise<RefundResult> {
    return this.refunds.refund(req);
  }
}
