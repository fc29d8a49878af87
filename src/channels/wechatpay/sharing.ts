/** WeChat Pay's profit-sharing port (partner 分账): receivers, sharing orders, unfreeze and returns. */
import { Rsa } from 'wechatpay-axios-plugin';
import { ChannelError } from '../errors';
import type { ProfitSharingPort } from '../ports';
import type { WechatpayClient } from './client';
import { receiverType, returnStateOf, sharingStateOf } from './transformers';

/** Refusals of a return that are WeChat Pay's answer about the return itself, not about the request. */
const RETURN_REFUSALS = /^(INVALID_REQUEST|NO_AUTH|NOT_ENOUGH):/;

/**
 * Partner profit sharing: receivers are added to the sub-merchant first (a merchant
 * receiver's name encrypted with WeChat Pay's public key), then one sharing order per
 * durapay share, on the payment's transaction_id, with the rest unfrozen when it finishes.
 */
export function wechatpaySharing(client: WechatpayClient): ProfitSharingPort {
  const port: ProfitSharingPort = {
    registerReceivers: async (ctx, receivers) => {
      const subMchid = client.subMchid(ctx);
      for (const r of receivers) {
        const type = receiverType(r.type);
        if (type === 'MERCHANT_ID' && !r.name) {
          throw new ChannelError('refused', `WeChat Pay needs the name of merchant receiver ${r.account}`);
        }
        const sealer = r.name ? await client.keyring.sealer() : undefined;
        await client.call(
          'add profit sharing receiver',
          'POST',
          'v3/profitsharing/receivers/add',
          {
            sub_mchid: subMchid,
            appid: client.options.spAppid,
            type,
            account: r.account,
            ...(r.name && sealer ? { name: Rsa.encrypt(r.name, sealer.key) } : {}),
            relation_type: 'PARTNER',
          },
          sealer ? { headers: { 'Wechatpay-Serial': sealer.serial } } : {},
        );
      }
    },
    share: async (ctx, input) => {
      if (!ctx.channelTradeNo) {
        throw new ChannelError('refused', `order ${input.tradeNo} has no WeChat Pay transaction_id to share`);
      }
      const answer = await client.call('create profit sharing order', 'POST', 'v3/profitsharing/orders', {
        sub_mchid: client.subMchid(ctx),
        appid: client.options.spAppid,
        transaction_id: ctx.channelTradeNo,
        out_order_no: input.shareNo,
        receivers: input.receivers.map((r) => ({
          type: receiverType(r.type),
          account: r.account,
          amount: r.amount,
          description: `profit sharing of ${input.tradeNo}`,
        })),
        unfreeze_unsplit: true,
      });
      return sharingStateOf(answer);
    },
    query: async (ctx, { shareNo }) => {
      if (!ctx.channelTradeNo) return { status: 'not_found' };
      const answer = await client.call(
        'query profit sharing order',
        'GET',
        `v3/profitsharing/orders/${encodeURIComponent(shareNo)}`,
        undefined,
        {
          params: { sub_mchid: client.subMchid(ctx), transaction_id: ctx.channelTradeNo },
          notFoundCode: 'RESOURCE_NOT_EXISTS',
        },
      );
      return answer === undefined ? { status: 'not_found' } : sharingStateOf(answer);
    },
    /**
     * 解冻剩余资金: the whole frozen payment back to the sub-merchant when nothing is shared. The
     * unfreeze is a sharing order of its own (out_order_no = unfreezeNo): WeChat Pay may answer it
     * PROCESSING, and `query` with shareNo = unfreezeNo follows it to FINISHED.
     */
    unfreeze: async (ctx, input) => {
      if (!ctx.channelTradeNo) {
        throw new ChannelError(
          'refused',
          `order ${input.tradeNo} has no WeChat Pay transaction_id to unfreeze`,
        );
      }
      const ref = { tradeNo: input.tradeNo, shareNo: input.unfreezeNo };
      try {
        const answer = await client.call(
          'unfreeze profit sharing',
          'POST',
          'v3/profitsharing/orders/unfreeze',
          {
            sub_mchid: client.subMchid(ctx),
            transaction_id: ctx.channelTradeNo,
            out_order_no: input.unfreezeNo,
            description: [...input.description].slice(0, 80).join(''),
          },
        );
        return sharingStateOf(answer);
      } catch (err) {
        if (!(err instanceof ChannelError) || err.kind === 'refused') throw err;
        const found = await port.query!(ctx, ref).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        return found;
      }
    },
    // 分账回退: from merchant receivers only; WeChat Pay cannot take a share back from an openid.
    returns: 'separate',
    returnable: (receiver) => {
      try {
        return receiverType(receiver.type) === 'MERCHANT_ID';
      } catch {
        return false;
      }
    },
    returnShare: async (ctx, input) => {
      if (!port.returnable!(input.receiver)) {
        return {
          status: 'failed',
          reason: `WeChat Pay takes a share back from merchant receivers only, not ${input.receiver.type} ${input.receiver.account}`,
        };
      }
      try {
        return returnStateOf(
          await client.call('return profit share', 'POST', 'v3/profitsharing/return-orders', {
            sub_mchid: client.subMchid(ctx),
            out_order_no: input.shareNo,
            out_return_no: input.returnNo,
            return_mchid: input.receiver.account,
            amount: input.amount,
            description: [...input.description].slice(0, 80).join(''),
          }),
        );
      } catch (err) {
        if (!(err instanceof ChannelError)) throw err;
        // WeChat Pay's no to this return (more than the receiver has left, a receiver that does
        // not allow returns): the return failed, and asking again would not change that.
        if (err.kind === 'refused' && RETURN_REFUSALS.test(err.message)) {
          return { status: 'failed', reason: err.message };
        }
        if (err.kind === 'refused') throw err;
        // No trustworthy answer: WeChat Pay may have taken it. Ask before saying it is unknown.
        const found = await port.queryReturn!(ctx, input).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        return found;
      }
    },
    queryReturn: async (ctx, { shareNo, returnNo }) => {
      const answer = await client.call(
        'query profit share return',
        'GET',
        `v3/profitsharing/return-orders/${encodeURIComponent(returnNo)}`,
        undefined,
        {
          params: { sub_mchid: client.subMchid(ctx), out_order_no: shareNo },
          notFoundCode: 'RESOURCE_NOT_EXISTS',
        },
      );
      return answer === undefined ? { status: 'not_found' } : returnStateOf(answer);
    },
  };
  return port;
}
