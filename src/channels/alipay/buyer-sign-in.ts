/**
 * An Alipay buyer's user id by web authorisation (网页授权), scope `auth_base`: silent, no consent
 * page. The browser goes to `openauth.alipay.com/oauth2/publicAppAuthorize.htm?app_id=
 * &scope=auth_base&redirect_uri=&state=`, Alipay sends it back to redirect_uri with `auth_code`
 * (single use) and `state`, and `alipay.system.oauth.token` (grant_type authorization_code, both
 * request parameters) exchanges the code for `user_id` (or `open_id` for an app in Alipay's
 * open-id mode). A JSAPI order (`alipay.trade.create`) carries it as buyer_id / buyer_open_id.
 *
 * The page is beside the app-authorisation page (config.ts's authPageUrlOf): Alipay's own for
 * its gateways, and the offline gateway's for durapay's. Its success answer has no `code`.
 */
import { ChannelError } from '../errors';
import type { BuyerSignInPort } from '../ports';
import type { AlipayClient } from './client';
import { authPageUrlOf } from './config';

/** Alipay's in-app browser says `AlipayClient/<version>` in its user agent. */
const ALIPAY_AGENT = /\bAlipayClient\//i;

/** The sign-in page: publicAppAuthorize.htm where the app-authorisation page is appToAppAuth.htm. */
export function signInPageOf(config: Parameters<typeof authPageUrlOf>[0]): string {
  return authPageUrlOf(config).replace(/appToAppAuth\.htm/, 'publicAppAuthorize.htm');
}

export function alipayBuyerSignIn(client: AlipayClient): BuyerSignInPort {
  const page = signInPageOf(client.options);
  const appId = client.options.appId;
  return {
    isWallet: (userAgent) => ALIPAY_AGENT.test(userAgent),

    authorizeUrl({ redirectUri, state }) {
      const query = new URLSearchParams({
        app_id: appId,
        scope: 'auth_base',
        redirect_uri: redirectUri,
        state,
      });
      return `${page}${page.includes('?') ? '&' : '?'}${query.toString()}`;
    },

    codeOf(query) {
      const code = query.auth_code;
      return typeof code === 'string' && /^[0-9A-Za-z_-]{1,128}$/.test(code) ? code : undefined;
    },

    async buyerOf(code): Promise<{ buyer: string; extra: Record<string, string> }> {
      let answer;
      try {
        // Its success has no `code` field: '' is taken as an answer, every error code is not.
        answer = await client.callAnswering(
          'sign the buyer in',
          'alipay.system.oauth.token',
          { grant_type: 'authorization_code', code },
          [''],
        );
      } catch (err) {
        if (!(err instanceof ChannelError)) throw err;
        // Never the code in a message, should Alipay's words quote it.
        throw new ChannelError(err.kind, err.message.split(code).join('…'));
      }
      const userId = answer?.user_id;
      const openId = answer?.open_id;
      if (typeof userId === 'string' && /^2088\d{12}$/.test(userId)) {
        return { buyer: userId, extra: { buyer_id: userId } };
      }
      if (typeof openId === 'string' && openId !== '') {
        return { buyer: openId, extra: { buyer_open_id: openId } };
      }
      throw new ChannelError('invalid_response', 'Alipay signed the buyer in without a user_id or open_id');
    },
  };
}
