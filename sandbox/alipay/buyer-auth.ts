/**
 * Alipay's web authorisation of a buyer (网页授权, scope `auth_base`) and the JSAPI bridge's
 * payment, as the Alipay app gives them, so that a hosted checkout runs on one machine:
 *
 * - `GET /oauth2/publicAppAuthorize.htm?app_id=&scope=&redirect_uri=&state=`, as
 *   openauth.alipay.com serves it: `auth_base` is silent, a 302 to redirect_uri with `app_id`,
 *   `source=alipay_wallet`, `scope`, `auth_code` and `state` appended. The Alipay user is the
 *   browser's: a cookie names it (one is given on the first visit), its user id (2088…) is the
 *   same on every sign-in.
 * - `alipay.system.oauth.token` (grant_type and code are request parameters, not biz_content):
 *   `{user_id, access_token, expires_in, refresh_token, re_expires_in, auth_start}`, answered
 *   without `code` as Alipay answers it; a code unknown, used, another app's or past its three
 *   minutes is 40002 `isv.code-invalid`.
 * - `GET /js-bridge.js`: what the Alipay app provides as `window.AlipayJSBridge`, for a browser
 *   that is not Alipay's: `call('tradePay', {tradeNO}, cb)` posts to `POST /js-bridge/tradePay`,
 *   which pays the `alipay.trade.create` trade when the signed-in user is its buyer, and answers
 *   the bridge's `resultCode`: 9000 paid, 6001 cancelled by the buyer, 4000 refused.
 */
import { createHash, randomBytes } from 'node:crypto';
import Joi from 'joi';
import type { Request, Response, Router } from 'express';
import { escapeHtml } from '../html';
import type { AlipayGateway, Handler } from './gateway';
import { pageOrScriptBody } from './http';
import { beijingTime, invalidArgument, missingArgument, withoutCode } from './wire';

export const BUYER_AUTH_PAGE_PATH = '/oauth2/publicAppAuthorize.htm';
/**
 * How long an auth_code lasts. Never scaled: a browser's round trip takes what it takes, and a
 * code that dies in a scaled 180 ms would fail a slow page, not test anything.
 */
export const BUYER_CODE_LIFETIME_MS = 3 * 60_000;
const USER_COOKIE = 'alipay_sandbox_user';

interface IssuedCode {
  appId: string;
  userId: string;
  expiresAt: number;
  used: boolean;
}

/** A user's Alipay user id: 2088 and 12 digits, stable per user. */
export function alipayUserIdOf(user: string): string {
  const digits = BigInt(`0x${createHash('sha256').update(`alipay-user:${user}`).digest('hex').slice(0, 15)}`);
  return `2088${(digits % 10n ** 12n).toString().padStart(12, '0')}`;
}

function userOf(req: Request, res: Response): string {
  const cookie = req.get('Cookie') ?? '';
  const found = new RegExp(`(?:^|;\\s*)${USER_COOKIE}=([0-9a-z]{8,40})`).exec(cookie)?.[1];
  if (found) return found;
  const user = randomBytes(10).toString('hex');
  res.append('Set-Cookie', `${USER_COOKIE}=${user}; Path=/; HttpOnly; SameSite=Lax`);
  return user;
}

function errorPage(res: Response, reason: string): void {
  res
    .status(400)
    .set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
    .type('html')
    .send(
      `<!doctype html><html lang="zh-CN"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>支付宝授权</title><body style="font-family:sans-serif;padding:2rem"><h1>授权失败</h1><p>${escapeHtml(reason)}</p></body></html>`,
    );
}

function bridgeScript(base: string): string {
  return `(function () {
  if (window.AlipayJSBridge) return;
  var endpoint = ${JSON.stringify(`${base}/js-bridge/tradePay`)};
  window.AlipayJSBridge = {
    call: function (name, params, callback) {
      var done = typeof callback === 'function' ? callback : function () {};
      if (name !== 'tradePay') { setTimeout(function () { done({ error: 1, errorMessage: 'unknown api ' + name }); }); return; }
      var choice = window.__alipaySandboxBuyer || 'pay';
      if (choice === 'cancel') { setTimeout(function () { done({ resultCode: '6001' }); }); return; }
      fetch(endpoint, { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(params || {}) })
        .then(function (r) { return r.json(); })
        .then(function (a) { done(a); }, function () { done({ resultCode: '6002' }); });
    }
  };
  var ready = function () { document.dispatchEvent(new Event('AlipayJSBridgeReady')); };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready); else setTimeout(ready);
})();
`;
}

const tokenParams = Joi.object({
  grant_type: Joi.string(),
  code: Joi.string(),
}).unknown(true);

export class BuyerAuthBook {
  private readonly codes = new Map<string, IssuedCode>();

  constructor(
    readonly appId: string,
    private readonly lifetimeMs: number,
  ) {}

  issue(userId: string, now: number): string {
    const code = randomBytes(16).toString('hex');
    this.codes.set(code, { appId: this.appId, userId, expiresAt: now + this.lifetimeMs, used: false });
    return code;
  }

  exchange(code: string, appId: string, now: number): string {
    const issued = this.codes.get(code);
    if (!issued || issued.used || issued.appId !== appId || issued.expiresAt < now) {
      throw invalidArgument('isv.code-invalid', '授权码code无效');
    }
    issued.used = true;
    return issued.userId;
  }
}

export function buyerAuthHandlers(book: BuyerAuthBook): Record<string, Handler> {
  return {
    'alipay.system.oauth.token': (call) => {
      const { value } = tokenParams.validate(call.params);
      const params = value as { grant_type?: string; code?: string };
      if (params.grant_type === undefined)
        throw missingArgument('isv.missing-parameter', '缺少必选参数 grant_type');
      if (params.grant_type !== 'authorization_code') {
        throw invalidArgument('isv.grant-type-invalid', 'grant_type参数不正确');
      }
      if (params.code === undefined) throw missingArgument('isv.missing-parameter', '缺少必选参数 code');
      const userId = book.exchange(params.code, String(call.params.app_id), call.now);
      return withoutCode({
        user_id: userId,
        access_token: `authbseB${randomBytes(16).toString('hex')}`,
        expires_in: 1_296_000,
        refresh_token: `authbseB${randomBytes(16).toString('hex')}`,
        re_expires_in: 2_592_000,
        auth_start: beijingTime(call.now),
      });
    },
  };
}

export function buyerAuthRoutes(
  router: Router,
  gateway: AlipayGateway,
  book: BuyerAuthBook,
  base: string,
): void {
  router.get(BUYER_AUTH_PAGE_PATH, (req, res) => {
    res.set('Cache-Control', 'no-store');
    const q = req.query as Record<string, unknown>;
    const text = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : undefined);
    if (text('app_id') !== book.appId) {
      errorPage(res, 'app_id 无效: 没有这个应用');
      return;
    }
    const scope = text('scope');
    if (scope !== 'auth_base' && scope !== 'auth_user') {
      errorPage(res, 'scope 参数错误: auth_base 或 auth_user');
      return;
    }
    let redirect: URL;
    try {
      redirect = new URL(text('redirect_uri') ?? '');
      if (!['http:', 'https:'].includes(redirect.protocol)) throw new Error('scheme');
    } catch {
      errorPage(res, 'redirect_uri 参数错误');
      return;
    }
    const state = text('state') ?? '';
    if (state.length > 400) {
      errorPage(res, 'state 参数过长');
      return;
    }
    const code = book.issue(alipayUserIdOf(userOf(req, res)), Date.now());
    for (const [k, v] of [
      ['app_id', book.appId],
      ['source', 'alipay_wallet'],
      ['scope', scope],
      ['auth_code', code],
      ['state', state],
    ] as const) {
      redirect.searchParams.append(k, v);
    }
    res.redirect(302, redirect.toString());
  });

  router.get('/js-bridge.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'no-store').send(bridgeScript(base));
  });

  router.post('/js-bridge/tradePay', (req, res) => {
    res.set('Cache-Control', 'no-store');
    const refuse = (memo: string) => res.json({ resultCode: '4000', memo });
    const tradeNo = (pageOrScriptBody(req).body as { tradeNO?: unknown } | undefined)?.tradeNO;
    if (typeof tradeNo !== 'string') return refuse('tradeNO is missing');
    const trade = gateway.trades.peekByTradeNo(tradeNo);
    if (!trade || trade.method !== 'alipay.trade.create') return refuse('no such JSAPI trade');
    gateway.touch(trade, Date.now());
    const buyer = alipayUserIdOf(userOf(req, res));
    if (trade.buyerId !== undefined && trade.buyerId !== buyer) return refuse('the trade is another buyer’s');
    if (trade.status !== 'WAIT_BUYER_PAY') {
      return trade.status === 'TRADE_SUCCESS'
        ? res.json({ resultCode: '9000' })
        : refuse('the trade is closed');
    }
    gateway.scan(trade, Date.now());
    gateway.pay(trade, Date.now());
    return res.json({ resultCode: '9000', result: JSON.stringify({ trade_no: trade.tradeNo }) });
  });
}
