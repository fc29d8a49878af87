/** The sandbox's profit-sharing port: shares, unfreeze and returns, as WeChat Pay's work. */
import type { ProfitSharingPort } from '../ports';
import type { SandboxClient } from './client';
import {
  parseErrorBody,
  parseProfitShareState,
  parseShareReturnState,
  parseUnfreezeState,
  toWireProfitShare,
  toWireShareReturn,
  type WireUnfreezeRequest,
} from './transformers';

/** Receiver types whose share the simulator never takes back (a person's wallet, as at WeChat Pay). */
export const SANDBOX_PERSONAL_RECEIVERS: readonly string[] = ['PERSONAL_OPENID', 'PERSONAL_SUB_OPENID'];

export function sandboxSharing(client: SandboxClient): ProfitSharingPort {
  const port: ProfitSharingPort = {
    share: async (_ctx, input) => {
      const answer = await client.call('POST', '/v1/profit-shares', toWireProfitShare(input));
      return parseProfitShareState(client.ok('profit share', answer));
    },
    unfreeze: async (_ctx, input) => {
      const body: WireUnfreezeRequest = {
        unfreeze_no: input.unfreezeNo,
        trade_no: input.tradeNo,
        description: input.description,
      };
      const answer = await client.call('POST', '/v1/unfreezes', body);
      return parseUnfreezeState(client.ok('unfreeze', answer));
    },
    returns: 'separate',
    returnable: (receiver) => !SANDBOX_PERSONAL_RECEIVERS.includes(receiver.type.toUpperCase()),
    returnShare: async (_ctx, input) => {
      const answer = await client.call('POST', '/v1/share-returns', toWireShareReturn(input));
      // The simulator's no to this return (a person's wallet, more than is left, a refusing
      // receiver): the return failed. A malformed request (400) stays an error.
      if (answer.status === 422 || client.isUnknown(answer, 'share_not_found')) {
        return { status: 'failed', reason: parseErrorBody(answer.status, answer.text).error };
      }
      return parseShareReturnState(client.ok('share return', answer));
    },
    queryReturn: async (_ctx, { returnNo }) => {
      const answer = await client.call('GET', `/v1/share-returns/${encodeURIComponent(returnNo)}`);
      if (client.isUnknown(answer, 'return_not_found')) return { status: 'not_found' };
      return parseShareReturnState(client.ok('query share return', answer));
    },
  };
  return port;
}
