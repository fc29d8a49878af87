/** Alipay's callbacks port: asynchronous notifications (form posts, RSA2), their events and the reply. */
import { ChannelError } from '../errors';
import { referenceOf } from '../ports';
import type { CallbackCheck, CallbackReply, CallbackRequest, CallbacksPort, ChannelEvent } from '../ports';
import type { AlipayClient } from './client';
import { notifyParamsOf, notifySays, refundEventOf, unconfirmedRefundEventOf } from './transformers';

export function alipayCallbacks(client: AlipayClient): CallbacksPort {
  const port: CallbacksPort = {
    // A notification is a form of a few dozen short fields (fund_bill_list included): a few KiB.
    maxBodyBytes: 64 * 1024,
    verify: (req: CallbackRequest): Promise<CallbackCheck> => Promise.resolve(verifyNotify(client, req)),
    decode: async (req: CallbackRequest): Promise<ChannelEvent> => {
      const params = notifyParamsOf(req.rawBody);
      if (params.app_id !== client.options.appId) {
        throw new ChannelError(
          'invalid_response',
          `notification for app_id ${params.app_id ?? ''}, not this app`,
        );
      }
      if (client.options.sellerId && params.seller_id && params.seller_id !== client.options.sellerId) {
        throw new ChannelError(
          'invalid_response',
          `notification for seller_id ${params.seller_id}, not this account`,
        );
      }
      const says = notifySays(params);
      // A refund's notification names the trade's total refunded: `confirm` asks for the refund.
      return says.kind === 'event' ? says.event : unconfirmedRefundEventOf(says);
    },
    identify: referenceOf,
    /**
     * A refund's own amount and state, asked of Alipay in the order's context: a merchant that
     * authorised durapay's app has its trades under its app_auth_token, and a query without it
     * finds no trade (ACQ.TRADE_NOT_EXIST). A payment's notification is whole already.
     */
    confirm: async (ctx, event) => {
      if (event.kind !== 'refund') return event;
      const answer = await client.call('query refund', 'alipay.trade.fastpay.refund.query', {
        bizContent: {
          out_trade_no: event.tradeNo,
          out_request_no: event.refundNo,
          query_options: ['gmt_refund_pay'],
        },
        ...client.authOf(ctx),
      });
      if (answer === undefined)
        throw new ChannelError('invalid_response', `Alipay has no trade ${event.tradeNo}`);
      return refundEventOf(event, answer);
    },
    // Alipay sends a notification again until the answer is exactly `success`.
    reply: (outcome): CallbackReply => ({
      status: 200,
      contentType: 'text/plain',
      body: outcome.ok ? 'success' : 'fail',
    }),
  };
  return port;
}

/** Is a notification Alipay's? RSA2 over its sorted fields, by the SDK, on the decoded values. */
export function verifyNotify(client: AlipayClient, req: CallbackRequest): CallbackCheck {
  let params: Record<string, string>;
  try {
    params = notifyParamsOf(req.rawBody);
  } catch {
    return { ok: false, reason: 'the notification is not a form' };
  }
  if (!params.sign) return { ok: false, reason: 'the notification has no sign' };
  // RSA2 only: RSA (SHA-1) is not accepted, and an unknown type would make the SDK throw.
  if (params.sign_type !== undefined && params.sign_type !== 'RSA2') {
    return { ok: false, reason: `sign_type ${params.sign_type} is not RSA2` };
  }
  // Values arrive form-decoded; checkNotifySignV2 signs them as they are (no second decoding).
  return client.sdk.checkNotifySignV2(params)
    ? { ok: true }
    : { ok: false, reason: 'the notification sign does not match' };
}
