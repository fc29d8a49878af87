/** WeChat Pay's payments port: partner create (JSAPI, APP, H5, Native), query and close. */
import { Formatter } from 'wechatpay-axios-plugin';
import { qrImage } from '../../platform/qr';
import { ChannelError } from '../errors';
import type { PaymentState, PaymentsPort } from '../ports';
import type { WechatpayClient } from './client';
import { appPayParams, jsapiPayParams } from './signature';
import { CREATE_KIND, parseCreated, parseTransaction, paymentStateOf, toWireCreate } from './transformers';

export function wechatpayPayments(client: WechatpayClient): PaymentsPort {
  const port: PaymentsPort = {
    create: async (ctx, input) => {
      const kind = CREATE_KIND[input.payMethod];
      if (!kind) throw new ChannelError('not_supported', `WeChat Pay does not support ${input.payMethod}`);
      const body = toWireCreate(client.account, client.subMchid(ctx), input);
      const created = parseCreated(
        await client.call('create order', 'POST', `v3/pay/partner/transactions/${kind}`, body),
      );
      // The app the buyer's openid belongs to signs the JSAPI call; an app payment is the sub-merchant's app when it has one.
      const appId =
        'payer' in body && body.payer && 'sp_openid' in body.payer
          ? body.sp_appid
          : (body.sub_appid ?? body.sp_appid);
      const signing = { timeStamp: String(Formatter.timestamp()), nonceStr: Formatter.nonce() };
      switch (kind) {
        case 'native': {
          const codeUrl = client.field(created.code_url, 'code_url');
          return {
            channelTradeNo: null,
            payCredential: { code_url: codeUrl, qr_image: await qrImage(codeUrl) },
          };
        }
        case 'h5':
          return { channelTradeNo: null, payCredential: { h5_url: client.field(created.h5_url, 'h5_url') } };
        case 'jsapi': {
          const prepayId = client.field(created.prepay_id, 'prepay_id');
          return {
            channelTradeNo: null,
            payCredential: { ...jsapiPayParams({ appId, prepayId, ...signing }, client.merchantKey) },
          };
        }
        case 'app': {
          const prepayId = client.field(created.prepay_id, 'prepay_id');
          const params = appPayParams(
            { appId, partnerId: client.options.spMchid, prepayId, ...signing },
            client.merchantKey,
          );
          return { channelTradeNo: null, payCredential: { ...params } };
        }
      }
    },
    query: async (ctx, tradeNo) => {
      const answer = await client.call(
        'query order',
        'GET',
        `v3/pay/partner/transactions/out-trade-no/${encodeURIComponent(tradeNo)}`,
        undefined,
        {
          params: { sp_mchid: client.options.spMchid, sub_mchid: client.subMchid(ctx) },
          notFoundCode: 'ORDER_NOT_EXIST',
        },
      );
      return answer === undefined ? { status: 'not_found' } : paymentStateOf(parseTransaction(answer));
    },
    close: async (ctx, tradeNo): Promise<PaymentState> => {
      try {
        await client.call(
          'close order',
          'POST',
          `v3/pay/partner/transactions/out-trade-no/${encodeURIComponent(tradeNo)}/close`,
          { sp_mchid: client.options.spMchid, sub_mchid: client.subMchid(ctx) },
        );
      } catch (err) {
        // Paid first (ORDERPAID) or closed already (ORDER_CLOSED, a retried close): the query
        // below says which, with the payment when there is one.
        if (!(err instanceof ChannelError && /^(ORDERPAID|ORDER_CLOSED):/.test(err.message))) throw err;
      }
      // A 204 is not proof: a payment that landed just before the close shows in the query.
      const state = await port.query(ctx, tradeNo);
      return state.status === 'pending' ? { status: 'closed' } : state;
    },
  };
  return port;
}
