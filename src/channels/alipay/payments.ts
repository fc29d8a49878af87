/** Alipay's payments port: page, wap, app and QR payments, their query and close. */
import { qrImage } from '../../platform/qr';
import { ChannelError } from '../errors';
import type { PaymentState, PaymentsPort } from '../ports';
import type { AlipayClient } from './client';
import { beijingTime, CREATE_METHOD, paymentStateOf, toWireCreate } from './transformers';

export function alipayPayments(client: AlipayClient): PaymentsPort {
  const port: PaymentsPort = {
    create: async (ctx, input) => {
      const method = CREATE_METHOD[input.payMethod];
      if (!method) throw new ChannelError('not_supported', `Alipay does not support ${input.payMethod}`);
      const bizContent = toWireCreate(input, client.smidOf(ctx));
      const params = { bizContent, notify_url: input.callbackUrl, ...client.authOf(ctx) };
      switch (input.payMethod) {
        case 'qr_code': {
          const answer = await client.call('precreate trade', method, params);
          const qrCode = client.field(answer, 'qr_code', 'precreate');
          return {
            channelTradeNo: null,
            payCredential: { qr_code: qrCode, qr_image: await qrImage(qrCode) },
          };
        }
        case 'web':
        case 'h5': {
          // A signed URL to Alipay's cashier: the trade exists at Alipay once the buyer opens it.
          const payUrl = client.sdk.pageExecute(method, 'GET', {
            bizContent,
            notify_url: input.callbackUrl,
            timestamp: beijingTime(new Date()),
            ...client.authOf(ctx),
            ...returnUrl(input.extra),
          });
          return { channelTradeNo: null, payCredential: { pay_url: payUrl } };
        }
        case 'app': {
          // The signed order string the merchant's app hands to the Alipay SDK on the phone.
          const orderString = client.sdk.sdkExecute(method, {
            bizContent,
            notify_url: input.callbackUrl,
            timestamp: beijingTime(new Date()),
            ...client.authOf(ctx),
          });
          return { channelTradeNo: null, payCredential: { order_string: orderString } };
        }
        default: {
          const answer = await client.call('create trade', method, params);
          const tradeNo = client.field(answer, 'trade_no', 'trade create');
          // my.tradePay({ tradeNO }) in the Alipay app or mini program pays it.
          return { channelTradeNo: tradeNo, payCredential: { trade_no: tradeNo } };
        }
      }
    },
    query: async (ctx, tradeNo) => {
      const answer = await client.call('query trade', 'alipay.trade.query', {
        bizContent: { out_trade_no: tradeNo },
        ...client.authOf(ctx),
      });
      return answer === undefined ? { status: 'not_found' } : paymentStateOf(answer);
    },
    close: async (ctx, tradeNo): Promise<PaymentState> => {
      try {
        await client.call('close trade', 'alipay.trade.close', {
          bizContent: { out_trade_no: tradeNo },
          ...client.authOf(ctx),
        });
      } catch (err) {
        // Paid first: the query below has the payment.
        if (!(err instanceof ChannelError && err.message.startsWith('ACQ.TRADE_STATUS_ERROR'))) throw err;
      }
      const state = await port.query(ctx, tradeNo);
      // A trade still waiting after the close was opened by the buyer meanwhile: not closed yet.
      if (state.status === 'pending') {
        throw new ChannelError(
          'unreachable',
          `Alipay still has trade ${tradeNo} waiting for payment after the close`,
        );
      }
      // No trade: a code nobody scanned or a page nobody opened. Alipay cannot close what it does
      // not have; a buyer who opens it before time_expire still pays, and that payment's
      // notification is recorded as paid after close, flagged for refund review.
      return state.status === 'not_found' ? { status: 'closed' } : state;
    },
  };
  return port;
}

/** Where the buyer returns after a page or wap payment, when the order's extra names it. */
function returnUrl(extra: Record<string, unknown> | undefined): { return_url?: string } {
  const url = extra && Object.hasOwn(extra, 'return_url') ? extra.return_url : undefined;
  return typeof url === 'string' && url !== '' ? { return_url: url } : {};
}
