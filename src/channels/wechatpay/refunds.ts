/** WeChat Pay's refunds port: domestic refunds, their query, and ABNORMAL refunds paid another way. */
import { Rsa } from 'wechatpay-axios-plugin';
import { ChannelError } from '../errors';
import type { RefundsPort } from '../ports';
import type { WechatpayClient } from './client';
import { refundStateOf, toWireAbnormalRefund, toWireRefund } from './transformers';

export function wechatpayRefunds(client: WechatpayClient): RefundsPort {
  const port: RefundsPort = {
    refund: async (ctx, input) => {
      try {
        return refundStateOf(
          await client.call(
            'create refund',
            'POST',
            'v3/refund/domestic/refunds',
            toWireRefund(client.subMchid(ctx), input),
          ),
        );
      } catch (err) {
        // No trustworthy answer (no answer, a 5xx, an answer that failed verification): WeChat
        // Pay may have taken the refund. Ask for it by out_refund_no before saying it failed.
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await port.query(ctx, input).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        return found;
      }
    },
    query: async (ctx, { refundNo }) => {
      const answer = await client.call(
        'query refund',
        'GET',
        `v3/refund/domestic/refunds/${encodeURIComponent(refundNo)}`,
        undefined,
        { params: { sub_mchid: client.subMchid(ctx) }, notFoundCode: 'RESOURCE_NOT_EXISTS' },
      );
      return answer === undefined ? { status: 'not_found' } : refundStateOf(answer);
    },
    /**
     * 发起异常退款: an ABNORMAL refund paid to a bank card instead, the card number and the
     * holder's name sealed with WeChat Pay's public key (never logged, never in an error).
     * WeChat Pay then takes it PROCESSING and on to SUCCESS, with a REFUND.SUCCESS callback.
     */
    applyAbnormal: async (ctx, input) => {
      const subMchid = client.subMchid(ctx);
      const sealer = input.method === 'user_bank_card' ? await client.keyring.sealer() : undefined;
      const body = toWireAbnormalRefund(subMchid, input, (plain) => {
        if (!sealer) throw new ChannelError('refused', 'no WeChat Pay public key to seal the card with');
        return Rsa.encrypt(plain, sealer.key);
      });
      try {
        return refundStateOf(
          await client.call(
            'apply abnormal refund',
            'POST',
            `v3/refund/domestic/refunds/${encodeURIComponent(input.channelRefundNo)}/apply-abnormal-refund`,
            body,
            sealer ? { headers: { 'Wechatpay-Serial': sealer.serial } } : {},
          ),
        );
      } catch (err) {
        // No trustworthy answer, or asked again for a refund already under way: where it stands.
        if (!(err instanceof ChannelError)) throw err;
        if (err.kind === 'refused' && !err.message.startsWith('INVALID_REQUEST:')) throw err;
        const found = await port.query(ctx, input).catch(() => undefined);
        if (found === undefined || found.status === 'not_found' || found.status === 'abnormal') throw err;
        return found;
      }
    },
  };
  return port;
}
