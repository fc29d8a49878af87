/**
 * WeChat's web OAuth (网页授权) for the service provider's app, and the JSAPI bridge's payment, as
 * WeChat's in-app browser gives them, so that a hosted checkout runs on one machine:
 *
 * - `GET /connect/oauth2/authorize?appid=&redirect_uri=&response_type=code&scope=&state=`, as
 *   open.weixin.qq.com serves it: `snsapi_base` is silent, a 302 to redirect_uri with `code` and
 *   `state` appended. The WeChat user is the browser's: a cookie names it (one is given on the
 *   first visit), and its openid is that user's at the app, the same on every sign-in.
 * - `GET /sns/oauth2/access_token?appid=&secret=&code=&grant_type=authorization_code`, as
 *   api.weixin.qq.com answers it: `{access_token, expires_in, refresh_token, openid, scope}`, or
 *   `{errcode, errmsg}`: 40013 an unknown appid, 40125 a wrong secret, 40029 an unknown or
 *   expired code (five minutes), 40163 a code already used.
 * - `GET /js-bridge.js`: what WeChat's browser provides as `window.WeixinJSBridge`, for a browser
 *   that is not WeChat's (a test's page, or a developer's with WeChat's user agent):
 *   `invoke('getBrandWCPayRequest', params, cb)` posts the params to
 *   `POST /js-bridge/getBrandWCPayRequest`, which checks what WeChat checks (the appId, the
 *   prepay_id, the paySign by the merchant's key over `appId\ntimeStamp\nnonceStr\npackage\n`,
 *   and that the signed-in user is the order's payer), then pays, and answers the bridge's
 *   `err_msg`: `get_brand_wcpay_request:ok`, `:cancel` or `:fail`.
 */
import { createHash, createVerify, randomBytes, type KeyObject } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { escapeHtml } from '../html';
import type { SandboxContext } from './context';
import { jsonBody } from './http';

/** How long a code lasts, as WeChat documents it; never scaled (a browser's round trip takes what it takes). */
const CODE_LIFETIME_MS = 5 * 60_000;
const USER_COOKIE = 'wechat_sandbox_user';
const MAX_STATE = 128;

interface IssuedCode {
  appid: string;
  openid: string;
  expiresAt: number;
  used: boolean;
}

/** A WeChat user's openid at an app: 28 characters, stable per (user, app). */
export function openidOf(appid: string, user: string): string {
  const digest = createHash('sha256').update(`${appid}:${user}`).digest('base64url');
  return `o${digest.replace(/[^0-9A-Za-z]/g, '').slice(0, 27)}`;
}

/** The sandbox's AppSecret of sp_appid: derived from its keys, so that nothing new is stored. */
export function spAppSecretOf(keys: { spAppid: string; merchantPrivateKeyPem: string }): string {
  return createHash('sha256')
    .update(`oauth:${keys.spAppid}:${keys.merchantPrivateKeyPem}`)
    .digest('hex')
    .slice(0, 32);
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
      `<!doctype html><html lang="zh-CN"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>微信授权</title><body style="font-family:sans-serif;padding:2rem"><h1>授权失败</h1><p>${escapeHtml(reason)}</p></body></html>`,
    );
}

/** The bridge's script, with this sandbox's address in it. */
function bridgeScript(base: string): string {
  return `(function () {
  if (window.WeixinJSBridge) return;
  var endpoint = ${JSON.stringify(`${base}/js-bridge/getBrandWCPayRequest`)};
  window.WeixinJSBridge = {
    invoke: function (name, params, callback) {
      var done = typeof callback === 'function' ? callback : function () {};
      if (name !== 'getBrandWCPayRequest') { setTimeout(function () { done({ err_msg: name + ':fail' }); }); return; }
      var choice = window.__wechatSandboxBuyer || 'pay';
      if (choice === 'cancel') { setTimeout(function () { done({ err_msg: 'get_brand_wcpay_request:cancel' }); }); return; }
      fetch(endpoint, { method: 'POST', credentials: 'include', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(params || {}) })
        .then(function (r) { return r.json(); })
        .then(function (a) { done({ err_msg: a.err_msg, err_desc: a.err_desc }); },
              function () { done({ err_msg: 'get_brand_wcpay_request:fail' }); });
    }
  };
  var ready = function () { document.dispatchEvent(new Event('WeixinJSBridgeReady')); };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready); else setTimeout(ready);
})();
`;
}

export function oauthRoutes(
  router: Router,
  ctx: SandboxContext,
  options: { base: string; merchantKey: KeyObject },
): void {
  const { keys, store, callbacks, logger } = ctx;
  const secret = spAppSecretOf(keys);
  const codes = new Map<string, IssuedCode>();
  const lifetime = CODE_LIFETIME_MS;

  router.get('/connect/oauth2/authorize', (req, res) => {
    res.set('Cache-Control', 'no-store');
    const q = req.query as Record<string, unknown>;
    const text = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : undefined);
    const appid = text('appid');
    if (appid !== keys.spAppid) {
      errorPage(res, '参数错误: appid 无效 (40013)');
      return;
    }
    if (text('response_type') !== 'code') {
      errorPage(res, '参数错误: response_type 应为 code');
      return;
    }
    const scope = text('scope');
    if (scope !== 'snsapi_base' && scope !== 'snsapi_userinfo') {
      errorPage(res, 'Scope 参数错误或没有 Scope 权限');
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
    if (state.length > MAX_STATE || !/^[0-9A-Za-z._~-]*$/.test(state)) {
      errorPage(res, 'state 参数错误: 最多 128 字节的 a-zA-Z0-9');
      return;
    }
    const user = userOf(req, res);
    const code = randomBytes(16).toString('hex');
    codes.set(code, { appid, openid: openidOf(appid, user), expiresAt: Date.now() + lifetime, used: false });
    redirect.searchParams.append('code', code);
    redirect.searchParams.append('state', state);
    res.redirect(302, redirect.toString());
  });

  router.get('/sns/oauth2/access_token', (req, res) => {
    res.set('Cache-Control', 'no-store');
    const q = req.query as Record<string, unknown>;
    const fail = (errcode: number, errmsg: string) =>
      res.json({ errcode, errmsg: `${errmsg}, rid: ${randomBytes(4).toString('hex')}` });
    if (q.appid !== keys.spAppid) return fail(40013, 'invalid appid');
    if (q.secret !== secret) return fail(40125, 'invalid appsecret');
    if (q.grant_type !== 'authorization_code') return fail(40002, 'invalid grant_type');
    const issued = typeof q.code === 'string' ? codes.get(q.code) : undefined;
    if (!issued || issued.appid !== q.appid || issued.expiresAt < Date.now())
      return fail(40029, 'invalid code');
    if (issued.used) return fail(40163, 'code been used');
    issued.used = true;
    return res.json({
      access_token: randomBytes(24).toString('base64url'),
      expires_in: 7200,
      refresh_token: randomBytes(24).toString('base64url'),
      openid: issued.openid,
      scope: 'snsapi_base',
    });
  });

  router.get('/js-bridge.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'no-store').send(bridgeScript(options.base));
  });

  router.post('/js-bridge/getBrandWCPayRequest', (req, res) => {
    res.set('Cache-Control', 'no-store');
    const fail = (desc: string) => {
      logger.info('wechatpay sandbox bridge refused a payment', { reason: desc });
      res.json({ err_msg: 'get_brand_wcpay_request:fail', err_desc: desc });
    };
    const body = jsonBody(req) as Record<string, unknown> | undefined;
    const field = (k: string) => (typeof body?.[k] === 'string' ? (body[k] as string) : '');
    const [appId, timeStamp, nonceStr, pkg, signType, paySign] = [
      'appId',
      'timeStamp',
      'nonceStr',
      'package',
      'signType',
      'paySign',
    ].map(field) as [string, string, string, string, string, string];
    if (appId !== keys.spAppid) return fail('appId is not the app the order was made for');
    if (!/^\d{10}$/.test(timeStamp) || nonceStr === '' || signType !== 'RSA') {
      return fail('timeStamp, nonceStr or signType is missing or malformed');
    }
    const prepayId = /^prepay_id=(\S+)$/.exec(pkg)?.[1];
    const order = prepayId ? store.findOrderByPrepayId(prepayId, Date.now()) : undefined;
    if (!order) return fail('package names no prepay_id');
    const valid = createVerify('RSA-SHA256')
      .update(`${appId}\n${timeStamp}\n${nonceStr}\n${pkg}\n`)
      .verify(options.merchantKey, paySign, 'base64');
    if (!valid) return fail('paySign is not the merchant key’s signature');
    const openid = openidOf(appId, userOf(req, res));
    if (order.request.payer?.sp_openid !== undefined && order.request.payer.sp_openid !== openid) {
      return fail('the order is another WeChat user’s');
    }
    if (order.state === 'CLOSED') return fail('订单已关闭');
    const { paid } = store.buyerActs(order, 'pay', Date.now());
    logger.info('wechatpay sandbox bridge paid', { out_trade_no: order.request.out_trade_no });
    if (paid) callbacks.notifyPaid(order);
    return res.json({ err_msg: 'get_brand_wcpay_request:ok' });
  });
}
