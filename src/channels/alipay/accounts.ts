/**
 * Alipay's merchant-accounts port: an app_auth_token is confirmed by Alipay's query of it, an smid
 * by its shape.
 *
 * app_auth_token — `alipay.open.auth.token.app.query` (查询某个ISV下的指定app_auth_token的授权信息)
 * answers a token granted to this app: `status` valid or invalid, the authorising merchant's
 * `user_id`, and `auth_end`. A token granted to another app (even one of the same Alipay account)
 * is not this app's to query: Alipay refuses it as an invalid token, so no app id is compared
 * here. `auth_app_id` is the authorising merchant's own app, not durapay's, and is not read.
 *
 * smid — Alipay documents no read of a 直付通 secondary merchant by its smid: the 直付通 methods
 * are create, modify, consult, upgrade, delete and `ant.merchant.expand.indirect.zftorder.query`,
 * whose biz_content names an application by `external_id` or `order_id` only. An smid of the
 * right shape is taken as given; a trade naming an smid that is not this provider's is refused
 * by Alipay when it is made.
 *
 * A merchant's token is obtained through `authorization` (authorization.ts): Alipay's page, the
 * exchange of the code it hands back, and the token's refresh.
 */
import { ChannelError } from '../errors';
import type { AccountsPort, ChannelAccountsDeclaration, ConfirmedAccount } from '../ports';
import { alipayAuthorization, type AlipayAuthorization } from './authorization';
import { isSmid, type AlipayClient } from './client';
import { parseBeijingTime } from './transformers';

/**
 * An Alipay merchant's account: a 直付通 secondary merchant (its smid, which onboarding gives it),
 * or the app_auth_token of a merchant that authorised durapay's app.
 */
export const ALIPAY_ACCOUNTS = {
  kinds: [
    {
      kind: 'smid',
      label: 'Secondary merchant id (smid)',
      description: 'a 直付通 secondary merchant (2088…).',
      pattern: /^2088\d{12}$/,
      patternMessage: 'smid must be 2088 followed by 12 digits',
      example: '2088102146225135',
      holds: 'number',
      confirmation:
        "Alipay has no read of a secondary merchant by its smid: one of the right shape is taken, and a trade naming another provider's is refused by Alipay.",
    },
    {
      kind: 'app_auth_token',
      label: 'App auth token',
      description: 'the token of a merchant that authorised this app.',
      pattern: /^[A-Za-z0-9._-]{1,128}$/,
      patternMessage: 'app_auth_token must be 1 to 128 characters of letters, digits, ".", "_" and "-"',
      example: '202611BBc1d2e3f4g5h6i7j8k9',
      holds: 'token',
      confirmation:
        'Alipay confirms the token is valid for this app and names the merchant (its user id) and when the token ends.',
    },
  ],
  onboarded: 'smid',
} as const satisfies ChannelAccountsDeclaration;

export type AlipayAccountsPort = AccountsPort & { readonly authorization: AlipayAuthorization };

export function alipayAccounts(client: AlipayClient): AlipayAccountsPort {
  return {
    confirm: async (_ctx, claim) => {
      switch (claim.kind) {
        case 'app_auth_token':
          return confirmToken(client, claim.value);
        case 'smid':
          if (!isSmid(claim.value)) {
            throw new ChannelError('refused', 'an Alipay smid is a 16-digit number starting 2088');
          }
          return { accountNo: claim.value };
        default:
          throw new ChannelError(
            'refused',
            'Alipay accounts are an app_auth_token or a 直付通 secondary merchant smid',
          );
      }
    },
    authorization: alipayAuthorization(client),
  };
}

async function confirmToken(client: AlipayClient, appAuthToken: string): Promise<ConfirmedAccount> {
  let answer;
  try {
    // Asked as durapay's app itself: the token travels in biz_content, not as app_auth_token.
    answer = await client.call('query the app authorisation', 'alipay.open.auth.token.app.query', {
      bizContent: { app_auth_token: appAuthToken },
    });
  } catch (err) {
    // The token is a credential: Alipay's words are passed on, the token never.
    if (err instanceof ChannelError && err.kind === 'refused') {
      // Alipay's words may quote what it was sent: the token is cut out of them.
      const words = err.message.split(appAuthToken).join('***');
      throw new ChannelError('refused', `Alipay does not confirm the app_auth_token: ${words}`);
    }
    throw err;
  }
  const status = answer?.status;
  if (status !== 'valid') {
    throw new ChannelError(
      'refused',
      `Alipay says the app_auth_token is ${typeof status === 'string' && status !== '' ? status : 'not valid'}`,
    );
  }
  return {
    accountNo: client.field(answer, 'user_id', 'app authorisation query'),
    tokenExpiresAt: parseBeijingTime(answer?.auth_end) ?? null,
  };
}
