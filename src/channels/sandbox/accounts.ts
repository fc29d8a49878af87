/** The sandbox's merchant-accounts port: a claimed sub_merchant_no is confirmed by the simulator. */
import { ChannelError } from '../errors';
import type { AccountsPort } from '../ports';
import type { SandboxClient } from './client';
import { parseSubMerchant } from './transformers';

export function sandboxAccounts(client: SandboxClient): AccountsPort {
  return {
    confirm: async (_ctx, claim) => {
      if (claim.kind !== 'sub_merchant_no') {
        throw new ChannelError('refused', 'sandbox accounts are named by sub_merchant_no');
      }
      const answer = await client.call('GET', `/v1/sub-merchants/${encodeURIComponent(claim.subMerchantNo)}`);
      // A 4xx is the simulator's refusal, its reason as the message.
      const { subMerchantNo } = parseSubMerchant(client.ok('confirm sub-merchant', answer));
      return { accountNo: subMerchantNo };
    },
  };
}
