/**
 * `channel_code: "wechatpay"` through durapay's HTTP API, against the offline WeChat Pay v3
 * sandbox (sandbox/wechatpay) mounted in the stack's API, with real Temporal and Postgres:
 * creates of every pay method, the buyer paying at the sandbox's checkout, the signed and
 * encrypted callback, polling when the callback is lost, forged callbacks, closes and refunds.
 *
 * Each test's merchant is given its sub_mchid directly in the read model, as finished onboarding
 * would, so that these tests stand apart from onboarding (wechatpay-onboarding.test.ts).
 */
import { createVerify, randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { decodeQrDataUrl } from '../support/qr';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';
import { postTransactionNotification } from '../support/wechatpay-notify';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let merchantId: string;
const SUB_MCHID = '1900000109';

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.001, wechatpay: { timeScale: 0.01, refundDelayMs: 200 } });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = `MWX-${randomUUID().slice(0, 8)}`;
  const created = await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' });
  expect(created.code).toBe('success');
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: SUB_MCHID });
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Created {
  trade_no: string;
  is_idempotent: boolean;
  pay_credential: Record<string, string>;
}

// A day to pay (86 s at this stack's time scale): a loaded machine must not expire an order
// before its buyer pays. The expiry test sets its own.
const wechatOrder = (overrides: Record<string, unknown> = {}) =>
  pay.orderBody({
    channel_code: 'wechatpay',
    merchant_id: merchantId,
    subject: 'Green tea',
    expire_minutes: 1440,
    ...overrides,
  });

async function create(overrides: Record<string, unknown> = {}): Promise<Created> {
  const a = await pay.post<Created>('/api/v1/pay/unified-order', wechatOrder(overrides));
  if (a.code !== 'success') throw new Error(`create failed: ${a.status} ${a.code} ${a.message}`);
  return a.data!;
}

/** The buyer at the sandbox's checkout: a page URL (code_url, h5_url) or a prepay id. */
async function buyerPays(target: { url?: string; prepayId?: string }, result = 'pay'): Promise<void> {
  const url = target.url ?? `${stack.wechatpay!.baseUrl}/checkout/prepay/${target.prepayId!}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result }),
  });
  expect(res.status).toBe(200);
}

/** A TRANSACTION.SUCCESS notification as WeChat Pay sends it, encrypted and signed with `signer`. */
function transactionNotification(
  tradeNo: string,
  over: { amount?: number; subMchid?: string },
  signer: string,
) {
  return postTransactionNotification(stack, {
    tradeNo,
    subMchid: over.subMchid ?? SUB_MCHID,
    amount: over.amount,
    signer,
  });
}

/** SPEC §4: any failure of a callback, whatever the channel. */
const FAIL = { status: 200, type: 'text/plain; charset=utf-8', body: 'fail' };

/** A qr_code order the buyer has paid, recorded paid. */
async function paidOrder(overrides: Record<string, unknown> = {}): Promise<Created> {
  const created = await create(overrides);
  await buyerPays({ url: created.pay_credential.code_url });
  await pay.statusIs(created.trade_no, 'paid');
  return created;
}

const succeeded = (tradeNo: string) => pay.notificationsFor(tradeNo, 'payment.succeeded');

async function callbacksLogged(tradeNo: string): Promise<{ outcome: string; verified: boolean }[]> {
  return stack.database.db.sequelize.query(
    "SELECT outcome, verified FROM channel_callbacks WHERE channel_code = 'wechatpay' AND trade_no = :tradeNo ORDER BY id",
    { replacements: { tradeNo }, type: QueryTypes.SELECT },
  );
}

describe('creates', () => {
  test('when an order is above 2^31 − 1 fen, WeChat Pay’s limit, then it is refused 400 invalid_amount before WeChat Pay is asked; the limit itself is taken', async () => {
    const over = await pay.post('/api/v1/pay/unified-order', wechatOrder({ amount: 2 ** 31 }));
    expect({ status: over.status, code: over.code }).toEqual({ status: 400, code: 'invalid_amount' });
    expect(over.message).toBe(`amount exceeds the channel's limit of ${2 ** 31 - 1}`);
    const [row] = await stack.database.db.sequelize.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM orders WHERE app_id = :app AND amount > :limit',
      { replacements: { app: app.app_id, limit: 2 ** 31 - 1 }, type: QueryTypes.SELECT },
    );
    expect(row?.n).toBe(0);
    const most = await pay.post<Created>('/api/v1/pay/unified-order', wechatOrder({ amount: 2 ** 31 - 1 }));
    expect(most.code).toBe('success');
  });

  test('when a qr_code order is created, then its credential is the native code_url with a QR image of it', async () => {
    const created = await create();
    expect(created.is_idempotent).toBe(false);
    expect(created.pay_credential.code_url).toMatch(/\/wechatpay\/checkout\//);
    expect(decodeQrDataUrl(created.pay_credential.qr_image!)).toBe(created.pay_credential.code_url);
  });

  test('when a jsapi order is created, then its credential is signed over appId, timeStamp, nonceStr and package with the merchant key', async () => {
    const created = await create({
      pay_method: 'jsapi',
      extra: { sp_openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
    });
    const c = created.pay_credential;
    expect(c).toMatchObject({ appId: stack.wechatpay!.keys.spAppid, signType: 'RSA' });
    expect(c.package).toMatch(/^prepay_id=wx\w+$/);
    const message = `${c.appId}\n${c.timeStamp}\n${c.nonceStr}\n${c.package}\n`;
    expect(
      createVerify('RSA-SHA256')
        .update(message)
        .verify(stack.wechatpay!.keys.merchantPublicKeyPem, c.paySign!, 'base64'),
    ).toBe(true);
  });

  test('when a jsapi order pays with the service provider’s openid, then it is signed for sp_appid even when the merchant has a sub_appid', async () => {
    const created = await create({
      pay_method: 'jsapi',
      extra: { sp_openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o', sub_appid: 'wxd678efh567hg6999' },
    });
    expect(created.pay_credential.appId).toBe(stack.wechatpay!.keys.spAppid);
    const sub = await create({
      pay_method: 'jsapi',
      extra: { sub_openid: 'o-sub', sub_appid: 'wxd678efh567hg6999' },
    });
    expect(sub.pay_credential.appId).toBe('wxd678efh567hg6999');
  });

  test('when an h5 order is created without extra.client_ip, then it is refused, and with it the credential is the h5_url', async () => {
    const refused = await pay.post('/api/v1/pay/unified-order', wechatOrder({ pay_method: 'h5' }));
    expect(refused).toMatchObject({ code: 'channel_create_fail' });
    expect(refused.message).toMatch(/client_ip/);
    const created = await create({ pay_method: 'h5', extra: { client_ip: '203.0.113.7' } });
    expect(created.pay_credential.h5_url).toMatch(/\/wechatpay\/checkout\//);
  });

  test('when an app order is created, then its credential is the signed app parameters', async () => {
    const created = await create({
      pay_method: 'app',
      extra: { sub_appid: 'wxd678efh567hg6999', sub_openid: 'o-sub' },
    });
    const c = created.pay_credential;
    expect(c).toMatchObject({
      appid: 'wxd678efh567hg6999',
      partnerid: stack.wechatpay!.keys.spMchid,
      package: 'Sign=WXPay',
    });
    const message = `${c.appid}\n${c.timestamp}\n${c.noncestr}\n${c.prepayid}\n`;
    expect(
      createVerify('RSA-SHA256')
        .update(message)
        .verify(stack.wechatpay!.keys.merchantPublicKeyPem, c.sign!, 'base64'),
    ).toBe(true);
  });

  test('when web is asked of WeChat Pay, then 400 invalid_pay_method', async () => {
    const a = await pay.post('/api/v1/pay/unified-order', wechatOrder({ pay_method: 'web' }));
    expect({ status: a.status, code: a.code }).toEqual({ status: 400, code: 'invalid_pay_method' });
  });

  test('when the order names no onboarded merchant, then the create is refused with a message that says so', async () => {
    const a = await pay.post(
      '/api/v1/pay/unified-order',
      pay.orderBody({ channel_code: 'wechatpay', subject: 'Green tea' }),
    );
    expect(a.code).toBe('channel_create_fail');
    expect(a.message).toMatch(/sub_mchid/);
  });
});

describe('payments', () => {
  const OPENID = 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o';
  test.each([
    ['h5', { extra: { client_ip: '203.0.113.7' } }],
    ['jsapi', { extra: { sp_openid: OPENID } }],
    ['mini_program', { extra: { sub_openid: OPENID, sub_appid: 'wxd678efh567hg6999' } }],
    ['app', { extra: { sub_appid: 'wxd678efh567hg6999' } }],
  ])(
    'when the buyer pays a %s order at the checkout, then the callback makes it paid and payment.succeeded is sent once',
    async (payMethod, over) => {
      const created = await create({ pay_method: payMethod, ...over });
      const c = created.pay_credential;
      const prepayId = c.prepayid ?? c.package?.slice('prepay_id='.length);
      await buyerPays(c.h5_url ? { url: c.h5_url } : { prepayId: prepayId! });
      await pay.statusIs(created.trade_no, 'paid');
      await until('payment.succeeded', async () =>
        succeeded(created.trade_no).length > 0 ? true : undefined,
      );
      expect(await callbacksLogged(created.trade_no)).toEqual([{ outcome: 'delivered', verified: true }]);
      expect(succeeded(created.trade_no)).toHaveLength(1);
    },
  );

  test('when an order expires unpaid, then it is closed at WeChat Pay and the buyer can no longer pay it', async () => {
    const created = await create({ expire_minutes: 1 });
    await pay.statusIs(created.trade_no, 'closed', 60_000);
    const res = await fetch(created.pay_credential.code_url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'pay' }),
    });
    expect(res.status).toBe(400);
    await until('payment.closed', async () =>
      pay.notificationsFor(created.trade_no, 'payment.closed').length === 1 ? true : undefined,
    );
  });

  test('when the buyer pays a qr_code order, then the callback makes it paid and payment.succeeded is sent once', async () => {
    const created = await paidOrder();
    await until('payment.succeeded', async () => (succeeded(created.trade_no).length > 0 ? true : undefined));
    const order = await pay.query(created.trade_no);
    expect(order).toMatchObject({ status: 'paid', amount: 100, channel_code: 'wechatpay' });
    expect(await callbacksLogged(created.trade_no)).toEqual([{ outcome: 'delivered', verified: true }]);
    expect(succeeded(created.trade_no)).toHaveLength(1);
  });

  test('when the merchant is onboarded again under a new sub_mchid after the order, then the order still pays, polls and closes under its own', async () => {
    const id = `MWXR-${randomUUID().slice(0, 8)}`;
    expect((await pay.post('/api/v1/merchant', { merchant_id: id, merchant_name: 'Moving Tea' })).code).toBe(
      'success',
    );
    const setSub = (sub: string) => pay.attach(id, 'wechatpay', { sub_mchid: sub });
    await setSub('1900000301');
    const paid = await create({ merchant_id: id });
    const lost = await create({ merchant_id: id, subject: 'Tea [sandbox:callback-lost]' });
    const closing = await create({ merchant_id: id });
    await setSub('1900000302');
    await buyerPays({ url: paid.pay_credential.code_url });
    await buyerPays({ url: lost.pay_credential.code_url });
    await pay.statusIs(paid.trade_no, 'paid');
    expect(await callbacksLogged(paid.trade_no)).toEqual([{ outcome: 'delivered', verified: true }]);
    await pay.statusIs(lost.trade_no, 'paid', 60_000);
    expect((await pay.post('/api/v1/pay/close', { trade_no: closing.trade_no })).code).toBe('success');
    await pay.statusIs(closing.trade_no, 'closed');
  });

  test('when a jsapi order is paid and its callback comes twice, then it is paid once and announced once', async () => {
    const created = await create({
      pay_method: 'jsapi',
      subject: 'Tea [sandbox:callback-duplicate]',
      extra: { sp_openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
    });
    await buyerPays({ prepayId: created.pay_credential.package!.slice('prepay_id='.length) });
    await pay.statusIs(created.trade_no, 'paid');
    // Both callbacks answered by durapay, then all that could come of them done.
    await stack.wechatpay!.sandbox.idle(created.trade_no);
    expect(await callbacksLogged(created.trade_no)).toHaveLength(2);
    await pay.settled(created.trade_no);
    expect(succeeded(created.trade_no)).toHaveLength(1);
  });

  test('when the payment callback is lost, then polling finds the payment and the order is paid', async () => {
    const created = await create({ subject: 'Tea [sandbox:callback-lost]' });
    await buyerPays({ url: created.pay_credential.code_url });
    await pay.statusIs(created.trade_no, 'paid', 60_000);
    expect(await callbacksLogged(created.trade_no)).toEqual([]);
    await until('payment.succeeded', async () =>
      succeeded(created.trade_no).length === 1 ? true : undefined,
    );
  });

  test('when a callback is forged (well encrypted, signed by another key), then it answers fail and the order stays pending', async () => {
    const created = await create();
    // Everything right but the signer: only the signature check stands between it and a payment.
    const res = await transactionNotification(
      created.trade_no,
      {},
      stack.wechatpay!.keys.merchantPrivateKeyPem,
    );
    expect({ status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual(
      FAIL,
    );
    expect((await pay.query(created.trade_no)).status).toBe('pending');
  });

  test.each([
    ['another sub_mchid', { subMchid: '1900000999' }, 'merchant_mismatch'],
    ['another amount', { amount: 99 }, 'amount_mismatch'],
  ])(
    'when a genuinely signed callback names %s than its order, then it answers fail and changes nothing',
    async (_what, over, outcome) => {
      const created = await create();
      const res = await transactionNotification(
        created.trade_no,
        over,
        stack.wechatpay!.keys.platformPrivateKeyPem,
      );
      expect({ status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual(
        FAIL,
      );
      expect(await callbacksLogged(created.trade_no)).toEqual([{ outcome, verified: true }]);
      expect((await pay.query(created.trade_no)).status).toBe('pending');
    },
  );

  test('when a genuinely signed WeChat Pay callback names an order of another channel, then it answers fail and changes nothing', async () => {
    const sandboxOrder = await pay.create();
    const res = await transactionNotification(
      sandboxOrder.trade_no,
      {},
      stack.wechatpay!.keys.platformPrivateKeyPem,
    );
    expect({ status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual(
      FAIL,
    );
    expect(await callbacksLogged(sandboxOrder.trade_no)).toEqual([
      { outcome: 'channel_mismatch', verified: true },
    ]);
    expect((await pay.query(sandboxOrder.trade_no)).status).toBe('pending');
  });

  test('when a genuinely signed callback names an out_trade_no durapay does not have, then it answers fail', async () => {
    const res = await transactionNotification(
      'P000000000000000000000000',
      {},
      stack.wechatpay!.keys.platformPrivateKeyPem,
    );
    expect({ status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual(
      FAIL,
    );
  });

  test('when the same genuinely signed callback matches its order, then it answers the acknowledgement and the order is paid', async () => {
    const created = await create();
    const res = await transactionNotification(
      created.trade_no,
      {},
      stack.wechatpay!.keys.platformPrivateKeyPem,
    );
    expect({ status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual({
      status: 200,
      type: 'text/plain; charset=utf-8',
      body: '{"code":"SUCCESS","message":"成功"}',
    });
    await pay.statusIs(created.trade_no, 'paid');
  });
});

describe('close and refunds', () => {
  test('when a pending order is closed, then it is closed at WeChat Pay too', async () => {
    const created = await create();
    const closed = await pay.post('/api/v1/pay/close', { trade_no: created.trade_no });
    expect(closed.code).toBe('success');
    await pay.statusIs(created.trade_no, 'closed');
    // The buyer can no longer pay it.
    const res = await fetch(created.pay_credential.code_url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'pay' }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
  });

  test('when a paid order is refunded twice in part, then each refund succeeds by callback and the order ends refunded', async () => {
    const created = await paidOrder({ amount: 300 });
    const refundNos: string[] = [];
    for (const amount of [100, 200]) {
      const r = await pay.post<{ refund_no: string; status: string }>('/api/v1/pay/refund', {
        trade_no: created.trade_no,
        refund_amount: amount,
        reason: 'changed mind',
      });
      expect(r).toMatchObject({ code: 'success', data: { status: 'processing' } });
      refundNos.push(r.data!.refund_no);
    }
    for (const no of refundNos) {
      await until(`refund ${no} success`, async () =>
        (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${no}`)).data?.status === 'success'
          ? true
          : undefined,
      );
    }
    await pay.statusIs(created.trade_no, 'refunded');
    expect((await pay.query(created.trade_no)).refunded_amount).toBe(300);
  });

  test('when the payment callback comes after its refund’s, then the order is paid (by polling) and refunded once, and the late callback changes nothing', async () => {
    const created = await create({ amount: 300, subject: 'Tea [sandbox:callback-out-of-order]' });
    await buyerPays({ url: created.pay_credential.code_url });
    await pay.statusIs(created.trade_no, 'paid', 60_000);
    const r = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
      trade_no: created.trade_no,
      refund_amount: 100,
    });
    expect(r.code).toBe('success');
    await until(`refund ${r.data!.refund_no} success`, async () =>
      (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${r.data!.refund_no}`)).data?.status ===
      'success'
        ? true
        : undefined,
    );
    // The refund's callback, then the payment's, held until now.
    await until('the held payment callback', async () =>
      (await callbacksLogged(created.trade_no)).length === 2 ? true : undefined,
    );
    await pay.statusIs(created.trade_no, 'partially_refunded');
    expect((await pay.query(created.trade_no)).refunded_amount).toBe(100);
    expect((await callbacksLogged(created.trade_no)).every((c) => c.verified)).toBe(true);
    await until('payment.succeeded', async () => (succeeded(created.trade_no).length > 0 ? true : undefined));
    expect(succeeded(created.trade_no)).toHaveLength(1);
  });

  test('when a refund callback is lost, then polling finds the refund settled and the order is refunded', async () => {
    const created = await paidOrder();
    const r = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
      trade_no: created.trade_no,
      refund_amount: 100,
      reason: 'no callback [sandbox:callback-lost]',
    });
    expect(r.code).toBe('success');
    await pay.statusIs(created.trade_no, 'refunded', 60_000);
    const refundCallbacks = await stack.database.db.sequelize.query(
      "SELECT id FROM channel_callbacks WHERE channel_code = 'wechatpay' AND refund_no = :no",
      { replacements: { no: r.data!.refund_no }, type: QueryTypes.SELECT },
    );
    expect(refundCallbacks).toEqual([]);
    const q = await pay.get<{ status: string; channel_refund_no: string }>(
      `/api/v1/pay/refund/query/${r.data!.refund_no}`,
    );
    expect(q.data).toMatchObject({ status: 'success', channel_refund_no: expect.stringMatching(/^\d+$/) });
  });

  test('when WeChat Pay reports a refund ABNORMAL, then the refund is abnormal (SPEC §3.5), not failed: its money never returns to the order', async () => {
    const created = await paidOrder();
    const r = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
      trade_no: created.trade_no,
      refund_amount: 100,
      reason: 'card closed [sandbox:abnormal]',
    });
    expect(r.code).toBe('success');
    await until('refund abnormal', async () =>
      (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${r.data!.refund_no}`)).data?.status ===
      'abnormal'
        ? true
        : undefined,
    );
    const again = await pay.post('/api/v1/pay/refund', { trade_no: created.trade_no, refund_amount: 1 });
    expect(again.code).toBe('refund_amount_exceed');
  });
});

describe('profit sharing', () => {
  async function sharingMerchant(receivers: Record<string, unknown>[]): Promise<string> {
    const id = `MWXS-${randomUUID().slice(0, 8)}`;
    const created = await pay.post('/api/v1/merchant', {
      merchant_id: id,
      merchant_name: 'Tea House Group',
      profit_sharing: { receivers, max_ratio: 0.3 },
    });
    expect(created.code).toBe('success');
    await pay.attach(id, 'wechatpay', { sub_mchid: SUB_MCHID });
    return id;
  }

  const sharingStatus = (tradeNo: string, status: string) =>
    until(`profit sharing of ${tradeNo} ${status}`, async () =>
      (await pay.query(tradeNo)).profit_sharing_status === status ? true : undefined,
    );

  test('when a paid order shares profit, then the receivers are added with their encrypted name and WeChat Pay shares to them on its transaction_id', async () => {
    const merchant = await sharingMerchant([
      { type: 'merchant', account: '1900000200', name: 'Partner Tea Co', weight: 2 },
      { type: 'personal', account: 'oPartnerOpenid', weight: 1 },
    ]);
    const created = await paidOrder({ merchant_id: merchant, amount: 300, profit_sharing_amount: 90 });
    await sharingStatus(created.trade_no, 'finished');

    const sandbox = stack.wechatpay!.sandbox;
    expect(sandbox.receivers(SUB_MCHID)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'MERCHANT_ID', account: '1900000200', name: 'Partner Tea Co' }),
        expect.objectContaining({ type: 'PERSONAL_OPENID', account: 'oPartnerOpenid' }),
      ]),
    );
    const order = await pay.query(created.trade_no);
    const sharing = sandbox.sharing(order.channel_trade_no as string)!;
    expect(sharing.unfrozen).toBe(true);
    expect(sharing.orders).toHaveLength(1);
    expect(sharing.orders[0]).toMatchObject({ state: 'FINISHED' });
    expect(
      sharing.orders[0]!.receivers.map((r) => ({ account: r.account, amount: r.amount, result: r.result })),
    ).toEqual([
      { account: '1900000200', amount: 60, result: 'SUCCESS' },
      { account: 'oPartnerOpenid', amount: 30, result: 'SUCCESS' },
    ]);
  });

  test('when a merchant receiver has no name, then the sharing fails, because WeChat Pay needs it', async () => {
    const merchant = await sharingMerchant([{ type: 'merchant', account: '1900000201', weight: 1 }]);
    const created = await paidOrder({ merchant_id: merchant, amount: 100, profit_sharing_amount: 10 });
    await sharingStatus(created.trade_no, 'failed');
    const order = await pay.query(created.trade_no);
    expect(stack.wechatpay!.sandbox.sharing(order.channel_trade_no as string)?.orders ?? []).toEqual([]);
  });
});
