/**
 * WeChat Pay's barcode payments (付款码, SPEC §14) as a service provider: codepay
 * (`POST /v3/pay/partner/transactions/codepay`) and its reverse (撤销,
 * `POST /v3/pay/partner/transactions/out-trade-no/{out_trade_no}/reverse`), which closes an
 * unpaid payment and gives back a paid one.
 *
 * codepay takes no notify_url: WeChat Pay answers at once (SUCCESS), or 202 USERPAYING while the
 * buyer enters a password, and the order's workflow follows it by query. Every other 4xx is a
 * code refused (wrong or used code, not enough balance, the buyer's limit), with WeChat Pay's
 * own words; a 5xx, a lost connection or an answer that fails verification leaves the payment
 * unknown, and it is reversed.
 */
import { ChannelError } from '../errors';
import type { BarcodePort, ChannelContext, PaymentsPort, ReverseAnswer } from '../ports';
import type { WechatpayClient } from './client';
import { barcodeAnswerOf, toWireCodepay } from './transformers';

export function wechatpayBarcode(client: WechatpayClient, payments: PaymentsPort): BarcodePort {
  /**
   * A reverse WeChat Pay refused: whether it holds the payment decides what that means. Paid:
   * the payment stands (ChannelError 'refused'; the order is paid). Closed or never seen:
   * nothing was kept, as reversed. Still open, or the query not answered: asked again.
   */
  async function afterRefusal(
    ctx: ChannelContext,
    tradeNo: string,
    refusal: ChannelError,
  ): Promise<ReverseAnswer> {
    let state;
    try {
      state = await payments.query(ctx, tradeNo);
    } catch (err) {
      // Not answered, or refused too: nothing says WeChat Pay holds the payment. Asked again.
      if (!(err instanceof ChannelError)) throw err;
      throw new ChannelError(
        'unreachable',
        `WeChat Pay refused the reverse of ${tradeNo} (${refusal.message}) and its query did not say where it stands: ${err.message}`,
      );
    }
    if (state.status === 'paid') throw refusal;
    if (state.status === 'not_found') return { status: 'reversed', refunded: false, unseen: true };
    if (state.status === 'closed') return { status: 'reversed', refunded: false };
    throw new ChannelError(
      'unreachable',
      `WeChat Pay would not reverse the open payment ${tradeNo}: ${refusal.message}`,
    );
  }

  return {
    pay: async (ctx, input) => {
      const body = toWireCodepay(client.account, client.subMchid(ctx), input);
      try {
        return barcodeAnswerOf(
          await client.call('take a code payment', 'POST', 'v3/pay/partner/transactions/codepay', body),
        );
      } catch (err) {
        // WeChat Pay's words reach the till and the logs: never a run of digits that could be the code.
        if (err instanceof ChannelError) throw new ChannelError(err.kind, withoutLongNumbers(err.message));
        throw err;
      }
    },
    reverse: async (ctx, tradeNo) => {
      try {
        const answer = await client.call(
          'reverse a code payment',
          'POST',
          `v3/pay/partner/transactions/out-trade-no/${encodeURIComponent(tradeNo)}/reverse`,
          {
            sp_appid: client.account.spAppid,
            sp_mchid: client.account.spMchid,
            sub_mchid: client.subMchid(ctx),
          },
          { notFoundCode: 'ORDER_NOT_EXIST' },
        );
        // WeChat Pay never heard of the payment: nothing was taken, nothing to give back.
        // (yet: the workflow asks again while the payment's request may still be on its way).
        if (answer === undefined) return { status: 'reversed', refunded: false, unseen: true };
        // Its answer does not say whether the buyer had been charged; either way nothing is kept.
        return { status: 'reversed' };
      } catch (err) {
        if (err instanceof ChannelError && err.kind === 'refused') return afterRefusal(ctx, tradeNo, err);
        throw err;
      }
    },
  };
}

/** A message with every run of ten or more digits cut to its ends (a buyer's code is 18). */
function withoutLongNumbers(text: string): string {
  return text.replace(/\d{10,}/g, (digits) => `${digits.slice(0, 2)}…${digits.slice(-2)}`);
}
