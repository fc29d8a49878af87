/** Alipay's refunds port: trade refunds and their query by out_request_no. */
import { ChannelError } from '../errors';
import type { RefundsPort } from '../ports';
import type { AlipayClient } from './client';
import { refundAnswerStateOf, refundQueryStateOf, toWireRefund } from './transformers';

export function alipayRefunds(client: AlipayClient): RefundsPort {
  const port: RefundsPort = {
    refund: async (ctx, input) => {
      try {
        const answer = await client.call('refund', 'alipay.trade.refund', {
          bizContent: toWireRefund(input),
          ...client.authOf(ctx),
        });
        if (answer === undefined)
          throw new ChannelError('refused', `ACQ.TRADE_NOT_EXIST: no trade ${input.tradeNo}`);
        // Money moved now, or a refund Alipay took to finish later: the query says which.
        return refundAnswerStateOf(answer) ?? (await port.query(ctx, input));
      } catch (err) {
        // No trustworthy answer, or a refusal a retry of a refund that went through can earn
        // (ACQ.TRADE_HAS_CLOSE after a full refund): ask for the refund before saying it failed.
        if (!(err instanceof ChannelError)) throw err;
        const found = await port.query(ctx, input).catch(() => undefined);
        if (found === undefined || found.status === 'not_found') throw err;
        return found;
      }
    },
    query: async (ctx, { tradeNo, refundNo }) => {
      const answer = await client.call('query refund', 'alipay.trade.fastpay.refund.query', {
        bizContent: { out_trade_no: tradeNo, out_request_no: refundNo, query_options: ['gmt_refund_pay'] },
        ...client.authOf(ctx),
      });
      return answer === undefined ? { status: 'not_found' } : refundQueryStateOf(answer);
    },
  };
  return port;
}
