/** The sandbox's refunds port: refunds, their query and ABNORMAL refunds paid another way. */
import type { RefundsPort } from '../ports';
import type { SandboxClient } from './client';
import { parseRefundState, toWireApplyAbnormal, toWireCreateRefund } from './transformers';

export function sandboxRefunds(client: SandboxClient): RefundsPort {
  const port: RefundsPort = {
    refund: async (_ctx, input) => {
      const answer = await client.call('POST', '/v1/refunds', toWireCreateRefund(input));
      return parseRefundState(client.ok('create refund', answer));
    },
    query: async (_ctx, { refundNo }) => {
      const answer = await client.call('GET', `/v1/refunds/${encodeURIComponent(refundNo)}`);
      if (client.isUnknown(answer, 'refund_not_found')) return { status: 'not_found' };
      return parseRefundState(client.ok('query refund', answer));
    },
    // A refund steered `abnormal` ([sandbox:abnormal]) is paid to a bank card instead, as at WeChat Pay.
    applyAbnormal: async (_ctx, input) => {
      const answer = await client.call(
        'POST',
        `/v1/refunds/${encodeURIComponent(input.refundNo)}/apply-abnormal`,
        toWireApplyAbnormal(input),
      );
      return parseRefundState(client.ok('apply abnormal refund', answer));
    },
  };
  return port;
}
