/**
 * Alipay's barcode payments (当面付 条码支付, SPEC §14): `alipay.trade.pay` with `scene: bar_code`
 * and the buyer's code, and its reverse `alipay.trade.cancel`, which closes a trade not paid and
 * gives back a paid one.
 *
 * trade.pay answers 10000 when the buyer paid, 10003 while the buyer enters a password in the
 * wallet (the order's workflow follows it by query, and Alipay notifies the payment's
 * TRADE_SUCCESS to the notify_url sent), 40004 with Alipay's reason for a code it refused (wrong,
 * used or expired, not enough balance, the buyer's limits). A 20000, ACQ.SYSTEM_ERROR, a lost
 * connection or an answer that fails verification leaves the payment unknown: it is reversed.
 */
import { ChannelError } from '../errors';
import type {
  BarcodeAnswer,
  BarcodePaymentInput,
  BarcodePort,
  ChannelContext,
  ReverseAnswer,
} from '../ports';
import type { AlipayClient } from './client';
import {
  PAYING_CODE,
  barcodeAnswerOf,
  paymentStateOf,
  reverseAnswerOf,
  reverseStateOf,
  toWireBarcodePay,
} from './transformers';

export function alipayBarcode(client: AlipayClient): BarcodePort {
  const query = (ctx: ChannelContext, tradeNo: string) =>
    client.call('query trade', 'alipay.trade.query', {
      bizContent: { out_trade_no: tradeNo },
      ...client.authOf(ctx),
    });

  /**
   * trade.pay answered ACQ.TRADE_HAS_SUCCESS: the trade number was paid before. durapay sends one
   * trade.pay per trade number, so that payment is this one, whose first answer was lost on the
   * way (the SDK's HTTP client sends a request again once when its connection is cut). The trade
   * as Alipay's query shows it answers, when it holds a payment of the order's amount; anything
   * else leaves the payment unknown, and it is reversed.
   */
  async function alreadyPaid(ctx: ChannelContext, input: BarcodePaymentInput): Promise<BarcodeAnswer> {
    let answer;
    try {
      answer = await query(ctx, input.tradeNo);
    } catch (err) {
      // Not a refusal of the code: the payment stays unknown.
      if (!(err instanceof ChannelError)) throw err;
      throw new ChannelError(
        'unreachable',
        `Alipay says trade ${input.tradeNo} was paid before: ${err.message}`,
      );
    }
    const state = answer === undefined ? undefined : paymentStateOf(answer);
    if (
      state?.status !== 'paid' ||
      state.amount !== input.amount ||
      answer?.trade_status === 'TRADE_CLOSED'
    ) {
      throw new ChannelError(
        'invalid_response',
        `Alipay says trade ${input.tradeNo} was paid before, and its query does not show it paid for ${input.amount}`,
      );
    }
    return state;
  }

  /**
   * A cancel Alipay refused: whether Alipay holds the payment decides what the refusal means
   * (reverseStateOf). Its query not answered, nothing is decided: the cancel is asked again.
   */
  async function afterRefusal(
    ctx: ChannelContext,
    tradeNo: string,
    refusal: ChannelError,
  ): Promise<ReverseAnswer> {
    let answer;
    try {
      answer = await query(ctx, tradeNo);
    } catch (err) {
      if (!(err instanceof ChannelError)) throw err;
      throw new ChannelError(
        'unreachable',
        `Alipay refused the cancel of ${tradeNo} (${refusal.message}) and its query did not say where the trade stands: ${err.message}`,
      );
    }
    return reverseStateOf(answer, refusal);
  }

  return {
    pay: async (ctx, input) => {
      let answer;
      try {
        answer = await client.callAnswering(
          'pay by barcode',
          'alipay.trade.pay',
          {
            bizContent: toWireBarcodePay(input, client.smidOf(ctx)),
            notify_url: input.callbackUrl,
            ...client.authOf(ctx),
          },
          [PAYING_CODE],
        );
      } catch (err) {
        if (err instanceof ChannelError && err.message.startsWith('ACQ.TRADE_HAS_SUCCESS')) {
          return alreadyPaid(ctx, input);
        }
        throw err;
      }
      if (answer === undefined) {
        throw new ChannelError(
          'invalid_response',
          `Alipay answered the barcode payment ${input.tradeNo} with no trade`,
        );
      }
      return barcodeAnswerOf(answer);
    },

    reverse: async (ctx, tradeNo) => {
      let answer;
      try {
        answer = await client.call('cancel trade', 'alipay.trade.cancel', {
          bizContent: { out_trade_no: tradeNo },
          ...client.authOf(ctx),
        });
      } catch (err) {
        if (err instanceof ChannelError && err.kind === 'refused') return afterRefusal(ctx, tradeNo, err);
        throw err;
      }
      // Alipay never had the trade: nothing was taken, nothing to give back (yet: the workflow
      // asks again while the payment's request may still be on its way).
      if (answer === undefined) return { status: 'reversed', refunded: false, unseen: true };
      return reverseAnswerOf(answer, tradeNo);
    },
  };
}
