/**
 * The order actor's checkout (SPEC §15): a `pay_method: checkout` order is made with no channel,
 * its credential the hosted page; its buyer's pick there (the chooseChannel update) makes it at
 * that channel once, for that buyer. The same pick again answers the same credential; any other
 * is refused while it stands, and after a pick the channel did not answer only that pick is
 * asked again: one trade_no at two channels could be paid twice.
 *
 * Replay: every branch here is taken only by an order whose pay method is `checkout`, which no
 * run before checkout orders has; the other orders' commands are unchanged.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { searchAttributes } from '../../platform/workflow/definitions';
import { appFailure, CHECKOUT_PAY_METHOD, failureOf, isPaidStatus, type CreateIdentity } from './rules';
import {
  expireAtOf,
  orderRowOf,
  type ChooseChannelRequest,
  type CreateOrderRequest,
  type CreateOrderResult,
} from './messages';
import { checkoutActivities } from './order-calls';
import type { OrderActor } from './order-actor';

/** The channel a `checkout` order's buyer picked, in the order's state. */
export interface CheckoutChannel {
  code: string;
  payMethod: 'jsapi' | 'h5';
  payer?: string;
  /** Where the channel posts its callbacks (its refunds' too). */
  callbackUrl: string;
  payCredential: Record<string, unknown>;
}

/** A pick the channel did not answer: it may have made the order there. */
export interface CheckoutChannelTried {
  code: string;
  payMethod: 'jsapi' | 'h5';
}

export class OrderCheckout {
  constructor(private readonly order: OrderActor) {}

  /** The create of a `checkout` order: its row, with the hosted page as credential. Call under the lock. */
  async createInLock(
    req: CreateOrderRequest,
    identity: CreateIdentity,
    expireAt: string,
  ): Promise<CreateOrderResult> {
    const { state, input } = this.order;
    const payCredential = { checkout_url: req.checkoutUrl ?? '' };
    await checkoutActivities.record({
      order: { ...orderRowOf(input, state.tradeNo, req, expireAt), payCredential },
    });
    this.order.openInLock(req, identity, payCredential);
    return { trade_no: state.tradeNo, pay_credential: payCredential, is_idempotent: false };
  }

  /** chooseChannel: the buyer's pick, made at the channel once, under the order's lock. */
  choose(req: ChooseChannelRequest): Promise<CreateOrderResult> {
    const { state, input } = this.order;
    return this.order.exclusive(async () => {
      this.order.refuseIfEnded();
      if (state.phase !== 'open' || state.request?.payMethod !== CHECKOUT_PAY_METHOD) {
        throw appFailure('order_not_found', 'order not found');
      }
      await this.order.payment.applyQueuedInLock();
      if (isPaidStatus(state.status)) throw appFailure('order_already_paid', 'order already paid');
      if (state.status === 'closed' || state.expireAtMs <= Date.now()) {
        throw appFailure('order_closed', 'order closed');
      }
      const chosen = state.channel;
      if (chosen) {
        if (
          chosen.code === req.channelCode &&
          chosen.payMethod === req.payMethod &&
          chosen.payer === req.payer
        ) {
          return { trade_no: state.tradeNo, pay_credential: chosen.payCredential, is_idempotent: true };
        }
        throw appFailure('invalid_param', `the order is being paid at ${chosen.code} by ${chosen.payMethod}`);
      }
      const tried = state.channelTried;
      if (tried && (tried.code !== req.channelCode || tried.payMethod !== req.payMethod)) {
        throw appFailure('invalid_param', `the order is being paid at ${tried.code} by ${tried.payMethod}`);
      }
      const request = state.request;
      let created;
      try {
        created = await checkoutActivities.choose({
          channel: {
            channelCode: req.channelCode,
            tradeNo: state.tradeNo,
            amount: request.amount,
            currency: req.currency,
            payMethod: req.payMethod,
            subject: request.subject,
            expireAt: expireAtOf(input, request.expireMinutes),
            callbackUrl: req.callbackUrl,
            extra: { ...(request.extra ?? {}), ...req.extra },
            subMerchantNo: req.subMerchantNo,
            channelAccountId: req.channelAccountId,
            profitSharing: false,
          },
          bind: {
            subMerchantNo: req.subMerchantNo,
            channelAccountId: req.channelAccountId,
            extra: req.extra,
          },
          poll: {
            gapsMs: input.timings.pollGapsMs,
            until: new Date(state.expireAtMs).toISOString(),
          },
        });
      } catch (err) {
        // Refused, the order stays open for another pick; not answered, for the same one only.
        const failure = failureOf(err, 'channel_timeout');
        if (failure.code === 'channel_timeout')
          state.channelTried = { code: req.channelCode, payMethod: req.payMethod };
        throw appFailure(failure.code, failure.message);
      }
      state.channel = {
        code: req.channelCode,
        payMethod: req.payMethod,
        ...(req.payer === undefined ? {} : { payer: req.payer }),
        callbackUrl: req.callbackUrl,
        payCredential: created.payCredential,
      };
      upsertSearchAttributes([{ key: searchAttributes.ChannelCode, value: req.channelCode }]);
      return { trade_no: state.tradeNo, pay_credential: created.payCredential, is_idempotent: false };
    });
  }
}
