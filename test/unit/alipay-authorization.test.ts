/**
 * Alipay third-party app authorisation (第三方应用授权) end to end against the offline gateway:
 * durapay's adapter (alipay-sdk's wire, answers' signatures checked) builds the page's URL from
 * the settings that point it at the gateway; the page is driven over HTTP as a browser would
 * (GET it, post its form, read the 302 without following it); the code it hands back is
 * exchanged, the token refreshed, and trades made before a refresh are reached after it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AlipaySdk } from 'alipay-sdk';
import express from 'express';
import {
  alipaySettings,
  createAlipaySandbox,
  generateAlipaySandboxKeys,
  type AlipaySandbox,
  type AlipaySandboxKeys,
} from '../../sandbox/alipay';
import { AlipayChannel } from '../../src/channels/alipay';
import { authPageUrlOf } from '../../src/channels/alipay/config';
import { authorizedTokenOf } from '../../src/channels/alipay/transformers';
import { ChannelError } from '../../src/channels/errors';
import type { AuthorizedToken, ChannelContext } from '../../src/channels/ports';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/platform/config-parts';

jest.setTimeout(30_000);

/** A replaced token's 10 minutes of grace last 3 s; a code's day, 432 s. */
const TIME_SCALE = 0.005;
const GRACE_MS = 10 * 60_000 * TIME_SCALE;
const DAY_S = 86_400;
const REDIRECT = 'https://merchant.example/alipay/authorised?from=durapay';

let keys: AlipaySandboxKeys;
let sandbox: AlipaySandbox;
let server: http.Server;
let channel: AlipayChannel;
let origin = '';
let sequence = 0;

const no = (prefix: string) => `${prefix}${Date.now()}${sequence++}`;
const authorization = () => channel.accounts.authorization;

beforeAll(async () => {
  keys = generateAlipaySandboxKeys();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox = createAlipaySandbox({ keys, publicBaseUrl: `${origin}/alipay`, timeScale: TIME_SCALE });
  app.use('/alipay', sandbox.router);
  // As `npm start` and the test stacks configure it: the offline upstream's settings, read.
  channel = new AlipayChannel({
    ...loadConfig(alipaySettings(keys, `${origin}/alipay`)).alipay!,
    timeoutMs: 5_000,
  });
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<ChannelError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ChannelError)) throw new Error(`expected a ChannelError, got ${String(err)}`);
  return err;
}

const unescapeHtml = (text: string) =>
  text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(+code));

/** The page's form: where it posts and its hidden fields. */
function formOf(html: string, pageUrl: string): { action: URL; fields: Record<string, string> } {
  const action = /<form id="app-auth" method="post" action="([^"]+)">/.exec(html)?.[1];
  if (!action) throw new Error(`no form app-auth on the page:\n${html}`);
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
      m[1]!,
      unescapeHtml(m[2]!),
    ]),
  );
  return { action: new URL(unescapeHtml(action), pageUrl), fields };
}

/** The merchant on the page: opens it, presses a button, and answers where the 302 sends it. */
async function onThePage(
  button: 'authorize' | 'cancel',
  options: { state?: string; userId?: string } = {},
): Promise<URL> {
  const url = authorization().pageUrl({ redirectUri: REDIRECT, state: options.state ?? no('S') });
  const page = await fetch(url);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('id="authorize"');
  expect(html).toContain('id="cancel"');
  const { action, fields } = formOf(html, url);
  const posted = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams({ ...fields, user_id: options.userId ?? '', action: button }).toString(),
  });
  expect(posted.status).toBe(302);
  return new URL(posted.headers.get('location')!);
}

async function authorisedCode(options: { state?: string; userId?: string } = {}): Promise<string> {
  const back = await onThePage('authorize', options);
  const code = back.searchParams.get('app_auth_code');
  if (!code) throw new Error(`no app_auth_code in ${back.toString()}`);
  return code;
}

const tokenCtx = (token: AuthorizedToken): ChannelContext => ({
  subMerchantNo: token.userId,
  appAuthToken: token.appAuthToken,
});

describe('the authorisation page’s URL', () => {
  test('when the gateway is one of Alipay’s, then the page is Alipay’s own for it, unless ALIPAY_AUTH_PAGE_URL says otherwise', () => {
    expect(authPageUrlOf({ gatewayUrl: 'https://openapi.alipay.com/gateway.do' })).toBe(
      'https://openauth.alipay.com/oauth2/appToAppAuth.htm',
    );
    expect(authPageUrlOf({ gatewayUrl: 'https://openapi.alipaydev.com/gateway.do' })).toBe(
      'https://openauth.alipaydev.com/oauth2/appToAppAuth.htm',
    );
    expect(authPageUrlOf({ gatewayUrl: 'https://openapi-sandbox.dl.alipaydev.com/gateway.do' })).toBe(
      'https://openauth-sandbox.dl.alipaydev.com/oauth2/appToAppAuth.htm',
    );
    expect(
      authPageUrlOf({
        gatewayUrl: 'https://openapi.alipay.com/gateway.do',
        authPageUrl: 'https://auth.proxy.example/appToAppAuth.htm',
      }),
    ).toBe('https://auth.proxy.example/appToAppAuth.htm');
  });

  test('when the gateway is the offline one, then its page beside gateway.do is the page, from its settings alone', () => {
    const settings = alipaySettings(keys, `${origin}/alipay`);
    expect(settings).not.toHaveProperty('ALIPAY_AUTH_PAGE_URL');
    expect(authPageUrlOf(loadConfig(settings).alipay!)).toBe(`${origin}/alipay/oauth2/appToAppAuth.htm`);
    const set = loadConfig({
      ...settings,
      ALIPAY_AUTH_PAGE_URL: 'https://openauth.alipaydev.com/oauth2/appToAppAuth.htm',
    });
    expect(set.alipay!.authPageUrl).toBe('https://openauth.alipaydev.com/oauth2/appToAppAuth.htm');
    expect(() => loadConfig({ ...settings, ALIPAY_AUTH_PAGE_URL: 'ftp://x/appToAppAuth.htm' })).toThrow(
      ConfigError,
    );
  });

  test('when the page URL is built, then it names the app, and the redirect URI and state url-encoded', () => {
    const production = new AlipayChannel({
      gatewayUrl: 'https://openapi.alipay.com/gateway.do',
      appId: keys.appId,
      privateKey: keys.appPrivateKeyPem,
      alipayPublicKey: keys.alipayPublicKeyPem,
      timeoutMs: 5_000,
    });
    const url = production.accounts.authorization.pageUrl({
      redirectUri: 'https://shop.example/back?x=1&y=two words',
      state: 'st/ate+1',
    });
    expect(url).toBe(
      `https://openauth.alipay.com/oauth2/appToAppAuth.htm?app_id=${keys.appId}` +
        '&redirect_uri=https%3A%2F%2Fshop.example%2Fback%3Fx%3D1%26y%3Dtwo%20words&state=st%2Fate%2B1',
    );
    expect(() => production.accounts.authorization.pageUrl({ redirectUri: '/back', state: 's' })).toThrow(
      ChannelError,
    );
  });
});

describe('the offline gateway’s page', () => {
  test('when the merchant authorises, then the browser goes back to the redirect URI with the app, a code and the state', async () => {
    const back = await onThePage('authorize', { state: 'state-1' });
    expect(`${back.origin}${back.pathname}`).toBe('https://merchant.example/alipay/authorised');
    expect(back.searchParams.get('from')).toBe('durapay');
    expect(back.searchParams.get('app_id')).toBe(keys.appId);
    expect(back.searchParams.get('state')).toBe('state-1');
    expect(back.searchParams.get('app_auth_code')).toMatch(/^[0-9a-f]{32}$/);
  });

  test('when the merchant cancels, then the browser goes back with the state and access_denied, and no code', async () => {
    const back = await onThePage('cancel', { state: 'state-2' });
    expect(back.searchParams.get('state')).toBe('state-2');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.has('app_auth_code')).toBe(false);
  });

  test('when the page names another app or no usable redirect URI, then it is an error page and no redirect', async () => {
    const page = `${origin}/alipay/oauth2/appToAppAuth.htm`;
    const redirect = encodeURIComponent(REDIRECT);
    for (const [query, reason] of [
      [`app_id=2021000000000000&redirect_uri=${redirect}`, /app_id names no app/],
      [`app_id=${keys.appId}`, /redirect_uri is missing/],
      [`app_id=${keys.appId}&redirect_uri=%2Fback`, /redirect_uri is not an absolute URL/],
      [
        `app_id=${keys.appId}&redirect_uri=${encodeURIComponent('javascript:alert(1)')}`,
        /not an http\(s\) URL/,
      ],
    ] as const) {
      const res = await fetch(`${page}?${query}`, { redirect: 'manual' });
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(await res.text()).toMatch(reason);
    }
    const posted = await fetch(page, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({
        app_id: '2021000000000000',
        redirect_uri: REDIRECT,
        action: 'authorize',
      }).toString(),
    });
    expect(posted.status).toBe(400);
    expect(posted.headers.get('location')).toBeNull();
  });

  test('when the page is shown, then it runs no script, and its form’s redirects may go on wherever the app sends the browser', async () => {
    const res = await fetch(authorization().pageUrl({ redirectUri: REDIRECT, state: 's' }));
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    // Chromium checks each redirect after a form's submission against form-action: the app's
    // return sends the browser on to its own redirect_url, an origin this page cannot know.
    expect(csp).not.toContain('form-action');
    expect(await res.text()).not.toMatch(/<script/i);
  });
});

describe('exchanging and refreshing', () => {
  test('when the page’s code is exchanged, then the merchant’s token is confirmed by Alipay’s query and expires when expires_in says', async () => {
    const before = Date.now();
    const token = await authorization().exchange(await authorisedCode());
    expect(token.userId).toMatch(/^2088\d{12}$/);
    expect(token.authAppId).toMatch(/^\d{16}$/);
    expect(token.appAuthToken).not.toBe(token.refreshToken);
    expect(token.expiresAt!.getTime()).toBeGreaterThanOrEqual(before + 365 * DAY_S * 1000 - 1_000);
    expect(token.refreshExpiresAt!.getTime()).toBeGreaterThanOrEqual(before + 372 * DAY_S * 1000 - 1_000);
    const confirmed = await channel.accounts.confirm(
      {},
      { kind: 'app_auth_token', value: token.appAuthToken },
    );
    expect(confirmed.accountNo).toBe(token.userId);
  });

  test('when a code is exchanged a second time, then Alipay refuses it and the error does not quote it', async () => {
    const code = await authorisedCode();
    await authorization().exchange(code);
    const err = await failure(authorization().exchange(code));
    expect(err.kind).toBe('refused');
    expect(err.message).toMatch(/isv\.code-invalid/);
    expect(err.message).not.toContain(code);
    const unknown = await failure(authorization().exchange('0123456789abcdef0123456789abcdef'));
    expect(unknown.message).toMatch(/isv\.code-invalid/);
  });

  test('when a token is refreshed, then the new token is confirmed, and the old one works for the grace Alipay gives and not after', async () => {
    const first = await authorization().exchange(await authorisedCode());
    const second = await authorization().refresh(first.refreshToken);
    expect(second).toMatchObject({ userId: first.userId, authAppId: first.authAppId });
    expect(second.appAuthToken).not.toBe(first.appAuthToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    const confirm = (token: string) => channel.accounts.confirm({}, { kind: 'app_auth_token', value: token });
    await expect(confirm(second.appAuthToken)).resolves.toMatchObject({ accountNo: first.userId });
    const refreshedAt = Date.now();
    await expect(confirm(first.appAuthToken)).resolves.toMatchObject({ accountNo: first.userId });
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, refreshedAt + GRACE_MS + 200 - Date.now())),
    );
    const old = await failure(confirm(first.appAuthToken));
    expect(old.message).toMatch(/app_auth_token is invalid/);
    await expect(confirm(second.appAuthToken)).resolves.toMatchObject({ accountNo: first.userId });
  });

  test('when a refresh token is used again, then Alipay refuses it and says to use the one its refresh answered', async () => {
    const first = await authorization().exchange(await authorisedCode());
    await authorization().refresh(first.refreshToken);
    const err = await failure(authorization().refresh(first.refreshToken));
    expect(err.kind).toBe('refused');
    expect(err.message).toMatch(/isv\.refreshed-token-invalid/);
    expect(err.message).not.toContain(first.refreshToken);
    const unknown = await failure(authorization().refresh('202601BB00000000000000000000000000000000'));
    expect(unknown.message).toMatch(/isv\.refresh-token-invalid/);
  });

  test('when a refresh token has expired, then Alipay refuses the refresh and the error does not quote it', async () => {
    const token = await authorization().exchange(await authorisedCode());
    expect(sandbox.expireAppAuth(token.refreshToken)).toBe(true);
    const err = await failure(authorization().refresh(token.refreshToken));
    expect(err.kind).toBe('refused');
    expect(err.message).toMatch(/isv\.refresh-token-time-out/);
    expect(err.message).not.toContain(token.refreshToken);
  });

  test('when the gateway hands out short-lived tokens, then expires_in and re_expires_in say so and the refresh token lapses on time', async () => {
    sandbox.setAppAuthLifetimes({ expiresInSeconds: 60, reExpiresInSeconds: 1 });
    try {
      const before = Date.now();
      const token = await authorization().exchange(await authorisedCode());
      expect(token.expiresAt!.getTime() - before).toBeGreaterThanOrEqual(58_000);
      expect(token.expiresAt!.getTime() - before).toBeLessThanOrEqual(61_000);
      expect(token.refreshExpiresAt!.getTime() - before).toBeLessThanOrEqual(2_000);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const err = await failure(authorization().refresh(token.refreshToken));
      expect(err.message).toMatch(/isv\.refresh-token-time-out/);
    } finally {
      sandbox.setAppAuthLifetimes({ expiresInSeconds: 365 * DAY_S, reExpiresInSeconds: 372 * DAY_S });
    }
  });

  test('when a merchant authorises again on the page, then its new token is the same merchant’s and reaches its trades', async () => {
    const first = await authorization().exchange(await authorisedCode());
    const again = await authorization().exchange(await authorisedCode({ userId: first.userId }));
    expect(again).toMatchObject({ userId: first.userId, authAppId: first.authAppId });
    const tradeNo = await createTrade(tokenCtx(first));
    await expect(channel.payments.query(tokenCtx(again), tradeNo)).resolves.toMatchObject({
      status: 'pending',
    });
  });
});

async function createTrade(ctx: ChannelContext): Promise<string> {
  const tradeNo = no('P');
  const created = await channel.payments.create(
    { ...ctx, currency: 'CNY' },
    {
      tradeNo,
      amount: 250,
      payMethod: 'qr_code',
      subject: 'Oolong',
      expireAt: new Date(Date.now() + 3_600_000),
      callbackUrl: `${origin}/notify`,
      profitSharing: false,
    },
  );
  // Scanning the code makes the trade Alipay's.
  expect((await fetch(String(created.payCredential.qr_code))).status).toBe(200);
  return tradeNo;
}

describe('trades across a refresh', () => {
  test('when a paid trade was made with the old token, then it is refunded with the new one once the old one stopped working', async () => {
    const first = await authorization().exchange(await authorisedCode());
    const tradeNo = await createTrade(tokenCtx(first));
    const paid = await fetch(`${origin}/alipay/cashier/${sandbox.trade(tradeNo)!.trade_no}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'success' }),
    });
    expect(paid.status).toBe(200);
    const second = await authorization().refresh(first.refreshToken);
    // Past the old token's grace.
    expect(sandbox.expireAppAuth(first.appAuthToken)).toBe(true);
    const refused = await failure(channel.payments.query(tokenCtx(first), tradeNo));
    expect(refused.kind).toBe('refused');
    expect(refused.message).toMatch(/aop\.invalid-app-auth-token/);
    await expect(channel.payments.query(tokenCtx(second), tradeNo)).resolves.toMatchObject({
      status: 'paid',
    });
    const refund = await channel.refunds.refund(tokenCtx(second), {
      tradeNo,
      refundNo: no('R'),
      amount: 250,
      totalAmount: 250,
      callbackUrl: `${origin}/notify`,
    });
    expect(refund.status).toBe('success');
    expect(sandbox.trade(tradeNo)).toMatchObject({
      app_auth_token: first.appAuthToken,
      status: 'TRADE_CLOSED',
    });
  });
});

describe('the token answer', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const fields = {
    app_auth_token: '202601BBaaaa',
    app_refresh_token: '202601BBbbbb',
    auth_app_id: '2021000000000001',
    user_id: '2088000000000001',
  };

  test('when Alipay answers the older flat fields, with seconds as strings, then they are read', () => {
    expect(
      authorizedTokenOf({ code: '10000', ...fields, expires_in: '60', re_expires_in: '120' }, now),
    ).toEqual({
      appAuthToken: '202601BBaaaa',
      refreshToken: '202601BBbbbb',
      authAppId: '2021000000000001',
      userId: '2088000000000001',
      expiresAt: new Date('2026-01-01T00:01:00Z'),
      refreshExpiresAt: new Date('2026-01-01T00:02:00Z'),
    });
  });

  test('when Alipay answers the tokens list, then its entry is read over any flat field', () => {
    const answer = { code: '10000', user_id: '2088000000000009', tokens: [{ ...fields, expires_in: 60 }] };
    expect(authorizedTokenOf(answer, now)).toMatchObject({
      userId: '2088000000000001',
      expiresAt: new Date('2026-01-01T00:01:00Z'),
      refreshExpiresAt: null,
    });
  });

  test('when a field is missing, then the answer is unreadable and the error quotes no token', () => {
    let err: unknown;
    try {
      authorizedTokenOf({ code: '10000', tokens: [{ ...fields }] }, now);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).kind).toBe('invalid_response');
    expect((err as ChannelError).message).not.toContain('202601BB');
  });

  test('when the offline gateway answers an exchange, then it carries the tokens list and the same fields flat', async () => {
    const sdk = new AlipaySdk({
      appId: keys.appId,
      privateKey: keys.appPrivateKeyPem,
      keyType: 'PKCS8',
      alipayPublicKey: keys.alipayPublicKeyPem,
      gateway: `${origin}/alipay/gateway.do`,
      camelcase: false,
    });
    const iso = new Date(Date.now() + 8 * 3_600_000).toISOString();
    const answer = (await sdk.exec(
      'alipay.open.auth.token.app',
      {
        bizContent: { grant_type: 'authorization_code', code: await authorisedCode() },
        timestamp: `${iso.slice(0, 10)} ${iso.slice(11, 19)}`,
      },
      { validateSign: true },
    )) as unknown as Record<string, unknown> & { tokens: Record<string, unknown>[] };
    expect(answer.code).toBe('10000');
    expect(answer.tokens).toHaveLength(1);
    const [entry] = answer.tokens;
    for (const key of [
      'app_auth_token',
      'app_refresh_token',
      'auth_app_id',
      'user_id',
      'expires_in',
      're_expires_in',
    ]) {
      expect({ key, flat: answer[key] }).toEqual({ key, flat: entry![key] });
    }
  });
});
