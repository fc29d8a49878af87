/** The sandbox's merchant-accounts port: a claimed sub_merchant_no is confirmed by the simulator. */
import { ChannelError } from '../errors';
import type { AccountsPort, ChannelAccountsDeclaration } from '../ports';
import type { SandboxClient } from './client';
import { parseSubMerchant } from './transformers';

/** A sandbox merchant's account: a sub-merchant of the simulator, which onboarding gives it too. */
export const SANDBOX_ACCOUNTS = {
  kinds: [
    {
      kind: 'sub_merchant_no',
      label: 'Sub-merchant number',
      description: 'the sub-merchant number.',
      pattern: /^[A-Za-z0-9_-]{1,64}$/,
      patternMessage: 'sub_merchant_no must be 1 to 64 characters of [A-Za-z0-9_-]',
      example: 'SBX-SUB-001',
      holds: 'number',
      confirmation: 'The simulator answers for a sub-merchant it knows.',
    },
  ],
  onboarded: 'sub_merchant_no',
} as const satisfies ChannelAccountsDeclaration;

export function sandboxAccounts(client: SandboxClient): AccountsPort {
  return {
    confirm: async (_ctx, claim) => {
      if (claim.kind !== 'sub_merchant_no') {
        throw new ChannelError('refused', 'sandbox accounts are named by sub_merchant_no');
      }
      const answer = await client.call('GET', `/v1/sub-merchants/${encodeURIComponent(claim.value)}`);
      // A 4xx is the simulator's refusal, its reason as the message.
      const { subMerchantNo } = parseSubMerchant(client.ok('confirm sub-merchant', answer));
      return { accountNo: subMerchantNo };
    },
  };
}
