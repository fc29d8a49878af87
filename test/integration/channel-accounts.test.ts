/**
 * A merchant's accounts at the channels (SPEC §5.8), through HTTP on the sandbox channel: attach,
 * list, detach, the orders that use them, and the refusals of each endpoint. The WeChat Pay and
 * Alipay confirmations are tested against their offline upstreams in their own files.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';
import { durapayBin } from '../support/state';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let other: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ sandboxRefundDelayMs: 100 });
  app = await stack.createApp(['payments', 'merchants']);
  other = await stack.createApp(['payments', 'merchants'], 'other');
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

const accountsPath = (merchantId: string, channel = 'sandbox') =>
  `/api/v1/merchant/${merchantId}/channel-accounts/${channel}`;

/** A merchant with no account yet. */
async function bareMerchant(client = pay): Promise<string> {
  const merchantId = `m-${randomUUID().slice(0, 12)}`;
  const made = await client.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' });
  expect(made.code).toBe('success');
  return merchantId;
}

const accountRows = (merchantId: string) =>
  pay.count('SELECT count(*) AS n FROM merchant_channel_accounts WHERE merchant_id = :m', { m: merchantId });

describe('PUT /api/v1/merchant/{merchantID}/channel-accounts/{channel_code}', () => {
  test('when an account is attached, then the merchant is active there and shows it, and the same body again changes nothing', async () => {
    const merchantId = await bareMerchant();
    const first = await pay.put(accountsPath(merchantId), { sub_merchant_no: 'S-100' });
    expect(first).toMatchObject({
      status: 200,
      code: 'success',
      data: { channel_code: 'sandbox', sub_merchant_no: 'S-100', status: 'active', source: 'attached' },
    });
    const again = await pay.put(accountsPath(merchantId), { sub_merchant_no: 'S-100' });
    expect(again.data).toEqual(first.data);
    expect(await accountRows(merchantId)).toBe(1);

    const merchant = await pay.get(`/api/v1/merchant/${merchantId}`);
    expect(merchant.data).toMatchObject({
      status: 'active',
      channel_code: 'sandbox',
      sub_merchant_no: 'S-100',
      channel_accounts: [first.data],
    });
    const listed = await pay.get(`/api/v1/merchant/${merchantId}/channel-accounts`);
    expect(listed.data).toEqual({ merchant_id: merchantId, list: [first.data] });
    const page = await pay.get<{ list: { merchant_id: string; channel_accounts: unknown[] }[] }>(
      '/api/v1/merchant?limit=100',
    );
    expect(page.data!.list.find((m) => m.merchant_id === merchantId)?.channel_accounts).toEqual([first.data]);
  });

  test('when another account is attached at the same channel, then it replaces the first', async () => {
    const merchantId = await bareMerchant();
    await pay.attach(merchantId, 'sandbox', { sub_merchant_no: 'S-1' });
    const second = await pay.put(accountsPath(merchantId), { sub_merchant_no: 'S-2' });
    expect(second.data).toMatchObject({ sub_merchant_no: 'S-2' });
    const listed = await pay.get<{ list: unknown[] }>(`/api/v1/merchant/${merchantId}/channel-accounts`);
    expect(listed.data!.list).toEqual([second.data]);
    expect((await pay.get(`/api/v1/merchant/${merchantId}`)).data).toMatchObject({ sub_merchant_no: 'S-2' });
  });

  test('when the channel refuses the account, then 400 invalid_param with its reason and nothing is saved', async () => {
    const merchantId = await bareMerchant();
    const refused = await pay.put(accountsPath(merchantId), { sub_merchant_no: 'foreign-1' });
    expect(refused).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(refused.message).toMatch(/channel sandbox refused the account: .*foreign-1/);
    expect(await accountRows(merchantId)).toBe(0);
    expect((await pay.get(`/api/v1/merchant/${merchantId}`)).data).toMatchObject({
      status: 'created',
      channel_code: null,
      channel_accounts: [],
    });
  });

  test.each([
    [
      'an unknown channel',
      'paypal',
      { sub_merchant_no: 'S-1' },
      /channel_code must be one of wechatpay, alipay, sandbox/,
    ],
    ['no number', 'sandbox', {}, /"sub_merchant_no" is required/],
    ['a number with a slash', 'sandbox', { sub_merchant_no: 'a/b' }, /sub_merchant_no must be 1 to 64/],
    [
      'a field of another channel',
      'sandbox',
      { sub_merchant_no: 'S-1', sub_mchid: '1900000109' },
      /"sub_mchid" is not a field of a sandbox account/,
    ],
    [
      'a WeChat Pay number that is not digits',
      'wechatpay',
      { sub_mchid: 'abc' },
      /sub_mchid must be the sub-merchant number/,
    ],
    [
      'both an smid and a token',
      'alipay',
      { smid: '2088000000000001', app_auth_token: 't' },
      /either smid or app_auth_token, not both/,
    ],
    ['neither an smid nor a token', 'alipay', {}, /one of smid or app_auth_token is required/],
    ['an smid of the wrong shape', 'alipay', { smid: '12345' }, /smid must be 2088 followed by 12 digits/],
  ])(
    'when the body has %s, then 400 invalid_param naming the field',
    async (_what, channel, body, message) => {
      const merchantId = await bareMerchant();
      const refused = await pay.put(accountsPath(merchantId, channel), body);
      expect(refused).toMatchObject({ status: 400, code: 'invalid_param' });
      expect(refused.message).toMatch(message);
      expect(await accountRows(merchantId)).toBe(0);
    },
  );

  test("when another app's merchant has the account attached, then it is refused and nothing is saved, until that app detaches it", async () => {
    const theirs = paymentsClient(stack, other, receiver);
    const theirMerchant = await bareMerchant(theirs);
    await theirs.attach(theirMerchant, 'sandbox', { sub_merchant_no: 'S-shared-1' });
    const mine = await bareMerchant();
    const refused = await pay.put(accountsPath(mine), { sub_merchant_no: 'S-shared-1' });
    expect(refused).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(refused.message).toBe('this account is attached to a merchant of another app at channel sandbox');
    expect(await accountRows(mine)).toBe(0);
    expect((await theirs.del(accountsPath(theirMerchant))).status).toBe(200);
    expect(await pay.put(accountsPath(mine), { sub_merchant_no: 'S-shared-1' })).toMatchObject({
      status: 200,
    });
  });

  test("when the merchant is unknown or another app's, then 404 order_not_found", async () => {
    const theirs = await bareMerchant(paymentsClient(stack, other, receiver));
    for (const merchantId of ['m-nobody', theirs]) {
      expect(await pay.put(accountsPath(merchantId), { sub_merchant_no: 'S-1' })).toMatchObject({
        status: 404,
        code: 'order_not_found',
        message: 'merchant not found',
      });
      expect(await pay.get(`/api/v1/merchant/${merchantId}/channel-accounts`)).toMatchObject({
        status: 404,
        code: 'order_not_found',
      });
    }
    expect(await accountRows(theirs)).toBe(0);
  });
});

describe('orders and channel accounts', () => {
  test("when a merchant has no account at the order's channel, then 502 channel_create_fail naming the channel", async () => {
    const merchantId = await bareMerchant();
    const refused = await pay.post('/api/v1/pay/unified-order', pay.orderBody({ merchant_id: merchantId }));
    expect(refused).toMatchObject({
      status: 502,
      code: 'channel_create_fail',
      message: `merchant ${merchantId} has no account at channel sandbox`,
    });
  });

  test('when an account is detached, then new orders are refused and an earlier order is still refunded with the account it was made with', async () => {
    const merchantId = await bareMerchant();
    await pay.attach(merchantId, 'sandbox', { sub_merchant_no: 'S-kept' });
    const order = await pay.paidOrder({ merchant_id: merchantId });
    expect(
      await pay.count(
        'SELECT count(*) AS n FROM sandbox_orders WHERE trade_no = :t AND sub_merchant_no = :s',
        {
          t: order.trade_no,
          s: 'S-kept',
        },
      ),
    ).toBe(1);

    const detached = await pay.del(accountsPath(merchantId));
    expect(detached).toMatchObject({
      status: 200,
      data: { merchant_id: merchantId, channel_code: 'sandbox', detached_at: expect.any(String) },
    });
    expect((await pay.get(`/api/v1/merchant/${merchantId}`)).data).toMatchObject({
      status: 'created',
      channel_code: null,
      sub_merchant_no: null,
      channel_accounts: [],
    });
    expect(
      await pay.post('/api/v1/pay/unified-order', pay.orderBody({ merchant_id: merchantId })),
    ).toMatchObject({ status: 502, code: 'channel_create_fail' });

    const refund = await pay.post('/api/v1/pay/refund', { trade_no: order.trade_no, refund_amount: 100 });
    expect(refund).toMatchObject({ status: 200, code: 'success' });
    await until(
      'refunded',
      async () => ((await pay.query(order.trade_no)).status === 'refunded' ? true : undefined),
      30_000,
    );
    expect(await pay.del(accountsPath(merchantId))).toMatchObject({ status: 404, code: 'order_not_found' });
  });

  test('when a pending order is created again after its merchant’s account was detached, then the answer is the order made, not a refusal', async () => {
    const merchantId = await bareMerchant();
    await pay.attach(merchantId, 'sandbox', { sub_merchant_no: 'S-repeat' });
    // The longest life an order may have: this stack's time scale makes the default 30 minutes
    // 180 ms, which a busy machine can spend between the first create and the repeat (the order
    // then closed, and its repeat is rightly `order_closed`).
    const body = pay.orderBody({ merchant_id: merchantId, expire_minutes: 1440 });
    const first = await pay.post<{ trade_no: string }>('/api/v1/pay/unified-order', body);
    expect(first.status).toBe(200);
    expect((await pay.del(accountsPath(merchantId))).status).toBe(200);
    const again = await pay.post('/api/v1/pay/unified-order', body);
    expect(again).toMatchObject({
      status: 200,
      data: { trade_no: first.data!.trade_no, is_idempotent: true },
    });
  });

  test('when an order is made for a merchant, then it records the account it was made with', async () => {
    const merchantId = await bareMerchant();
    await pay.attach(merchantId, 'sandbox', { sub_merchant_no: 'S-own' });
    const created = await pay.create({ merchant_id: merchantId });
    const [row] = await stack.database.db.sequelize.query<{
      sub_merchant_no: string;
      channel_account_id: string;
    }>('SELECT sub_merchant_no, channel_account_id FROM orders WHERE trade_no = :t', {
      replacements: { t: created.trade_no },
      type: 'SELECT' as never,
    });
    expect(row).toMatchObject({ sub_merchant_no: 'S-own', channel_account_id: expect.any(String) });
  });
});

describe('durapay merchants attach', () => {
  /** The CLI against this stack's database and sandbox channel; its exit code, stdout and stderr. */
  async function durapay(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [durapayBin(), ...args], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATABASE_URL: stack.database.url,
          DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
          DURAPAY_PAYLOAD_KEYS: stack.payloadKeys.env,
          SANDBOX_SECRET: stack.sandboxSecret,
          SANDBOX_BASE_URL: `${stack.baseUrl}/sandbox`,
          LOG_LEVEL: 'warn',
        },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  test('when a CSV is imported, then every good row is attached, confirmed by its channel, and each refused row is listed with its reason', async () => {
    const [a, b, c] = [await bareMerchant(), await bareMerchant(), await bareMerchant()];
    await pay.attach(c, 'sandbox', { sub_merchant_no: 'S-same' });
    const csv = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-attach-')), 'accounts.csv');
    fs.writeFileSync(
      csv,
      '\ufeffmerchant_id,channel_code,sub_merchant_no,sub_mchid\n\n' +
        `${a},sandbox,S-a,\n` +
        `${b},sandbox,foreign-b,\n` +
        'm-nobody,sandbox,S-x,\n' +
        `${c},sandbox,S-same,\n` +
        `${a},wechatpay,,not-digits\n` +
        `${a},sandbox,S-again,\n`,
    );
    const run = await durapay('merchants', 'attach', '--app', app.app_id, '--csv', csv, '--json');
    expect(run.code).toBe(1);
    const rows = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Lines as the file numbers them: the header, a blank line, then the rows.
    expect(rows.map((r) => [r.line, r.result])).toEqual([
      [3, 'attached'],
      [4, 'refused'],
      [5, 'refused'],
      [6, 'unchanged'],
      [7, 'refused'],
      [8, 'refused'],
    ]);
    expect(rows[1]!.reason).toMatch(/channel sandbox refused the account: .*foreign-b/);
    expect(rows[2]!.reason).toBe('merchant not found');
    expect(rows[4]!.reason).toMatch(/sub_mchid must be the sub-merchant number/);
    expect(rows[5]!.reason).toBe('line 3 already names this merchant at this channel');
    expect(run.stderr).toContain(
      '1 attached, 1 already attached, 4 refused, 0 not confirmed: the channel did not answer (of 6)',
    );
    expect(run.stderr).toContain(`line 4: ${b} at sandbox: channel sandbox refused the account`);

    expect((await pay.get(`/api/v1/merchant/${a}`)).data).toMatchObject({
      status: 'active',
      channel_accounts: [{ channel_code: 'sandbox', sub_merchant_no: 'S-a', source: 'attached' }],
    });
    expect(await accountRows(b)).toBe(0);
    // The account attached from the CLI takes orders.
    expect((await pay.create({ merchant_id: a })).trade_no).toEqual(expect.any(String));
  });

  test('when one account is given on the command line, then it is attached', async () => {
    const merchantId = await bareMerchant();
    const run = await durapay(
      'merchants',
      'attach',
      '--app',
      app.app_id,
      merchantId,
      'sandbox',
      'sub_merchant_no=S-one',
    );
    expect(run).toMatchObject({ code: 0 });
    expect(run.stderr).toContain('1 attached, 0 already attached, 0 refused, 0 not confirmed');
    expect((await pay.get(`/api/v1/merchant/${merchantId}`)).data).toMatchObject({
      sub_merchant_no: 'S-one',
    });
  });
});
