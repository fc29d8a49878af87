/** WeChat Pay's callbacks port: v3 notifications, their signature, their AES-GCM resource and the reply. */
import { ChannelError } from '../errors';
import { referenceOf } from '../ports';
import type { CallbackCheck, CallbackReply, CallbackRequest, CallbacksPort, ChannelEvent } from '../ports';
import type { WechatpayClient } from './client';
import { isV2Body } from './contracts';
import { decryptResource, MAX_CLOCK_SKEW_S, verifyWechatpaySignature } from './signature';
import { eventOf, parseNotification } from './transformers';

/**
 * `v2`: the port of v2 XML callbacks (a 委托代扣 deduction's outcome, contracts.ts), when the
 * account has 委托代扣; such a body is handed to it.
 */
export function wechatpayCallbacks(client: WechatpayClient, v2?: CallbacksPort): CallbacksPort {
  const port: CallbacksPort = {
    // A notification is a small JSON envelope around one encrypted resource: a few KiB at most.
    maxBodyBytes: 64 * 1024,
    verify: (req: CallbackRequest): Promise<CallbackCheck> => verifyCallback(client, req),
    decode: async (req: CallbackRequest): Promise<ChannelEvent> => {
      let body: unknown;
      try {
        body = JSON.parse(req.rawBody.toString('utf8'));
      } catch {
        throw new ChannelError('invalid_response', 'WeChat Pay notification is not JSON');
      }
      const notification = parseNotification(body);
      let plaintext: unknown;
      try {
        plaintext = JSON.parse(decryptResource(notification.resource, client.options.apiV3Key));
      } catch {
        throw new ChannelError(
          'invalid_response',
          'WeChat Pay notification resource does not decrypt with the APIv3 key',
        );
      }
      const { event, spMchid, subMchid } = eventOf(notification, plaintext);
      if (spMchid !== client.options.spMchid) {
        throw new ChannelError('invalid_response', `notification for sp_mchid ${spMchid}, not this account`);
      }
      // The order's merchant is compared with it by the callback route, which knows the order.
      return subMchid === undefined ? event : { ...event, subMerchantNo: subMchid };
    },
    identify: referenceOf,
    ...(v2 ? { forRequest: (req: CallbackRequest) => (isV2Body(req.rawBody) ? v2 : port) } : {}),
    // SPEC §4: 200 text/plain, the v3 acknowledgement on success and `fail` on any failure.
    // WeChat Pay takes any 200 as received, so a refused callback is not sent again: the
    // order's polling (§3.2, §3.5) is what finds a result whose callback was refused.
    reply: (outcome): CallbackReply => ({
      status: 200,
      contentType: 'text/plain',
      body: outcome.ok ? JSON.stringify({ code: 'SUCCESS', message: '成功' }) : 'fail',
    }),
  };
  return port;
}

/** A v3 notification's signature, checked as for payment callbacks (complaints' too). */
export async function verifyCallback(client: WechatpayClient, req: CallbackRequest): Promise<CallbackCheck> {
  const serial = header(req.headers, 'wechatpay-serial');
  const timestamp = header(req.headers, 'wechatpay-timestamp');
  const nonce = header(req.headers, 'wechatpay-nonce');
  const signature = header(req.headers, 'wechatpay-signature');
  if (!serial || !timestamp || !nonce || !signature) {
    return { ok: false, reason: 'missing Wechatpay-Serial, -Timestamp, -Nonce or -Signature' };
  }
  // The timestamp first: a stale or junk callback must not make durapay download certificates.
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_CLOCK_SKEW_S) {
    return { ok: false, reason: 'Wechatpay-Timestamp outside the tolerance' };
  }
  const key = await client.keyring.find(serial).catch(() => undefined);
  if (!key) return { ok: false, reason: `unknown Wechatpay-Serial ${serial}` };
  const body = req.rawBody.toString('utf8');
  return verifyWechatpaySignature({ timestamp, nonce, body, signature }, key)
    ? { ok: true }
    : { ok: false, reason: 'Wechatpay-Signature does not match' };
}

function header(headers: Record<string, string>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}
