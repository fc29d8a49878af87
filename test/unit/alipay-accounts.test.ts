/**
 * durapay's Alipay adapter confirming a claimed account (its wire through alipay-sdk, answers'
 * signatures checked) against the offline gateway: an app_auth_token by
 * alipay.open.auth.token.app.query (valid, unknown, past its auth_end, another app's), an smid by
 * its shape; and acting for a merchant with the app_auth_token of its account, whose
 * subMerchantNo is then the merchant's user id, not a secondary merchant.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  createAlipaySandbox,
  generateAlipaySandboxKeys,
  type AlipaySandbox,
  type AlipaySandboxKeys,
} from '../../sandbox/alipay';
import { AlipayChannel } from '../../src/channels/alipay';
import { ChannelError, type ChannelErrorKind } from '../../src/channels/errors';
import type { ChannelContext } from '../../src/channels/ports';
import { freePort } from '../support/ports';

jest.setTimeout(30_000);

const DAY_S = 86_400;

let keys: AlipaySandboxKeys;
let sandbox: AlipaySandbox;
let server: http.Server;
let channel: AlipayChannel;
let origin = '';
let sequence = 0;

const no = (prefix: string) => `${prefix}${Date.now()}${sequence++}`;

function adapter(gatewayUrl: string): AlipayChannel {
  return new AlipayChannel({
    gatewayUrl,
    appId: keys.appId,
    sellerId: keys.sellerId,
    privateKey: keys.appPrivateKeyPem,
    alipayPublicKey: keys.alipayPublicKeyPem,
    timeoutMs: 5_000,
  });
}

beforeAll(async () => {
  keys = generateAlipaySandboxKeys();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox = createAlipaySandbox({ keys, publicBaseUrl: `${origin}/alipay`, timeScale: 0.001 });
  app.use('/alipay', sandbox.router);
  channel = adapter(`${origin}/alipay/gateway.do`);
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function refusal(promise: Promise<unknown>): Promise<ChannelError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ChannelError)) throw new Error(`expected a ChannelError, got ${String(err)}`);
  return err;
}

/** Now, to the second: Alipay's times have no milliseconds. */
const thisSecond = () => new Date(Math.floor(Date.now() / 1000) * 1000);

describe('confirming an app_auth_token', () => {
  test('when the token is valid and this app’s, then the merchant’s user id is the account and auth_end, read as China time, is when it expires', async () => {
    const authStart = thisSecond();
    const grant = sandbox.mintAppAuthToken({ authStart, expiresInSeconds: 30 * DAY_S });
    const confirmed = await channel.accounts.confirm(
      {},
      { kind: 'app_auth_token', value: grant.appAuthToken },
    );
    expect(confirmed).toEqual({
      accountNo: grant.userId,
      tokenExpiresAt: new Date(authStart.getTime() + 30 * DAY_S * 1000),
    });
    expect(confirmed.accountNo).toMatch(/^2088\d{12}$/);
  });

  test('when Alipay does not know the token, then it is refused with Alipay’s sub_code and sub_msg, and the token is not repeated', async () => {
    const token = '202601BBdeadbeefdeadbeefdeadbeefdeadbeef';
    const err = await refusal(channel.accounts.confirm({}, { kind: 'app_auth_token', value: token }));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toContain('isv.invalid-app-auth-token: 无效的应用授权令牌');
    expect(err.message).not.toContain(token);
  });

  test('when the token is past its auth_end, then Alipay answers it invalid and it is refused', async () => {
    const grant = sandbox.mintAppAuthToken({
      authStart: new Date(Date.now() - 2 * DAY_S * 1000),
      expiresInSeconds: DAY_S,
    });
    const err = await refusal(
      channel.accounts.confirm({}, { kind: 'app_auth_token', value: grant.appAuthToken }),
    );
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toMatch(/app_auth_token is invalid/);
  });

  test('when the token was issued to another app, then Alipay does not know it for this app and it is refused', async () => {
    const grant = sandbox.mintAppAuthToken({ isvAppId: '2021000000000999' });
    const err = await refusal(
      channel.accounts.confirm({}, { kind: 'app_auth_token', value: grant.appAuthToken }),
    );
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toContain('isv.invalid-app-auth-token');
  });

  test('when Alipay cannot be reached, then the confirmation is unreachable, not refused', async () => {
    const closed = adapter(`http://127.0.0.1:${await freePort()}/alipay/gateway.do`);
    const err = await refusal(closed.accounts.confirm({}, { kind: 'app_auth_token', value: '202601BBabc' }));
    expect(err.kind).toBe<ChannelErrorKind>('unreachable');
  });
});

describe('confirming an smid', () => {
  test('when the smid has the shape Alipay gives, then it is the account, taken as given (Alipay has no read by smid)', async () => {
    const before = sandbox.requests('ant.merchant.expand.indirect.zftorder.query');
    await expect(channel.accounts.confirm({}, { kind: 'smid', value: '2088000000000003' })).resolves.toEqual({
      accountNo: '2088000000000003',
    });
    expect(sandbox.requests('ant.merchant.expand.indirect.zftorder.query')).toBe(before);
  });

  test('when the smid is malformed or the claim names no Alipay account, then it is refused', async () => {
    for (const claim of [
      { kind: 'smid', value: '2088-bad' } as const,
      { kind: 'sub_mchid', value: '1900000109' } as const,
    ]) {
      const err = await refusal(channel.accounts.confirm({}, claim));
      expect(err.kind).toBe<ChannelErrorKind>('refused');
    }
  });
});

describe('acting for a merchant', () => {
  /** A qr_code trade made by the adapter, its code scanned (Alipay has the trade from then on). */
  async function createTrade(ctx: ChannelContext): Promise<string> {
    const tradeNo = no('P');
    const created = await channel.payments.create(
      { ...ctx, currency: 'CNY' },
      {
        tradeNo,
        amount: 100,
        payMethod: 'qr_code',
        subject: 'Green tea',
        expireAt: new Date(Date.now() + 3_600_000),
        callbackUrl: `${origin}/notify`,
        profitSharing: false,
      },
    );
    expect((await fetch(String(created.payCredential.qr_code))).status).toBe(200);
    return tradeNo;
  }

  test('when the context carries the account’s app_auth_token, then trades are made and asked about with it, and the user id is not taken for an smid', async () => {
    const grant = sandbox.mintAppAuthToken();
    const ctx = { subMerchantNo: grant.userId, appAuthToken: grant.appAuthToken };
    const tradeNo = await createTrade(ctx);
    const trade = sandbox.trade(tradeNo);
    expect(trade).toMatchObject({ app_auth_token: grant.appAuthToken });
    expect(trade).not.toHaveProperty('sub_merchant');
    // The gateway keeps each merchant's trades apart: found only with the same token.
    await expect(channel.payments.query(ctx, tradeNo)).resolves.toMatchObject({ status: 'pending' });
    await expect(channel.payments.query({ subMerchantNo: grant.userId }, tradeNo)).resolves.toEqual({
      status: 'not_found',
    });
  });

  test('when the context has no token, then an smid is named in the trade and any other number is the token, as before', async () => {
    const smidTrade = sandbox.trade(await createTrade({ subMerchantNo: '2088000000000003' }));
    expect(smidTrade).toMatchObject({ sub_merchant: { merchant_id: '2088000000000003' } });
    expect(smidTrade).not.toHaveProperty('app_auth_token');
    const tokenTrade = sandbox.trade(await createTrade({ subMerchantNo: '202611BBlegacy0123456789' }));
    expect(tokenTrade).toMatchObject({ app_auth_token: '202611BBlegacy0123456789' });
    expect(tokenTrade).not.toHaveProperty('sub_merchant');
  });
});
