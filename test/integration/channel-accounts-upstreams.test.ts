/**
 * Channel accounts against the offline WeChat Pay and Alipay upstreams (SPEC §5.8): one merchant
 * with an account at each takes an order at each, paid and refunded; a detached account's orders
 * still refund (each upstream keeps a trade under its sub-merchant or token, so a refund made with
 * any other account would not find it); a foreign sub_mchid and a token the gateway never issued
 * are refused, and nothing is saved.
 */
import { randomUUID } from 'node:crypto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(180_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({
    timeScale: 0.001,
    wechatpay: { timeScale: 0.01, refundDelayMs: 200 },
    alipay: { timeScale: 0.001, refundDelayMs: 200 },
  });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Created {
  trade_no: string;
  pay_credential: Record<string, string>;
}

async function bareMerchant(): Promise<string> {
  const merchantId = `m-${randomUUID().slice(0, 12)}`;
  expect(
    (await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' })).code,
  ).toBe('success');
  return merchantId;
}

async function create(channel: string, merchantId: string): Promise<Created> {
  const a = await pay.post<Created>(
    '/api/v1/pay/unified-order',
    pay.orderBody({
      channel_code: channel,
      merchant_id: merchantId,
      expire_minutes: 1440,
      subject: 'Green tea',
    }),
  );
  if (a.code !== 'success') throw new Error(`create failed: ${a.status} ${a.code} ${a.message}`);
  return a.data!;
}

/** The buyer pays at the upstream's checkout: WeChat Pay's code_url page, Alipay's cashier. */
async function paid(channel: 'wechatpay' | 'alipay', merchantId: string): Promise<Created> {
  const created = await create(channel, merchantId);
  const url =
    channel === 'wechatpay'
      ? created.pay_credential.code_url!
      : (created.pay_credential.qr_code ??
        `${stack.alipay!.baseUrl}/cashier/${created.pay_credential.trade_no!}`);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: channel === 'wechatpay' ? 'pay' : 'success' }),
  });
  expect(res.status).toBe(200);
  await pay.statusIs(created.trade_no, 'paid');
  return created;
}

async function refunded(tradeNo: string, amount: number, total: number): Promise<void> {
  const a = await pay.post('/api/v1/pay/refund', { trade_no: tradeNo, refund_amount: amount });
  expect({ status: a.status, code: a.code, message: a.message }).toMatchObject({
    status: 200,
    code: 'success',
  });
  await until(
    `${tradeNo} refunded ${total}`,
    async () => (Number((await pay.query(tradeNo)).refunded_amount) === total ? true : undefined),
    60_000,
  );
}

const accountRows = (merchantId: string) =>
  pay.count('SELECT count(*) AS n FROM merchant_channel_accounts WHERE merchant_id = :m', { m: merchantId });

test('when a merchant has a WeChat Pay and an Alipay account, then it sells at both, and a detached account’s orders still refund with it', async () => {
  const merchantId = await bareMerchant();
  const token = stack.alipay!.sandbox.mintAppAuthToken({});
  const wechat = await pay.put(`/api/v1/merchant/${merchantId}/channel-accounts/wechatpay`, {
    sub_mchid: '1900000109',
  });
  expect(wechat).toMatchObject({ status: 200, data: { channel_code: 'wechatpay', sub_mchid: '1900000109' } });
  const alipay = await pay.put(`/api/v1/merchant/${merchantId}/channel-accounts/alipay`, {
    app_auth_token: token.appAuthToken,
  });
  expect(alipay).toMatchObject({
    status: 200,
    data: {
      channel_code: 'alipay',
      user_id: token.userId,
      status: 'active',
      token_expires_at: expect.any(String),
    },
  });
  // Shown masked, never whole.
  expect(JSON.stringify(alipay.data)).not.toContain(token.appAuthToken);
  expect((alipay.data as { app_auth_token: string }).app_auth_token).toMatch(/^\*+.{4}$/);

  const atWechat = await paid('wechatpay', merchantId);
  const atAlipay = await paid('alipay', merchantId);
  await refunded(atWechat.trade_no, 30, 30);
  await refunded(atAlipay.trade_no, 30, 30);

  // Detached, both: new orders are refused; earlier orders refund with the account they were made with.
  expect((await pay.del(`/api/v1/merchant/${merchantId}/channel-accounts/wechatpay`)).status).toBe(200);
  expect((await pay.del(`/api/v1/merchant/${merchantId}/channel-accounts/alipay`)).status).toBe(200);
  for (const channel of ['wechatpay', 'alipay']) {
    const refused = await pay.post(
      '/api/v1/pay/unified-order',
      pay.orderBody({ channel_code: channel, merchant_id: merchantId }),
    );
    expect(refused).toMatchObject({
      status: 502,
      code: 'channel_create_fail',
      message: `merchant ${merchantId} has no account at channel ${channel}`,
    });
  }
  await refunded(atWechat.trade_no, 70, 100);
  await refunded(atAlipay.trade_no, 70, 100);
});

test('when a sub_mchid of another service provider or a token the gateway never issued is attached, then 400 invalid_param with the channel’s reason and nothing is saved', async () => {
  const merchantId = await bareMerchant();
  const foreign = await pay.put(`/api/v1/merchant/${merchantId}/channel-accounts/wechatpay`, {
    sub_mchid: '1999900001',
  });
  expect(foreign).toMatchObject({ status: 400, code: 'invalid_param' });
  expect(foreign.message).toMatch(/^channel wechatpay refused the account: /);
  const invalid = await pay.put(`/api/v1/merchant/${merchantId}/channel-accounts/alipay`, {
    app_auth_token: 'forged.token-1',
  });
  expect(invalid).toMatchObject({ status: 400, code: 'invalid_param' });
  expect(invalid.message).toMatch(/^channel alipay refused the account: /);
  expect(invalid.message).not.toContain('forged.token-1');
  expect(await accountRows(merchantId)).toBe(0);
  expect((await pay.get(`/api/v1/merchant/${merchantId}`)).data).toMatchObject({
    status: 'created',
    channel_accounts: [],
  });
});
