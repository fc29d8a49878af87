/**
 * The order actor's barcode payment (SPEC §14): the cashier scanned the buyer's code, the
 * channel is asked once, and the order follows what it answered: paid; refused (closed, reason
 * `refused`); the buyer confirming (queried on a short backoff until the wait ends); or no
 * answer. A payment not paid when the wait ends, one whose answer was lost, and one a merchant
 * closes is **reversed**, asked until the channel answers: the channel gives back whatever it
 * took, and the order ends closed (reason `reversed`), never announced paid. A reverse the
 * channel refuses leaves a payment it holds: the order is paid. So money the channel keeps ⇔ the
 * order `paid`, whatever arrives in between: once the reverse is decided, payments the channel
 * reports wait for its answer instead of making the order paid.
 *
 * Replay: every branch here is taken only by an order whose state has `barcode`, which no run
 * before barcode payments has; the other orders' commands are unchanged.
 */
import { condition, log, upsertSearchAttributes } from '@temporalio/workflow';
import { searchAttributes } from '../../platform/workflow/definitions';
import {
  appFailure,
  barcodeClosed,
  barcodeRepeat,
  closeDecision,
  failureOf,
  isPaidStatus,
  pollGap,
  type BarcodeStatus,
  type CloseReason,
  type CreateIdentity,
} from './rules';
import { openBook } from './refund-book';
import { orderRowOf, type BarcodeTimings, type CreateOrderRequest, type CreateOrderResult } from './messages';
import type { BarcodeOutcome, ReverseOutcome } from './activities';
import { barcodeActivities, closeActivities } from './order-calls';
import type { OrderActor } from './order-actor';

/** How a barcode order is being decided (SPEC §14): in the order's state, absent for every other order. */
export interface BarcodeFollow {
  /** When the wait for the buyer ends: the payment is reversed unless paid by then. */
  untilMs: number;
  /** Queries made while the buyer confirms (their backoff's place). */
  queries: number;
  /** The payment is to be reversed: its answer was lost, the wait ended, or a merchant closed it. */
  reverse: boolean;
  /** Asks of the reverse made (their backoff's place). */
  reverseAsks: number;
  /** When the payment was asked of the channel (absent in runs started before it was kept). */
  askedAtMs?: number;
  /** Why it closed, with the channel's words for a refused code. */
  closeReason?: CloseReason;
  refusal?: string;
}

export class OrderBarcode {
  constructor(private readonly order: OrderActor) {}

  private get timings(): BarcodeTimings {
    return this.order.input.timings.barcode!;
  }

  /**
   * createOrder of a barcode order: the first asks the channel (once) and answers `paid` or
   * `paying`, or `422 order_not_paid` for a code refused; a payment whose answer was lost is
   * `502 channel_timeout`, answered only once its reverse has been asked. A repeat with the same
   * code answers where the order stands; with another code it is refused, never charged.
   */
  async create(req: CreateOrderRequest): Promise<CreateOrderResult> {
    const { order } = this;
    const { state, input } = order;
    const code = req.barcode!;
    const identity: CreateIdentity = {
      amount: req.amount,
      payMethod: req.payMethod,
      channelCode: input.channelCode,
      merchantId: req.merchantId,
      profitSharingAmount: req.profitSharingAmount,
      authCodeSha256: code.authCodeSha256,
    };
    const answered = await order.exclusive(
      async (): Promise<{ status: BarcodeStatus | 'unknown'; repeat: boolean }> => {
        order.refuseIfEnded();
        if (state.phase === 'failed') throw appFailure(state.failure!.code, state.failure!.message);
        if (state.phase === 'open') {
          const follow = state.barcode;
          const answer = barcodeRepeat(
            {
              identity: state.identity!,
              status: state.status,
              closeReason: follow?.closeReason ?? null,
              refusal: follow?.refusal,
            },
            identity,
          );
          if (typeof answer !== 'string') throw appFailure(answer.code, answer.message);
          return { status: answer, repeat: true };
        }

        const now = Date.now();
        const expireAt = new Date(Date.parse(input.createdAt) + this.timings.waitMs).toISOString();
        let outcome: BarcodeOutcome;
        try {
          outcome = await barcodeActivities.pay({
            channel: {
              channelCode: input.channelCode,
              tradeNo: state.tradeNo,
              amount: req.amount,
              currency: input.currency,
              subject: req.subject,
              // A contract's deduction has no buyer's code: it is taken under the contract.
              authCode: code.authCode ?? '',
              ...(code.contract ? { contract: code.contract } : {}),
              deviceId: code.deviceId,
              storeId: code.storeId,
              callbackUrl: input.callbackUrl,
              subMerchantNo: req.subMerchantNo,
              channelAccountId: req.channelAccountId ?? null,
              profitSharing: req.profitSharingAmount > 0,
            },
            order: {
              ...orderRowOf(input, state.tradeNo, req, expireAt),
              barcode: {
                authCodeSha256: code.authCodeSha256,
                deviceId: code.deviceId,
                storeId: code.storeId,
              },
            },
          });
        } catch (err) {
          // The activity itself failed (its deadline, the database): whether the channel was
          // asked is not known, so the payment is reversed.
          outcome = { outcome: 'unknown', message: failureOf(err, 'channel_timeout').message };
        }
        state.identity = identity;
        // The buyer's code is a one-payment credential: the order's state keeps its hash only.
        state.request = { ...req, barcode: { ...code, authCode: undefined } };
        state.book = openBook(req.amount, req.profitSharingAmount);
        state.payCredential = {};
        state.expireAtMs = now + this.timings.waitMs;
        state.barcode = {
          untilMs: now + this.timings.waitMs,
          queries: 0,
          reverse: false,
          reverseAsks: 0,
          askedAtMs: now,
        };
        state.phase = 'open';
        upsertSearchAttributes([
          { key: searchAttributes.TradeNo, value: state.tradeNo },
          { key: searchAttributes.BizStatus, value: 'pending' },
          ...(req.merchantId ? [{ key: searchAttributes.MerchantId, value: req.merchantId }] : []),
        ]);
        switch (outcome.outcome) {
          case 'paid':
            await order.payment.markPaidInLock({
              channelTradeNo: outcome.channelTradeNo,
              paidAt: outcome.paidAt,
            });
            return { status: 'paid', repeat: false };
          case 'paying':
            return { status: 'paying', repeat: false };
          case 'refused': {
            state.barcode.closeReason = 'refused';
            state.barcode.refusal = outcome.message;
            await order.payment.markClosedInLock(closeActivities.merchant, 'refused');
            const refusal = barcodeClosed('refused', outcome.message, code.contract !== undefined);
            throw appFailure(refusal.code, refusal.message);
          }
          case 'unknown':
            log.warn('a barcode payment got no answer; it is reversed', { trade_no: state.tradeNo });
            state.barcode.reverse = true;
            return { status: 'unknown', repeat: false };
        }
      },
    );
    if (answered.status === 'unknown') {
      // Answered once the reverse has been asked (the follow takes it at once), so that a till
      // told "no answer" leaves behind a payment that is already being given back.
      await condition(
        () => state.status !== 'pending' || state.barcode!.reverseAsks > 0,
        this.timings.answerMs,
      );
      if (isPaidStatus(state.status)) return this.result('paid', false);
      throw appFailure(
        'channel_timeout',
        'the channel did not answer the barcode payment: it is being reversed, and whatever the buyer was charged is given back',
      );
    }
    return this.result(answered.status, answered.repeat);
  }

  private result(status: BarcodeStatus, repeat: boolean): CreateOrderResult {
    return { trade_no: this.order.state.tradeNo, pay_credential: {}, is_idempotent: repeat, status };
  }

  /**
   * closeOrder of a barcode order (SPEC §14): reversed, as the follow reverses it; answered when
   * the channel has (closed, or `order_already_paid` when it would not give back a payment it
   * holds), or `502 channel_timeout` while the reverse is still being asked.
   */
  async close(): Promise<null> {
    const { order } = this;
    const { state } = order;
    const done = await order.exclusive(async () => {
      order.refuseIfEnded();
      if (state.phase !== 'open') throw appFailure('order_not_found', 'order not found');
      const decision = closeDecision(state.status);
      if (decision === 'closed') return true;
      if (decision !== 'close') throw appFailure(decision.code, decision.message);
      state.barcode!.reverse = true;
      return false;
    });
    if (done) return null;
    await condition(() => state.status !== 'pending', this.timings.answerMs);
    if (state.status === 'closed') return null;
    if (isPaidStatus(state.status)) throw appFailure('order_already_paid', 'order already paid');
    throw appFailure(
      'channel_timeout',
      'the channel has not answered the reverse yet: it is asked again until it does',
    );
  }

  /** Whether payments the channel reports must wait for the reverse's answer. */
  isReversing(): boolean {
    return this.order.state.barcode?.reverse === true;
  }

  /**
   * The order's pending phase: the buyer confirming is queried on the backoff until the wait
   * ends, then reversed; a reverse not answered is asked again until it is.
   */
  async follow(): Promise<void> {
    const { order } = this;
    const { state, input, payments } = order;
    const follow = state.barcode!;
    const target = { channelCode: input.channelCode, tradeNo: state.tradeNo };
    while (state.status === 'pending') {
      if (follow.reverse) {
        if (await order.exclusive(() => this.reverseInLock())) continue;
        await condition(
          () => state.status !== 'pending',
          pollGap(this.timings.reverseGapsMs, follow.reverseAsks - 1),
        );
        continue;
      }
      if (payments.length > 0) {
        const p = payments.shift()!;
        if (p.status === 'paid') await order.payment.apply(p);
        continue;
      }
      const woken = () => payments.length > 0 || follow.reverse || state.status !== 'pending';
      const gap = pollGap(this.timings.pollGapsMs, follow.queries);
      const wakeAt = Math.min(follow.untilMs, Date.now() + gap);
      if (await condition(woken, Math.max(1, wakeAt - Date.now()))) continue;
      follow.queries += 1;
      const st = await barcodeActivities.query(target).catch(() => null);
      if (st?.status === 'paid') {
        await order.payment.applyAnswer(st);
        continue;
      }
      if (Date.now() >= follow.untilMs) {
        await order.exclusive(async () => {
          if (state.status === 'pending') follow.reverse = true;
        });
      }
    }
  }

  /** One ask of the reverse. True when the channel answered it (the order is closed or paid). Under the lock. */
  private async reverseInLock(): Promise<boolean> {
    const { order } = this;
    const { state, input } = order;
    const follow = state.barcode!;
    if (state.status !== 'pending') return true;
    const target = { channelCode: input.channelCode, tradeNo: state.tradeNo };
    follow.reverseAsks += 1;
    const answer: ReverseOutcome = await barcodeActivities
      .reverse(state.request?.barcode?.contract ? { ...target, contract: true } : target)
      .catch((err: unknown) => ({ outcome: 'unknown', message: failureOf(err, 'channel_timeout').message }));
    const inFlightUntil = (follow.askedAtMs ?? 0) + (this.timings.inFlightMs ?? 0);
    if (answer.outcome === 'reversed' && answer.unseen && Date.now() < inFlightUntil) {
      // The channel has not seen the payment, and its request may still be on its way: a
      // reverse taken now would leave a payment landing later with a closed order.
      log.warn('the channel has not seen the barcode payment yet; its reverse is asked again', {
        trade_no: state.tradeNo,
        ask: follow.reverseAsks,
      });
      return false;
    }
    switch (answer.outcome) {
      case 'reversed':
        follow.closeReason = 'reversed';
        await order.payment.markClosedInLock(closeActivities.merchant, 'reversed');
        // Payments the channel reported meanwhile were given back by the reverse.
        order.payments.length = 0;
        return true;
      case 'refused': {
        // The channel holds the payment and will not give it back: the order is paid.
        log.warn('the channel refused to reverse a barcode payment it holds; the order is paid', {
          trade_no: state.tradeNo,
          reason: answer.message,
        });
        const st = await barcodeActivities.query(target).catch(() => null);
        await order.payment.markPaidInLock(
          st?.status === 'paid'
            ? { channelTradeNo: st.channelTradeNo, paidAt: new Date(st.paidAt).toISOString() }
            : { channelTradeNo: null, paidAt: null },
        );
        return true;
      }
      default:
        log.warn('a reverse got no answer; asked again', {
          trade_no: state.tradeNo,
          ask: follow.reverseAsks,
          reason: answer.message,
        });
        return false;
    }
  }
}
