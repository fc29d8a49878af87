/**
 * Third-party app authorisation (第三方应用授权), the authorisation half of the accounts port:
 * the merchant authorises durapay's app on Alipay's page (appToAppAuth.htm, whose address
 * config.ts's authPageUrlOf gives), which sends the browser back with a single-use
 * `app_auth_code`; `alipay.open.auth.token.app` exchanges it for the merchant's app_auth_token
 * (grant_type authorization_code) and refreshes that token (grant_type refresh_token).
 *
 * Codes, tokens and refresh tokens are credentials: no error message carries one, and Alipay's
 * sub_msg is not passed on for a refusal (only its sub_code, read through a fixed sentence).
 */
import { ChannelError } from '../errors';
import type { AccountsPort, AuthorizedToken } from '../ports';
import type { AlipayClient } from './client';
import { authPageUrlOf } from './config';
import { authorizedTokenOf } from './transformers';

export type AlipayAuthorization = NonNullable<AccountsPort['authorization']>;

/** What each sub_code of alipay.open.auth.token.app means for the caller. */
const REFUSALS: Record<string, string> = {
  'isv.code-invalid':
    'the authorisation code is unknown, already used or expired: the merchant authorises again',
  'isv.refresh-token-invalid': 'Alipay does not know the refresh token',
  'isv.refreshed-token-invalid':
    'the refresh token was already used: refresh with the one its refresh answered',
  'isv.refresh-token-time-out': 'the refresh token has expired: the merchant authorises again',
  'isv.grant-type-invalid': 'Alipay does not take the grant type',
};

export function alipayAuthorization(client: AlipayClient): AlipayAuthorization {
  const page = authPageUrlOf(client.options);
  const appId = client.options.appId;
  return {
    pageUrl({ redirectUri, state }) {
      if (!/^https?:\/\//i.test(redirectUri)) {
        throw new ChannelError('refused', 'the redirect URI of an Alipay authorisation is an http(s) URL');
      }
      const query = [
        `app_id=${encodeURIComponent(appId)}`,
        `redirect_uri=${encodeURIComponent(redirectUri)}`,
        `state=${encodeURIComponent(state)}`,
      ].join('&');
      return `${page}${page.includes('?') ? '&' : '?'}${query}`;
    },
    exchange: (code) =>
      tokenCall(client, 'exchange the authorisation code', { grant_type: 'authorization_code', code }, code),
    refresh: (refreshToken) =>
      tokenCall(
        client,
        'refresh the app authorisation',
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        refreshToken,
      ),
  };
}

async function tokenCall(
  client: AlipayClient,
  what: string,
  bizContent: Record<string, string>,
  secret: string,
): Promise<AuthorizedToken> {
  let answer;
  try {
    answer = await client.call(what, 'alipay.open.auth.token.app', { bizContent });
  } catch (err) {
    if (!(err instanceof ChannelError)) throw err;
    if (err.kind === 'refused') throw new ChannelError('refused', refusal(what, err.message, secret));
    // Alipay's words, if any, without the credential should they quote it.
    throw new ChannelError(err.kind, err.message.split(secret).join('…'));
  }
  // The client answers undefined only for a "no such trade" sub_code, which this method has not.
  if (!answer) throw new ChannelError('refused', `Alipay would not ${what}`);
  return authorizedTokenOf(answer, new Date());
}

/**
 * A refusal from the client's `SUB_CODE: sub_msg` as a fixed sentence naming the sub_code; any
 * other refusal (an unsigned error) as the client worded it, without the credential.
 */
function refusal(what: string, message: string, secret: string): string {
  const subCode = /^([a-z]+\.[\w.-]+|CODE_\d+)(?::|$)/i.exec(message)?.[1];
  if (subCode === undefined) return message.split(secret).join('…');
  return `Alipay refused to ${what}: ${REFUSALS[subCode] ?? 'see its sub_code'} (${subCode})`;
}
