/** Alipay's profit-sharing port (分账): receiver bindings, settle orders, unfreeze and their query. */
import { createHash } from 'node:crypto';
import { ChannelError } from '../errors';
import type { ProfitSharingPort } from '../ports';
import type { AlipayClient } from './client';
import { receiverType, settleStateOf, yuanOf } from './transformers';

/** Royalty: receivers bound to the app once, then one settle order per durapay share. */
export function alipaySharing(client: AlipayClient): ProfitSharingPort {
  const port: ProfitSharingPort = {
    registerReceivers: async (ctx, receivers) => {
      const receiverList = receivers.map((r) => ({
        type: receiverType(r.type, r.account),
        account: r.account,
        ...(r.name ? { name: r.name } : {}),
      }));
      // The same receivers are the same binding: its request number is made from them.
      const outRequestNo = `bind-${receiverList.map((r) => `${r.type}:${r.account}`).join(',')}`;
      await client.call('bind royalty receivers', 'alipay.trade.royalty.relation.bind', {
        bizContent: { out_request_no: digest(outRequestNo), receiver_list: receiverList },
        ...client.authOf(ctx),
      });
    },
    share: async (ctx, input) => {
      if (!ctx.channelTradeNo) {
        throw new ChannelError('refused', `order ${input.tradeNo} has no Alipay trade_no to settle`);
      }
      await client.call('settle', 'alipay.trade.order.settle', {
        bizContent: {
          out_request_no: input.shareNo,
          trade_no: ctx.channelTradeNo,
          royalty_parameters: input.receivers.map((r) => ({
            royalty_type: 'transfer',
            trans_in_type: receiverType(r.type, r.account),
            trans_in: r.account,
            amount: yuanOf(r.amount),
            desc: `profit sharing of ${input.tradeNo}`,
          })),
          // The one settlement of the trade: what is left frozen goes to the seller.
          extend_params: { royalty_finish: 'true' },
        },
        ...client.authOf(ctx),
      });
      const state = await port.query!(ctx, input);
      return state.status === 'not_found' ? { status: 'processing' } : state;
    },
    query: async (ctx, { shareNo }) => {
      if (!ctx.channelTradeNo) return { status: 'not_found' };
      const answer = await client.call('query settle', 'alipay.trade.order.settle.query', {
        bizContent: { out_request_no: shareNo, trade_no: ctx.channelTradeNo },
        ...client.authOf(ctx),
      });
      return answer === undefined ? { status: 'not_found' } : settleStateOf(answer);
    },
    /**
     * 分账解冻: a trade paid with royalty_freeze keeps its funds frozen until a settle says the
     * royalty is finished; a settle with royalty_finish and no royalty_parameters releases it all
     * to the seller (Alipay's 商家分账 guide: 不传入分账条款，只传入分账完结标识). Alipay answers it
     * at once; a repeat of the same out_request_no is the same settle.
     */
    unfreeze: async (ctx, input) => {
      if (!ctx.channelTradeNo) {
        throw new ChannelError('refused', `order ${input.tradeNo} has no Alipay trade_no to unfreeze`);
      }
      await client.call('unfreeze', 'alipay.trade.order.settle', {
        bizContent: {
          out_request_no: input.unfreezeNo,
          trade_no: ctx.channelTradeNo,
          extend_params: { royalty_finish: 'true' },
        },
        ...client.authOf(ctx),
      });
      return { status: 'finished' };
    },
    // 退分账 travels on the refund itself (refund_royalty_parameters), from any receiver Alipay settles to.
    returns: 'with_refund',
    returnable: (receiver) => {
      try {
        receiverType(receiver.type, receiver.account);
        return true;
      } catch {
        return false;
      }
    },
  };
  return port;
}

/** A short stable name for a binding, as out_request_no. */
function digest(text: string): string {
  // Alipay takes at most 32 letters, digits or underscores here.
  return `b${createHash('sha256').update(text).digest('hex').slice(0, 31)}`;
}
