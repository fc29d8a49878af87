/**
 * `channel_code: "alipay"` through durapay's HTTP API, against the offline Alipay gateway
 * (sandbox/alipay) mounted in the stack's API, with real Temporal and Postgres: creates of every
 * pay method, the buyer paying at the gateway's cashier, the signed notification, polling when it
 * is lost, forged and mismatched notifications, expiry, closes, refunds and royalty settlement.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { postNotify, signedNotifyForm } from '../support/alipay-notify';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { decodeQrDataUrl } from '../support/qr';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.001, alipay: { timeScale: 0.001, refundDelayMs: 200 } });
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
  is_idempotent: boolean;
  pay_credential: Record<string, string>;
}

const BUYER = '2088102177846880';
const EXTRA: Record<string, Record<string, unknown>> = {
  jsapi: { extra: { buyer_id: BUYER } },
  mini_program: { extra: { buyer_open_id: '074a1CcTG1LelxKe4xQC0zgNdId0nxi95b5lsNpazWYoCo5' } },
};

// A day to pay (86 s at this stack's time scale): a loaded machine must not expire an order
// before its buyer pays. The expiry test sets its own.
const alipayOrder = (overrides: Record<string, unknown> = {}) =>
  pay.orderBody({ channel_code: 'alipay', subject: 'Green tea', expire_minutes: 1440, ...overrides });

async function create(overrides: Record<string, unknown> = {}): Promise<Created> {
  const a = await pay.post<Created>('/api/v1/pay/unified-order', alipayOrder(overrides));
  if (a.code !== 'success') throw new Error(`create failed: ${a.status} ${a.code} ${a.message}`);
  return a.data!;
}

/** Where the buyer pays: what each credential leads to at the gateway's cashier. */
async function cashierOf(created: Created): Promise<string> {
  const c = created.pay_credential;
  if (c.qr_code) return c.qr_code;
  if (c.pay_url) {
    // The browser opens the signed URL; the gateway checks it and sends the buyer to its cashier.
    const res = await fetch(c.pay_url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!, c.pay_url).toString();
  }
  if (c.order_string) {
    // The Alipay app on the phone submits the order string.
    const res = await fetch(`${stack.alipay!.baseUrl}/app-pay`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: c.order_string,
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { cashier_url: string }).cashier_url;
  }
  return `${stack.alipay!.baseUrl}/cashier/${c.trade_no!}`;
}

async function buyerPays(created: Created, result = 'success'): Promise<Response> {
  return fetch(await cashierOf(created), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result }),
  });
}

async function paidOrder(overrides: Record<string, unknown> = {}): Promise<Created> {
  const created = await create(overrides);
  expect((await buyerPays(created)).status).toBe(200);
  await pay.statusIs(created.trade_no, 'paid');
  return created;
}

const succeeded = (tradeNo: string) => pay.notificationsFor(tradeNo, 'payment.succeeded');

async function callbacksLogged(tradeNo: string): Promise<{ outcome: string; verified: boolean }[]> {
  return stack.database.db.sequelize.query(
    "SELECT outcome, verified FROM channel_callbacks WHERE channel_code = 'alipay' AND trade_no = :tradeNo ORDER BY id",
    { replacements: { tradeNo }, type: QueryTypes.SELECT },
  );
}

/** SPEC §4: any failure of a callback, whatever the channel. */
const FAIL = { status: 200, type: 'text/plain; charset=utf-8', body: 'fail' };
const answerOf = async (res: Response) => ({
  status: res.status,
  type: res.headers.get('content-type'),
  body: await res.text(),
});

describe('creates', () => {
  test('when a qr_code order is created, then its credential is the precreated qr_code with a QR image of it', async () => {
    const created = await create({ amount: 1_005 });
    expect(created.pay_credential.qr_code).toMatch(/\/alipay\/cashier\//);
    expect(decodeQrDataUrl(created.pay_credential.qr_image!)).toBe(created.pay_credential.qr_code);
    // Sent in yuan, exactly.
    expect(stack.alipay!.sandbox.trade(created.trade_no)).toMatchObject({ total_amount: '10.05' });
  });

  test.each([
    ['web', 'alipay.trade.page.pay'],
    ['h5', 'alipay.trade.wap.pay'],
  ])(
    'when a %s order is created, then its credential is a signed URL to %s, and Alipay has no trade until the buyer opens it',
    async (payMethod, method) => {
      const created = await create({ pay_method: payMethod });
      const url = new URL(created.pay_credential.pay_url!);
      expect(url.pathname).toBe('/alipay/gateway.do');
      expect(url.searchParams.get('method')).toBe(method);
      expect(url.searchParams.get('sign')).toBeTruthy();
      expect(stack.alipay!.sandbox.trade(created.trade_no)).toBeUndefined();
      await cashierOf(created);
      expect(stack.alipay!.sandbox.trade(created.trade_no)).toMatchObject({ status: 'WAIT_BUYER_PAY' });
    },
  );

  test('when an app order is created, then its credential is the signed order string for the Alipay app', async () => {
    const created = await create({ pay_method: 'app' });
    const params = new URLSearchParams(created.pay_credential.order_string!);
    expect(params.get('method')).toBe('alipay.trade.app.pay');
    expect(params.get('sign')).toBeTruthy();
    expect(JSON.parse(params.get('biz_content')!)).toMatchObject({
      out_trade_no: created.trade_no,
      product_code: 'QUICK_MSECURITY_PAY',
    });
  });

  test('when a jsapi order is created, then its credential is the trade_no for my.tradePay; without a buyer it is refused', async () => {
    const created = await create({ pay_method: 'jsapi', ...EXTRA.jsapi });
    expect(created.pay_credential.trade_no).toBe(stack.alipay!.sandbox.trade(created.trade_no)!.trade_no);
    const refused = await pay.post('/api/v1/pay/unified-order', alipayOrder({ pay_method: 'jsapi' }));
    expect({ status: refused.status, code: refused.code }).toEqual({
      status: 502,
      code: 'channel_create_fail',
    });
    expect(refused.message).toMatch(/extra.buyer_id or extra.buyer_open_id/);
  });
});

describe('merchants', () => {
  /** A merchant with this account attached at the channel (SPEC §5.8), as a client attaches it. */
  async function merchantWith(account: Record<string, string>, channelCode = 'alipay'): Promise<string> {
    const merchantId = `MAL-${randomUUID().slice(0, 8)}`;
    expect(
      (await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' })).code,
    ).toBe('success');
    await pay.attach(merchantId, channelCode, account);
    return merchantId;
  }

  /** A token the offline gateway issued to this app, as if the merchant had authorised it. */
  const authorisedToken = () => stack.alipay!.sandbox.mintAppAuthToken().appAuthToken;

  test('when a merchant authorised the app, then its app_auth_token goes with the create and the order pays and refunds under it', async () => {
    const token = authorisedToken();
    const merchantId = await merchantWith({ app_auth_token: token });
    const created = await paidOrder({ merchant_id: merchantId });
    expect(stack.alipay!.sandbox.trade(created.trade_no)).toMatchObject({ app_auth_token: token });
    expect(stack.alipay!.sandbox.trade(created.trade_no)).not.toHaveProperty('sub_merchant');
    const refund = await pay.post('/api/v1/pay/refund', { trade_no: created.trade_no, refund_amount: 100 });
    expect(refund.code).toBe('success');
    await pay.statusIs(created.trade_no, 'refunded');
  });

  test('when a token merchant’s refunds are notified, then durapay confirms each with the merchant’s app_auth_token and answers success, once', async () => {
    const token = authorisedToken();
    const created = await paidOrder({ merchant_id: await merchantWith({ app_auth_token: token }) });
    // Two refunds: the second's notification names 70 refunded in all, its own amount is 30.
    for (const [amount, sent] of [
      [40, 2],
      [30, 3],
    ] as const) {
      const refund = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
        trade_no: created.trade_no,
        refund_amount: amount,
      });
      expect(refund.code).toBe('success');
      const refundNo = refund.data!.refund_no;
      const logged = await until(`the refund notification of ${refundNo}`, async () => {
        const rows = await stack.database.db.sequelize.query<{ outcome: string; error: string | null }>(
          `SELECT outcome, error FROM channel_callbacks
            WHERE channel_code = 'alipay' AND raw_body LIKE :like AND outcome <> 'received' ORDER BY id`,
          { replacements: { like: `%out_biz_no=${refundNo}%` }, type: QueryTypes.SELECT },
        );
        return rows.length > 0 ? rows : undefined;
      });
      expect(logged).toEqual([{ outcome: 'delivered', error: null }]);
      // Answered `success` at once: Alipay has nothing to send again.
      await until('every notification acknowledged', async () =>
        stack.alipay!.sandbox.notifications(created.trade_no).acknowledged ? true : undefined,
      );
      expect(stack.alipay!.sandbox.notifications(created.trade_no).sent).toBe(sent);
    }
  });

  test('when a merchant with an account at another channel only orders at Alipay, then the create is refused naming Alipay and Alipay hears nothing', async () => {
    const merchantId = await merchantWith({ sub_merchant_no: `S-${randomUUID().slice(0, 8)}` }, 'sandbox');
    const before = stack.alipay!.sandbox.requests('alipay.trade.precreate');
    const refused = await pay.post('/api/v1/pay/unified-order', alipayOrder({ merchant_id: merchantId }));
    expect({ status: refused.status, code: refused.code }).toEqual({
      status: 502,
      code: 'channel_create_fail',
    });
    expect(refused.message).toBe(`merchant ${merchantId} has no account at channel alipay`);
    expect(stack.alipay!.sandbox.requests('alipay.trade.precreate')).toBe(before);
    // A retry of the same request is refused the same way: no order was left pending.
    const again = await pay.post('/api/v1/pay/unified-order', alipayOrder({ merchant_id: merchantId }));
    expect(again.code).toBe('channel_create_fail');
  });

  test('when a secondary merchant (smid) sells, then each trade names it in sub_merchant and sends no app_auth_token', async () => {
    const merchantId = await merchantWith({ smid: '2088000000000777' });
    const created = await create({ merchant_id: merchantId });
    const trade = stack.alipay!.sandbox.trade(created.trade_no);
    expect(trade).toMatchObject({ sub_merchant: { merchant_id: '2088000000000777' } });
    expect(trade?.app_auth_token ?? null).toBeNull();
  });
});

describe('payments', () => {
  test.each(['qr_code', 'web', 'h5', 'app', 'jsapi', 'mini_program'])(
    'when the buyer pays a %s order at the cashier, then the notification makes it paid and payment.succeeded is sent once',
    async (payMethod) => {
      const created = await create({ pay_method: payMethod, ...(EXTRA[payMethod] ?? {}) });
      expect((await buyerPays(created)).status).toBe(200);
      await pay.statusIs(created.trade_no, 'paid');
      await until('payment.succeeded', async () =>
        succeeded(created.trade_no).length > 0 ? true : undefined,
      );
      const order = await pay.query(created.trade_no);
      expect(order).toMatchObject({ status: 'paid', channel_code: 'alipay' });
      expect(order.channel_trade_no).toBe(stack.alipay!.sandbox.trade(created.trade_no)!.trade_no);
      expect(await callbacksLogged(created.trade_no)).toEqual([{ outcome: 'delivered', verified: true }]);
      expect(succeeded(created.trade_no)).toHaveLength(1);
    },
  );

  test('when the buyer fails at the cashier, then the order stays pending', async () => {
    const created = await create();
    expect((await buyerPays(created, 'fail')).status).toBe(200);
    // Whatever Alipay sent for it answered, and all that could come of that done.
    await stack.alipay!.sandbox.idle(created.trade_no);
    await pay.settled(created.trade_no);
    expect((await pay.query(created.trade_no)).status).toBe('pending');
  });

  test('when the notification is lost, then polling finds the payment and the order is paid', async () => {
    const created = await paidOrder({ subject: 'Green tea [sandbox:notify-drop]' });
    expect(stack.alipay!.sandbox.notifications(created.trade_no).sent).toBe(0);
    expect(await callbacksLogged(created.trade_no)).toEqual([]);
  });

  test('when the notification comes twice, then the order is paid once and announced once', async () => {
    const created = await paidOrder({ subject: 'Green tea [sandbox:notify-duplicate]' });
    // Both notifications answered by durapay, then all that could come of them done.
    await stack.alipay!.sandbox.idle(created.trade_no);
    expect(await callbacksLogged(created.trade_no)).toHaveLength(2);
    await pay.settled(created.trade_no);
    expect(succeeded(created.trade_no)).toHaveLength(1);
  });

  test('when an order expires unpaid, then it is closed at Alipay and the buyer can no longer pay it', async () => {
    const created = await create({ expire_minutes: 1 });
    // Scanned: a precreated code is a trade at Alipay only once a buyer opens it.
    expect((await fetch(created.pay_credential.qr_code!)).status).toBe(200);
    await pay.statusIs(created.trade_no, 'closed', 60_000);
    expect(stack.alipay!.sandbox.trade(created.trade_no)).toMatchObject({ status: 'TRADE_CLOSED' });
    expect((await buyerPays(created)).status).toBeGreaterThanOrEqual(400);
    await until('payment.closed', async () =>
      pay.notificationsFor(created.trade_no, 'payment.closed').length === 1 ? true : undefined,
    );
  });
});

describe('notifications', () => {
  test('when a notification is forged (signed by another key), then it answers fail and the order stays pending', async () => {
    const created = await create();
    const form = signedNotifyForm(stack, { tradeNo: created.trade_no }, stack.alipay!.keys.appPrivateKeyPem);
    expect(await answerOf(await postNotify(stack, form))).toEqual(FAIL);
    expect((await pay.query(created.trade_no)).status).toBe('pending');
  });

  test('when a genuinely signed notification names another total_amount than its order, then it answers fail and changes nothing', async () => {
    const created = await create();
    const form = signedNotifyForm(
      stack,
      { tradeNo: created.trade_no, totalAmount: '0.99' },
      stack.alipay!.keys.alipayPrivateKeyPem,
    );
    expect(await answerOf(await postNotify(stack, form))).toEqual(FAIL);
    expect(await callbacksLogged(created.trade_no)).toEqual([{ outcome: 'amount_mismatch', verified: true }]);
    expect((await pay.query(created.trade_no)).status).toBe('pending');
  });

  test('when a genuinely signed notification is for another app_id, then it answers fail, is logged rejected for it, and changes nothing', async () => {
    const created = await create();
    const form = signedNotifyForm(
      stack,
      { tradeNo: created.trade_no, appId: '2021009999999999' },
      stack.alipay!.keys.alipayPrivateKeyPem,
    );
    expect(await answerOf(await postNotify(stack, form))).toEqual(FAIL);
    const [logged] = await stack.database.db.sequelize.query<{ outcome: string; error: string }>(
      "SELECT outcome, error FROM channel_callbacks WHERE channel_code = 'alipay' AND raw_body LIKE :like",
      { replacements: { like: `%${created.trade_no}%` }, type: QueryTypes.SELECT },
    );
    expect(logged).toEqual({
      outcome: 'rejected',
      error: expect.stringContaining('app_id 2021009999999999'),
    });
    expect((await pay.query(created.trade_no)).status).toBe('pending');
  });

  test('when a genuinely signed notification names an out_trade_no durapay does not have, then it answers fail', async () => {
    const form = signedNotifyForm(
      stack,
      { tradeNo: 'P000000000000000000000000' },
      stack.alipay!.keys.alipayPrivateKeyPem,
    );
    expect(await answerOf(await postNotify(stack, form))).toEqual(FAIL);
  });

  test('when a genuinely signed notification matches its order, then it answers exactly success and the order is paid', async () => {
    const created = await create();
    const form = signedNotifyForm(
      stack,
      { tradeNo: created.trade_no },
      stack.alipay!.keys.alipayPrivateKeyPem,
    );
    expect(await answerOf(await postNotify(stack, form))).toEqual({
      status: 200,
      type: 'text/plain; charset=utf-8',
      body: 'success',
    });
    await pay.statusIs(created.trade_no, 'paid');
  });
});

describe('close and refunds', () => {
  test('when a pending order whose code was scanned is closed, then it is closed at Alipay too', async () => {
    const created = await create();
    expect((await fetch(created.pay_credential.qr_code!)).status).toBe(200);
    expect(stack.alipay!.sandbox.trade(created.trade_no)).toMatchObject({
      status: 'WAIT_BUYER_PAY',
      exists: true,
    });
    const closed = await pay.post('/api/v1/pay/close', { trade_no: created.trade_no });
    expect(closed.code).toBe('success');
    expect((await pay.query(created.trade_no)).status).toBe('closed');
    expect(stack.alipay!.sandbox.trade(created.trade_no)).toMatchObject({ status: 'TRADE_CLOSED' });
  });

  test('when a qr_code nobody scanned is closed and a buyer pays it afterwards, then the order is closed, then recorded paid and flagged for refund review', async () => {
    const created = await create();
    // Alipay has no trade until the code is scanned: nothing to close there, so the order closes.
    expect((await pay.post('/api/v1/pay/close', { trade_no: created.trade_no })).code).toBe('success');
    expect((await pay.query(created.trade_no)).status).toBe('closed');
    // The code still pays at Alipay until its time_expire: the notification is not lost on durapay.
    expect((await buyerPays(created)).status).toBe(200);
    await pay.statusIs(created.trade_no, 'paid');
    const [flag] = await stack.database.db.sequelize.query<{ needs_refund_review: boolean }>(
      'SELECT needs_refund_review FROM orders WHERE trade_no = :t',
      { replacements: { t: created.trade_no }, type: QueryTypes.SELECT },
    );
    expect(flag).toEqual({ needs_refund_review: true });
  });

  test('when a paid order is refunded twice in part, then each refund succeeds and the order ends refunded, as at Alipay', async () => {
    const created = await paidOrder({ amount: 300 });
    const refundNos: string[] = [];
    for (const amount of [100, 200]) {
      const r = await pay.post<{ refund_no: string; status: string }>('/api/v1/pay/refund', {
        trade_no: created.trade_no,
        refund_amount: amount,
      });
      expect(r.code).toBe('success');
      refundNos.push(r.data!.refund_no);
    }
    await pay.statusIs(created.trade_no, 'refunded');
    for (const refundNo of refundNos) {
      const q = await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${refundNo}`);
      expect(q.data!.status).toBe('success');
    }
    expect(stack.alipay!.sandbox.trade(created.trade_no)).toMatchObject({ status: 'TRADE_CLOSED' });
    // Each refund's own notification was taken (its amount asked of Alipay), not only polling.
    await until('both refund notifications delivered', async () => {
      const rows = await stack.database.db.sequelize.query<{ refund_no: string }>(
        "SELECT refund_no FROM channel_callbacks WHERE channel_code = 'alipay' AND trade_no = :t AND outcome = 'delivered' AND refund_no IS NOT NULL",
        { replacements: { t: created.trade_no }, type: QueryTypes.SELECT },
      );
      return rows
        .map((r) => r.refund_no)
        .sort()
        .join() === [...refundNos].sort().join()
        ? true
        : undefined;
    });
    await until('refund.succeeded twice', async () =>
      pay.notificationsFor(created.trade_no, 'refund.succeeded').length === 2 ? true : undefined,
    );
  });

  test('when Alipay takes a refund to finish later, then it is processing and then success by query', async () => {
    const created = await paidOrder();
    const r = await pay.post<{ refund_no: string; status: string }>('/api/v1/pay/refund', {
      trade_no: created.trade_no,
      refund_amount: 100,
      reason: 'later [sandbox:slow]',
    });
    expect(r.data).toMatchObject({ status: 'processing' });
    await until('refund success', async () =>
      (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${r.data!.refund_no}`)).data!.status ===
      'success'
        ? true
        : undefined,
    );
    await pay.statusIs(created.trade_no, 'refunded');
  });

  test('when Alipay refuses a refund, then 502 channel_refund_fail and the amount stays refundable', async () => {
    const created = await paidOrder();
    const refused = await pay.post('/api/v1/pay/refund', {
      trade_no: created.trade_no,
      refund_amount: 100,
      reason: 'no money [sandbox:refuse]',
    });
    expect({ status: refused.status, code: refused.code }).toEqual({
      status: 502,
      code: 'channel_refund_fail',
    });
    const again = await pay.post('/api/v1/pay/refund', { trade_no: created.trade_no, refund_amount: 100 });
    expect(again.code).toBe('success');
  });
});

describe('profit sharing', () => {
  test('when a paid order shares profit, then the receivers are bound and Alipay settles to them on its trade_no', async () => {
    const merchantId = `MALS-${randomUUID().slice(0, 8)}`;
    const created = await pay.post('/api/v1/merchant', {
      merchant_id: merchantId,
      merchant_name: 'Tea House Group',
      profit_sharing: {
        receivers: [
          { type: 'merchant', account: '2088000000000201', name: 'Partner Tea Co', weight: 2 },
          { type: 'personal', account: 'partner@example.com', weight: 1 },
        ],
        max_ratio: 0.3,
      },
    });
    expect(created.code).toBe('success');
    await pay.attach(merchantId, 'alipay', { smid: '2088000000000778' });
    const order = await paidOrder({ merchant_id: merchantId, amount: 300, profit_sharing_amount: 90 });
    await until('sharing finished', async () =>
      (await pay.query(order.trade_no)).profit_sharing_status === 'finished' ? true : undefined,
    );
    const channelTradeNo = (await pay.query(order.trade_no)).channel_trade_no as string;
    expect(stack.alipay!.sandbox.relations()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'userId', account: '2088000000000201' }),
        expect.objectContaining({ type: 'loginName', account: 'partner@example.com' }),
      ]),
    );
    expect(JSON.parse(JSON.stringify(stack.alipay!.sandbox.settlements(channelTradeNo)))).toEqual([
      expect.objectContaining({
        royalty_parameters: [
          expect.objectContaining({ trans_in: '2088000000000201', amount: '0.60' }),
          expect.objectContaining({ trans_in: 'partner@example.com', amount: '0.30' }),
        ],
      }),
    ]);
  });
});
