/**
 * A WeChat buyer's openid by web OAuth (网页授权), scope `snsapi_base`: silent, no consent page.
 * The browser goes to `open.weixin.qq.com/connect/oauth2/authorize?appid=&redirect_uri=
 * &response_type=code&scope=snsapi_base&state=#wechat_redirect`, WeChat sends it back to
 * redirect_uri with `code` (single use, five minutes) and `state`, and the server exchanges the
 * code at `api.weixin.qq.com/sns/oauth2/access_token` with the app's AppSecret. The openid is of
 * sp_appid: a JSAPI order carries it as `payer.sp_openid`.
 *
 * Against WeChat Pay's own API host these are WeChat's hosts; against any other (durapay's offline
 * sandbox) both paths are under WECHATPAY_BASE_URL, so pointing it there is enough.
 */
import axios from 'axios';
import Joi from 'joi';
import type { BuyerSignInPort } from '../ports';
import { ChannelError } from '../errors';
import type { WechatpayConfig } from './config';

const WECHAT_API_HOST = 'api.mch.weixin.qq.com';

/** WeChat's in-app browser says `MicroMessenger/<version>` in its user agent. */
const WECHAT_AGENT = /\bMicroMessenger\//i;

/** The sign-in's two addresses for a configured API base. */
export function signInUrlsOf(baseUrl: string): { authorize: string; token: string } {
  if (new URL(baseUrl).hostname === WECHAT_API_HOST) {
    return {
      authorize: 'https://open.weixin.qq.com/connect/oauth2/authorize',
      token: 'https://api.weixin.qq.com/sns/oauth2/access_token',
    };
  }
  return { authorize: `${baseUrl}/connect/oauth2/authorize`, token: `${baseUrl}/sns/oauth2/access_token` };
}

const tokenAnswer = Joi.object({
  openid: Joi.string().min(1).max(128).required(),
}).unknown(true);

/** The codes WeChat answers for a code it will not exchange: invalid (40029), used (40163), expired (42003). */
const CODE_REFUSED = new Set([40029, 40163, 42003]);

export function wechatpayBuyerSignIn(
  config: Pick<WechatpayConfig, 'baseUrl' | 'spAppid' | 'spAppSecret'> & { timeoutMs: number },
): BuyerSignInPort | undefined {
  const secret = config.spAppSecret;
  if (secret === undefined) return undefined;
  const urls = signInUrlsOf(config.baseUrl);
  return {
    isWallet: (userAgent) => WECHAT_AGENT.test(userAgent),

    authorizeUrl({ redirectUri, state }) {
      const query = new URLSearchParams({
        appid: config.spAppid,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'snsapi_base',
        state,
      });
      // WeChat reads the parameters in this order and wants the fragment.
      return `${urls.authorize}?${query.toString()}#wechat_redirect`;
    },

    codeOf(query) {
      const code = query.code;
      return typeof code === 'string' && /^[0-9A-Za-z_-]{1,128}$/.test(code) ? code : undefined;
    },

    async buyerOf(code) {
      let answer: unknown;
      try {
        const res = await axios.get(urls.token, {
          params: { appid: config.spAppid, secret, code, grant_type: 'authorization_code' },
          timeout: config.timeoutMs,
          responseType: 'json',
          validateStatus: () => true,
        });
        if (res.status !== 200) {
          throw new ChannelError('unreachable', `WeChat sign-in answered HTTP ${res.status}`);
        }
        answer = res.data;
      } catch (err) {
        if (err instanceof ChannelError) throw err;
        const timedOut = (err as { code?: string }).code === 'ECONNABORTED';
        throw new ChannelError(
          timedOut ? 'timeout' : 'unreachable',
          timedOut
            ? `WeChat sign-in gave no answer within ${config.timeoutMs} ms`
            : `WeChat sign-in could not be reached (${(err as { code?: string }).code ?? 'no answer'})`,
        );
      }
      const errcode = (answer as { errcode?: unknown } | null)?.errcode;
      if (typeof errcode === 'number' && errcode !== 0) {
        // errmsg carries a request id, never the secret; kept short all the same.
        const errmsg = String((answer as { errmsg?: unknown }).errmsg ?? '').slice(0, 80);
        throw new ChannelError(
          CODE_REFUSED.has(errcode) ? 'refused' : 'unreachable',
          `WeChat sign-in refused the code: ${errcode} ${errmsg}`.trim(),
        );
      }
      const { error, value } = tokenAnswer.validate(answer);
      if (error) throw new ChannelError('invalid_response', 'WeChat sign-in answered without an openid');
      const openid = (value as { openid: string }).openid;
      return { buyer: openid, extra: { sp_openid: openid } };
    },
  };
}
