/**
 * Alipay third-party authorisation end to end (SPEC §5.8), in Debian's Chromium against the
 * offline Alipay gateway: durapay answers the authorisation page for a merchant; the merchant
 * presses Authorise there; Alipay's redirect brings the code back to durapay, which saves the
 * token sealed as the merchant's Alipay account, tells the merchant's notify_url and sends the
 * browser on to redirect_url. The order that follows carries the token, a refresh keeps it going,
 * and a refresh Alipay refuses ends it. A replayed or forged state and a cancelled authorisation
 * save nothing.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(180_000);

let browser: TestBrowser;
let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  browser = await launchBrowser();
  // Durapay and the gateway at one time scale, so that a token's life is the same to both.
  stack = await startTestStack({ timeScale: 0.001, alipay: { timeScale: 0.001, refundDelayMs: 200 } });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await stack?.stop();
});

async function bareMerchant(): Promise<string> {
  const merchantId = `m-${randomUUID().slice(0, 12)}`;
  expect(
    (await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' })).code,
  ).toBe('success');
  return merchantId;
}

async function startAuthorization(merchantId: string, more: Record<string, string> = {}): Promise<string> {
  const started = await pay.post<{ authorize_url: string; expires_at: string }>(
    `/api/v1/merchant/${merchantId}/channel-accounts/alipay/authorization`,
    { redirect_url: `${receiver.url}/authorised`, notify_url: receiver.url, ...more },
  );
  expect(started).toMatchObject({ status: 200, code: 'success' });
  return started.data!.authorize_url;
}

/** The merchant at Alipay's page: Authorise (or Cancel); where its browser lands, and what it passed through. */
async function merchantAt(authorizeUrl: string, button: 'authorize' | 'cancel') {
  return browser.run(async (page) => {
    const seen: string[] = [];
    page.on('request', (r) => {
      if (r.isNavigationRequest()) seen.push(r.url());
    });
    await page.goto(authorizeUrl);
    await page.locator(`#${button}`).click();
    if (button === 'authorize') await page.waitForURL(`${receiver.url}/authorised?**`);
    else await page.locator('#title').waitFor();
    return { landed: page.url(), title: await page.title(), text: await page.textContent('body'), seen };
  });
}

const accounts = (merchantId: string) =>
  stack.database.db.sequelize.query<{ id: string; app_auth_token: string; source: string; status: string }>(
    'SELECT id, app_auth_token, source, status FROM merchant_channel_accounts WHERE merchant_id = :m ORDER BY id',
    { replacements: { m: merchantId }, type: QueryTypes.SELECT },
  );

const accountEvents = (merchantId: string) =>
  receiver.received
    .filter((r) => r.method === 'POST')
    .map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
    .filter((b) => b.type === 'merchant.channel_account.updated' && b.data.merchant_id === merchantId);

async function paidAlipayOrder(merchantId: string) {
  const created = await pay.post<{ trade_no: string; pay_credential: Record<string, string> }>(
    '/api/v1/pay/unified-order',
    pay.orderBody({ channel_code: 'alipay', merchant_id: merchantId, expire_minutes: 1440 }),
  );
  expect(created).toMatchObject({ status: 200, code: 'success' });
  const order = created.data!;
  const res = await fetch(order.pay_credential.qr_code!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'success' }),
  });
  expect(res.status).toBe(200);
  await pay.statusIs(order.trade_no, 'paid');
  return order;
}

test('when a merchant authorises durapay’s app in its browser, then its token is its Alipay account, its orders carry it, refreshes keep it, and a refused refresh ends it', async () => {
  const merchantId = await bareMerchant();
  // An hour's token at 1/1000: refreshed every 1.8 s, half its life before it ends.
  stack.alipay!.sandbox.setAppAuthLifetimes({ expiresInSeconds: 3600, reExpiresInSeconds: 7200 });
  const authorizeUrl = await startAuthorization(merchantId);
  const back = await merchantAt(authorizeUrl, 'authorize');

  // Through durapay's return path, on to redirect_url with the outcome.
  expect(back.seen.some((u) => u.includes('/api/v1/channels/alipay/app-auth?'))).toBe(true);
  const landed = new URL(back.landed);
  expect(Object.fromEntries(landed.searchParams)).toEqual({
    merchant_id: merchantId,
    channel_code: 'alipay',
    result: 'authorized',
  });
  const [saved] = await accounts(merchantId);
  expect(saved).toMatchObject({ source: 'authorized', status: 'active' });
  expect(saved!.app_auth_token).toMatch(/^dpf1:/);
  const merchant = await pay.get<{ channel_accounts: Record<string, unknown>[] }>(
    `/api/v1/merchant/${merchantId}`,
  );
  expect(merchant.data!.channel_accounts).toEqual([
    expect.objectContaining({
      channel_code: 'alipay',
      source: 'authorized',
      status: 'active',
      user_id: expect.stringMatching(/^2088\d{12}$/),
    }),
  ]);
  await until('announced', async () => (accountEvents(merchantId).length > 0 ? true : undefined));
  expect(accountEvents(merchantId)[0]!.data).toMatchObject({
    channel_code: 'alipay',
    status: 'active',
    app_id: app.app_id,
  });

  // The order carries the token: the gateway files it under this merchant's authorisation.
  const order = await paidAlipayOrder(merchantId);
  const before = saved!.app_auth_token;
  await until('token refreshed', async () =>
    (await accounts(merchantId))[0]!.app_auth_token !== before ? true : undefined,
  );
  // An order made before the refresh is refunded with the refreshed token.
  expect(
    await pay.post('/api/v1/pay/refund', { trade_no: order.trade_no, refund_amount: 100 }),
  ).toMatchObject({
    code: 'success',
  });
  await until('refunded', async () =>
    (await pay.query(order.trade_no)).status === 'refunded' ? true : undefined,
  );

  // Tokens made from now on cannot be refreshed: the next refresh is refused, the account expires.
  stack.alipay!.sandbox.setAppAuthLifetimes({ reExpiresInSeconds: 1 });
  await until(
    'expired',
    async () => ((await accounts(merchantId))[0]!.status === 'expired' ? true : undefined),
    60_000,
  );
  await until('expiry announced', async () =>
    accountEvents(merchantId).some((e) => e.data.status === 'expired') ? true : undefined,
  );
  const refused = await pay.post(
    '/api/v1/pay/unified-order',
    pay.orderBody({ channel_code: 'alipay', merchant_id: merchantId }),
  );
  expect(refused).toMatchObject({ status: 502, code: 'channel_create_fail' });
  expect(refused.message).toContain('is expired');
});

test('when the return is replayed, forged, or the merchant cancels, then a clear page says so and nothing is saved', async () => {
  const merchantId = await bareMerchant();
  const authorizeUrl = await startAuthorization(merchantId);

  const cancelled = await merchantAt(authorizeUrl, 'cancel');
  expect(cancelled.text).toContain('Nothing was saved');
  expect(await accounts(merchantId)).toEqual([]);

  // The same link again (its state is still unused): authorised this time.
  const back = await merchantAt(authorizeUrl, 'authorize');
  const returned = back.seen.find((u) => u.includes('/api/v1/channels/alipay/app-auth?'))!;
  expect(await accounts(merchantId)).toHaveLength(1);

  const replayed = await fetch(returned, { redirect: 'manual' });
  expect(replayed.status).toBe(400);
  expect(await replayed.text()).toContain('not valid: it was used already');
  const forged = new URL(returned);
  forged.searchParams.set('state', 'x'.repeat(43));
  const forgedAnswer = await fetch(forged, { redirect: 'manual' });
  expect(forgedAnswer.status).toBe(400);
  expect(forgedAnswer.headers.get('content-type')).toMatch(/^text\/html/);
  expect(await accounts(merchantId)).toHaveLength(1);

  // A merchant of another app cannot be authorised through this one's path.
  expect((await pay.post('/api/v1/merchant/m-nobody/channel-accounts/alipay/authorization', {})).status).toBe(
    404,
  );
  expect(
    (
      await pay.post(`/api/v1/merchant/${merchantId}/channel-accounts/alipay/authorization`, {
        redirect_url: 'ftp://x',
      })
    ).code,
  ).toBe('invalid_param');
});

/**
 * The merchant presses Authorise on the gateway's page, over HTTP: where Alipay sends the browser
 * back (durapay's return, with the code), not followed.
 */
async function merchantAtReturn(authorizeUrl: string): Promise<string | null> {
  const page = new URL(authorizeUrl);
  const form = new URLSearchParams({
    app_id: page.searchParams.get('app_id') ?? '',
    redirect_uri: page.searchParams.get('redirect_uri') ?? '',
    state: page.searchParams.get('state') ?? '',
    user_id: '',
    action: 'authorize',
  });
  const res = await fetch(`${page.origin}${page.pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
    redirect: 'manual',
  });
  expect(res.status).toBe(302);
  return res.headers.get('location');
}

test('when the authorisation is made by another Alipay account than the one expected, or the merchant has another Alipay account, then a page says so and nothing changes', async () => {
  const merchantId = await bareMerchant();
  const expected = stack.alipay!.sandbox.mintAppAuthToken({});
  // The page authorises as a new Alipay user: not the one the app said to expect.
  const answer = await fetch(
    (await merchantAtReturn(await startAuthorization(merchantId, { expected_user_id: expected.userId })))!,
    { redirect: 'manual' },
  );
  expect(answer.status).toBe(400);
  expect(await answer.text()).toContain(`not the account ${expected.userId} it was meant for`);
  expect(await accounts(merchantId)).toEqual([]);

  // An smid attached: an authorisation does not replace it.
  await pay.attach(merchantId, 'alipay', { smid: '2088000000000991' });
  const conflict = await fetch((await merchantAtReturn(await startAuthorization(merchantId)))!, {
    redirect: 'manual',
  });
  expect(conflict.status).toBe(400);
  expect(await conflict.text()).toContain('already has another Alipay account (2088000000000991)');
  expect(await accounts(merchantId)).toEqual([
    expect.objectContaining({ source: 'attached', status: 'active' }),
  ]);
});
