/**
 * WeChat Pay's merchant-accounts port: a claimed sub_mchid is confirmed by a partner read of the
 * sub-merchant's settlement account (查询结算账户, `GET /v3/apply4sub/sub_merchants/{sub_mchid}/settlement`),
 * which WeChat Pay answers only for a sub-merchant this service provider onboarded. The answer's
 * account details (masked) are not kept: that WeChat Pay answered at all is the confirmation.
 */
import { ChannelError } from '../errors';
import type { AccountsPort, ChannelAccountsDeclaration } from '../ports';
import type { WechatpayClient } from './client';

/** A merchant number as WeChat Pay issues them: digits only. */
const SUB_MCHID = /^\d{1,32}$/;

/** A WeChat Pay merchant's account: its sub_mchid under this service provider, which onboarding gives it too. */
export const WECHATPAY_ACCOUNTS = {
  kinds: [
    {
      kind: 'sub_mchid',
      label: 'Sub-merchant id (sub_mchid)',
      description: 'the sub-merchant number.',
      pattern: SUB_MCHID,
      patternMessage: 'sub_mchid must be the sub-merchant number: 1 to 32 digits',
      example: '1900000109',
      holds: 'number',
      confirmation:
        "WeChat Pay answers the partner read of the sub-merchant's settlement account only for a sub-merchant of this service provider.",
    },
  ],
  onboarded: 'sub_mchid',
} as const satisfies ChannelAccountsDeclaration;

export function wechatpayAccounts(client: WechatpayClient): AccountsPort {
  return {
    confirm: async (_ctx, claim) => {
      if (claim.kind !== 'sub_mchid') {
        throw new ChannelError('refused', 'WeChat Pay accounts are named by sub_mchid');
      }
      const subMchid = claim.value;
      if (!SUB_MCHID.test(subMchid)) {
        throw new ChannelError('refused', `WeChat Pay sub_mchid is digits, not ${JSON.stringify(subMchid)}`);
      }
      let answer: unknown;
      try {
        answer = await client.call(
          'read the sub-merchant',
          'GET',
          `v3/apply4sub/sub_merchants/${encodeURIComponent(subMchid)}/settlement`,
        );
      } catch (err) {
        // NO_AUTH, PARAM_ERROR, RESOURCE_NOT_EXISTS…: not this service provider's sub-merchant.
        if (err instanceof ChannelError && err.kind === 'refused') {
          throw new ChannelError(
            'refused',
            `WeChat Pay does not confirm sub_mchid ${subMchid} for service provider ${client.account.spMchid}: ${err.message}`,
          );
        }
        throw err;
      }
      if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
        throw new ChannelError(
          'invalid_response',
          'WeChat Pay answered the settlement account read without an object',
        );
      }
      return { accountNo: subMchid };
    },
  };
}
