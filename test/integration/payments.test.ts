import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { Webhook } from 'standardwebhooks';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { signSandboxPayload } from '../../src/channels/sandbox/signature';
import { createOrderUpdate, orderWorkflowId } from '../../src/modules/orders/messages';
import { startTestStack, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';
import { decodeQrDataUrl } from '../support/qr';
import { activityCalls } from '../support/history';
import { settledIn } from '../support/settled';

jest.setTimeout(120_000);

// 1/100 of real time: polls at 100 ms, 300 ms, …; a 30-minute expiry is 18 s, a 1-minute one 0.6 s.
const TIME_SCALE = 0.01;

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startTestStack({
    timeScale: TIME_SCALE,
    sandboxRefundDelayMs: 300,
    sandboxMaxAmount: 100_000_000,
  });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Created {
  trade_no: string;
  pay_credential: { pay_url: string; qr_code: string };
  is_idempotent: boolean;
}

function order(overrides: Record<string, unknown> = {}) {
  return {
    merchant_order_no: `M-${randomUUID()}`,
    pay_method: 'qr_code',
    amount: 100,
    subject: 'Coffee',
    notify_url: receiver.url,
    ...overrides,
  };
}

const post = (path: string, json: unknown, creds = app) =>
  signedFetch(stack.baseUrl, creds, 'POST', path, { json });
const get = (path: string, creds = app) => signedFetch(stack.baseUrl, creds, 'GET', path);

async function create(overrides: Record<string, unknown> = {}): Promise<Created> {
  const res = await post('/api/v1/pay/unified-order', order(overrides));
  const body = await envelope<Created>(res);
  expect(body).toMatchObject({ code: 'success' });
  return body.data!;
}

async function query(tradeNo: string): Promise<Record<string, unknown>> {
  return (await envelope(await get(`/api/v1/pay/query/${tradeNo}`))).data!;
}

/** Nothing more can come of the order (support/settled.ts): counts taken next are final. */
const settled = (tradeNo: string) => settledIn(stack)(tradeNo);

async function count(sql: string, replacements: Record<string, unknown>): Promise<number> {
  const rows = await stack.database.db.sequelize.query<{ n: string }>(sql, {
    replacements,
    type: QueryTypes.SELECT,
  });
  return Number(rows[0]!.n);
}

const statusIs = (tradeNo: string, status: string) => () =>
  until(`order ${tradeNo} ${status}`, async () =>
    (await query(tradeNo)).status === status ? true : undefined,
  );

async function buyerPays(payUrl: string, result: 'success' | 'fail' = 'success'): Promise<Response> {
  return fetch(payUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result }),
  });
}

function notificationsFor(tradeNo: string, type: string) {
  return receiver.received.filter((r) => {
    const body = JSON.parse(r.body) as { type: string; data: { trade_no?: string } };
    return body.type === type && body.data.trade_no === tradeNo;
  });
}

describe('POST /api/v1/pay/unified-order', () => {
  test('when a valid order is created, then trade_no and the sandbox pay credential come back and the order is pending', async () => {
    const created = await create();
    expect(created.trade_no).toMatch(/^P\d{24}$/);
    expect(created.is_idempotent).toBe(false);
    expect(created.pay_credential.pay_url).toBe(`${stack.baseUrl}/sandbox/pay/${created.trade_no}`);
    expect(typeof created.pay_credential.qr_code).toBe('string');
    const q = await query(created.trade_no);
    expect(q).toMatchObject({
      trade_no: created.trade_no,
      pay_method: 'qr_code',
      amount: 100,
      status: 'pending',
      channel_code: 'sandbox',
      subject: 'Coffee',
      merchant_id: null,
      refunded_amount: 0,
      profit_sharing_amount: 0,
      profit_sharing_status: 'none',
      pay_time: null,
      closed_at: null,
    });
    expect(q.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(q.expire_time as string) - Date.parse(q.created_at as string)).toBe(30 * 60_000);
  });

  test('when a qr_code order is created, then its credential carries an SVG QR image that decodes to its qr_code, and the checkout page shows the same code', async () => {
    const created = await create();
    const credential = created.pay_credential as { pay_url: string; qr_code: string; qr_image?: string };
    expect(credential.qr_image).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(decodeQrDataUrl(credential.qr_image!)).toBe(credential.qr_code);
    const page = await (await fetch(credential.pay_url)).text();
    const shown = /<img class="qr" src="(data:image\/svg\+xml;base64,[^"]+)"/.exec(page)?.[1];
    expect(shown && decodeQrDataUrl(shown)).toBe(credential.pay_url);
    // Only a QR code payment carries the image.
    const h5 = await create({ pay_method: 'h5' });
    expect(h5.pay_credential).not.toHaveProperty('qr_image');
  });

  test('when the same order is created again, then the same trade_no with is_idempotent true; different parameters are refused', async () => {
    const req = order();
    const first = await envelope<Created>(await post('/api/v1/pay/unified-order', req));
    const again = await envelope<Created>(await post('/api/v1/pay/unified-order', req));
    expect(again.data).toEqual({ ...first.data, is_idempotent: true });
    const changed = await post('/api/v1/pay/unified-order', { ...req, amount: 101 });
    expect(changed.status).toBe(400);
    expect(await envelope(changed)).toMatchObject({
      code: 'invalid_param',
      message: 'merchant_order_no already used with different parameters',
    });
  });

  test('when a create repeats with one identity field changed, in every state of the order, then 400 invalid_param; unchanged, the state decides', async () => {
    const owner = await stack.createApp(['payments', 'merchants'], 'identity');
    const call = async (path: string, json: unknown) =>
      envelope<Record<string, unknown>>(await signedFetch(stack.baseUrl, owner, 'POST', path, { json }));
    const read = async (tradeNo: string) =>
      (await envelope(await signedFetch(stack.baseUrl, owner, 'GET', `/api/v1/pay/query/${tradeNo}`))).data!;
    const merchants = [`m-${randomUUID()}`, `m-${randomUUID()}`];
    for (const merchant_id of merchants) {
      const made = await call('/api/v1/merchant', {
        merchant_id,
        merchant_name: 'Tea',
        profit_sharing: { receivers: [{ type: 'merchant', account: 'r1', weight: 1 }] },
      });
      expect(made.code).toBe('success');
      const account = `/api/v1/merchant/${merchant_id}/channel-accounts/sandbox`;
      const attached = await envelope(
        await signedFetch(stack.baseUrl, owner, 'PUT', account, {
          json: { sub_merchant_no: `S-${merchant_id}` },
        }),
      );
      expect(attached.code).toBe('success');
    }
    const base = () =>
      order({ amount: 100, merchant_id: merchants[0], profit_sharing_amount: 10, channel_code: 'sandbox' });
    const waitFor = (tradeNo: string, status: string) =>
      until(`order ${status}`, async () => ((await read(tradeNo)).status === status ? true : undefined));

    const identities: [string, Record<string, unknown>][] = [
      ['amount', { amount: 101 }],
      ['pay_method', { pay_method: 'jsapi' }],
      ['channel_code', { channel_code: 'alipay' }],
      ['merchant_id', { merchant_id: merchants[1] }],
      ['profit_sharing_amount', { profit_sharing_amount: 20 }],
    ];
    const seen: Record<string, string[]> = {};
    for (const state of ['pending', 'paid', 'partially_refunded', 'refunded', 'closed']) {
      const body = base();
      const created = await call('/api/v1/pay/unified-order', body);
      expect(created.code).toBe('success');
      const tradeNo = String(created.data!.trade_no);
      const payUrl = (created.data!.pay_credential as { pay_url: string }).pay_url;
      if (state !== 'pending' && state !== 'closed') {
        await buyerPays(payUrl);
        await waitFor(tradeNo, 'paid');
      }
      if (state === 'partially_refunded' || state === 'refunded') {
        const refund = await call('/api/v1/pay/refund', {
          trade_no: tradeNo,
          refund_amount: state === 'refunded' ? 100 : 10,
        });
        expect(refund.code).toBe('success');
        await waitFor(tradeNo, state);
      }
      if (state === 'closed') {
        expect((await call('/api/v1/pay/close', { trade_no: tradeNo })).code).toBe('success');
        await waitFor(tradeNo, 'closed');
      }
      seen[state] = [];
      for (const [field, change] of identities) {
        const again = await call('/api/v1/pay/unified-order', { ...body, ...change });
        seen[state]!.push(`${field}: ${again.code} ${again.message}`);
      }
      const same = await call('/api/v1/pay/unified-order', body);
      seen[state]!.push(
        `same: ${same.code}${same.code === 'success' ? ` ${String(same.data!.is_idempotent)}` : ''}`,
      );
    }
    const changed = identities.map(
      ([field]) => `${field}: invalid_param merchant_order_no already used with different parameters`,
    );
    expect(seen).toEqual({
      pending: [...changed, 'same: success true'],
      paid: [...changed, 'same: order_already_paid'],
      partially_refunded: [...changed, 'same: order_already_paid'],
      refunded: [...changed, 'same: order_already_paid'],
      closed: [...changed, 'same: order_closed'],
    });
  });

  test.each([
    ['merchant_order_no missing', { merchant_order_no: undefined }, '"merchant_order_no" is required'],
    [
      'merchant_order_no with a space',
      { merchant_order_no: 'a b' },
      '"merchant_order_no" must be 1-64 characters',
    ],
    ['merchant_order_no of 65 characters', { merchant_order_no: 'a'.repeat(65) }, '"merchant_order_no"'],
    ['pay_method missing', { pay_method: undefined }, '"pay_method" is required'],
    ['pay_method empty', { pay_method: '' }, '"pay_method" is not allowed to be empty'],
    ['amount as a string', { amount: '100' }, '"amount" must be a number'],
    ['amount 0', { amount: 0 }, '"amount" must be greater than or equal to 1'],
    [
      'amount above 10^12',
      { amount: 1_000_000_000_001 },
      '"amount" must be less than or equal to 1000000000000',
    ],
    ['amount fractional', { amount: 1.5 }, '"amount" must be an integer'],
    ['subject missing', { subject: undefined }, '"subject" is required'],
    [
      'subject of 129 characters',
      { subject: 's'.repeat(129) },
      '"subject" length must be less than or equal to 128',
    ],
    ['notify_url not a URL', { notify_url: 'not a url' }, '"notify_url" must be a valid uri'],
    ['notify_url ftp', { notify_url: 'ftp://x.example/n' }, '"notify_url" must be a valid uri'],
    ['expire_minutes 0', { expire_minutes: 0 }, '"expire_minutes" must be greater than or equal to 1'],
    ['expire_minutes 1441', { expire_minutes: 1441 }, '"expire_minutes" must be less than or equal to 1440'],
    [
      'profit_sharing_amount negative',
      { profit_sharing_amount: -1 },
      '"profit_sharing_amount" must be greater than or equal to 0',
    ],
    ['an unknown field', { colour: 'red' }, '"colour" is not allowed'],
    ['extra not an object', { extra: 'x' }, '"extra" must be of type object'],
  ])('when %s, then 400 invalid_param naming the field', async (_what, overrides, message) => {
    const res = await post('/api/v1/pay/unified-order', order(overrides));
    expect(res.status).toBe(400);
    const body = await envelope(res);
    expect(body.code).toBe('invalid_param');
    expect(body.message).toContain(message);
  });

  test('when the body is not JSON, then 400 invalid_param', async () => {
    const res = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/pay/unified-order', {
      body: '{"amount":',
    });
    expect(res.status).toBe(400);
    expect((await envelope(res)).code).toBe('invalid_param');
  });

  test.each([
    ['an unsupported pay_method', { pay_method: 'cash' }, 400, 'invalid_pay_method'],
    ['an unknown channel_code', { channel_code: 'nopay' }, 502, 'channel_not_support'],
    ['profit_sharing_amount above amount', { profit_sharing_amount: 101 }, 422, 'sharing_amount_exceed'],
    [
      'profit sharing without a configured merchant',
      { profit_sharing_amount: 10 },
      422,
      'sharing_not_config',
    ],
  ])('when the order has %s, then %s %s', async (_what, overrides, status, code) => {
    const res = await post('/api/v1/pay/unified-order', order(overrides));
    expect(res.status).toBe(status);
    expect((await envelope(res)).code).toBe(code);
  });

  test("when the amount is above the channel's own limit, then 400 invalid_amount", async () => {
    const res = await post('/api/v1/pay/unified-order', order({ amount: 100_000_001 }));
    expect(res.status).toBe(400);
    expect(await envelope(res)).toMatchObject({ code: 'invalid_amount', data: null });
  });

  test('when the channel answers slower than the request deadline, then 502 channel_timeout', async () => {
    const res = await post(
      '/api/v1/pay/unified-order',
      order({ extra: { sandbox: { latency_ms: 12_000 } } }),
    );
    expect(res.status).toBe(502);
    expect((await envelope(res)).code).toBe('channel_timeout');
  });

  test('when merchant_id names no merchant of this app, then 422 order_not_found "merchant not found"', async () => {
    const res = await post('/api/v1/pay/unified-order', order({ merchant_id: 'm-unknown' }));
    expect(res.status).toBe(422);
    expect(await envelope(res)).toMatchObject({ code: 'order_not_found', message: 'merchant not found' });
  });

  test('when the channel refuses the create, then 502 channel_create_fail, no order is left, and a retry can succeed', async () => {
    const req = order({ extra: { sandbox: { fail_create: true } } });
    const res = await post('/api/v1/pay/unified-order', req);
    expect(res.status).toBe(502);
    expect((await envelope(res)).code).toBe('channel_create_fail');
    const n = await count('SELECT count(*) AS n FROM orders WHERE merchant_order_no = :m', {
      m: req.merchant_order_no,
    });
    expect(n).toBe(0);
    const retry = await until('the failed run to end', async () => {
      const r = await post('/api/v1/pay/unified-order', { ...req, extra: {} });
      return r.status === 200 ? envelope<Created>(r) : undefined;
    });
    expect(retry.data!.is_idempotent).toBe(false);
  });
});

describe('paying', () => {
  test('when the buyer pays on the sandbox page, then the order is paid and a signed payment.succeeded is delivered', async () => {
    const created = await create();
    const page = await fetch(created.pay_credential.pay_url);
    expect(await page.text()).toMatch(/Pay/);
    expect((await buyerPays(created.pay_credential.pay_url)).status).toBe(200);
    await statusIs(created.trade_no, 'paid')();
    const q = await query(created.trade_no);
    expect(q.pay_time).not.toBeNull();
    expect(q.channel_trade_no).toEqual(expect.any(String));
    const delivered = await until('payment.succeeded', async () => {
      const n = notificationsFor(created.trade_no, 'payment.succeeded');
      return n.length ? n : undefined;
    });
    const payload = new Webhook(app.webhook_secret).verify(delivered[0]!.body, delivered[0]!.headers) as {
      data: Record<string, unknown>;
    };
    expect(payload.data).toMatchObject({ trade_no: created.trade_no, status: 'paid', app_id: app.app_id });
  });

  test('when the callback is dropped, then polling still records the payment', async () => {
    const created = await create({ extra: { sandbox: { callback: 'drop' } } });
    await buyerPays(created.pay_credential.pay_url);
    await statusIs(created.trade_no, 'paid')();
  });

  test('when the callback is duplicated, then exactly one payment.succeeded is sent', async () => {
    const created = await create({ extra: { sandbox: { callback: 'duplicate' } } });
    await buyerPays(created.pay_credential.pay_url);
    await statusIs(created.trade_no, 'paid')();
    // Both callbacks answered by durapay, then all that could come of them done.
    await stack.sandboxIdle(created.trade_no);
    await settled(created.trade_no);
    expect(notificationsFor(created.trade_no, 'payment.succeeded')).toHaveLength(1);
    const n = await count(
      "SELECT count(*) AS n FROM channel_callbacks WHERE trade_no = :t AND outcome = 'delivered'",
      { t: created.trade_no },
    );
    expect(n).toBe(2);
  });

  test('when the buyer fails, then the order stays pending', async () => {
    const created = await create();
    await buyerPays(created.pay_credential.pay_url, 'fail');
    // Whatever the sandbox sent for it answered, and all that could come of that done.
    await stack.sandboxIdle(created.trade_no);
    await settled(created.trade_no);
    expect((await query(created.trade_no)).status).toBe('pending');
  });
});

describe('POST /api/v1/notify/payment/{channelCode}', () => {
  const callback = (channel: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.baseUrl}/api/v1/notify/payment/${channel}`, { method: 'POST', body, headers });

  // SPEC §4: a channel's callbacks are logged raw, verified or not; a path that names no channel
  // durapay has leaves no row (anyone could fill the table through it).
  test.each([
    ['a bad signature', 'sandbox', { 'sandbox-signature': `t=${Math.floor(Date.now() / 1000)},v1=00` }, 1],
    ['no signature', 'sandbox', {}, 1],
    ['an unknown channel', 'nopay', {}, 0],
  ])(
    'when a callback has %s, then 200 text "fail", nothing changes, and the raw callback is logged only for a channel durapay has',
    async (_w, channel, headers, logged) => {
      const created = await create();
      const body = JSON.stringify({
        event_id: randomUUID(),
        type: 'payment.paid',
        trade_no: created.trade_no,
        amount: 100,
      });
      const res = await callback(channel, body, headers);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toBe('fail');
      const rows = await stack.database.db.sequelize.query<{ outcome: string; raw_body: string }>(
        'SELECT outcome, raw_body FROM channel_callbacks WHERE raw_body = :body',
        { replacements: { body }, type: QueryTypes.SELECT },
      );
      expect(rows).toHaveLength(logged);
      for (const row of rows) expect(row.outcome).not.toBe('delivered');
      expect((await query(created.trade_no)).status).toBe('pending');
    },
  );
});

describe('signed callbacks that do not match', () => {
  const signedCallback = (body: string, timestamp?: number) =>
    fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, {
      method: 'POST',
      body,
      headers: { 'sandbox-signature': signSandboxPayload(stack.sandboxSecret, body, timestamp) },
    });

  test.each([
    ['an unknown order', (t: string) => ({ trade_no: `${t}X`, amount: 100 }), undefined],
    ['a different amount', (t: string) => ({ trade_no: t, amount: 99 }), undefined],
    ['a different currency', (t: string) => ({ trade_no: t, amount: 100, currency: 'USD' }), undefined],
    ['a stale timestamp', (t: string) => ({ trade_no: t, amount: 100 }), Math.floor(Date.now() / 1000) - 301],
    ['an unparseable body', () => 'not json', undefined],
  ])(
    'when a correctly signed callback names %s, then "fail" and the order stays pending',
    async (_w, make, ts) => {
      const created = await create();
      const fields = make(created.trade_no);
      const body =
        typeof fields === 'string'
          ? fields
          : JSON.stringify({
              event_id: randomUUID(),
              type: 'payment.paid',
              channel_trade_no: 'SBX1',
              currency: 'CNY',
              paid_at: new Date().toISOString(),
              ...fields,
            });
      const res = await signedCallback(body, ts);
      expect(await res.text()).toBe('fail');
      expect((await query(created.trade_no)).status).toBe('pending');
    },
  );

  test('when a correctly signed payment callback arrives, then "success" and the order is paid', async () => {
    const created = await create({ extra: { sandbox: { callback: 'drop' } } });
    const body = JSON.stringify({
      event_id: randomUUID(),
      type: 'payment.paid',
      trade_no: created.trade_no,
      channel_trade_no: 'SBX-direct',
      amount: 100,
      currency: 'CNY',
      paid_at: new Date().toISOString(),
    });
    const res = await signedCallback(body);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('success');
    await statusIs(created.trade_no, 'paid')();
  });
});

describe('expiry and close', () => {
  /** Waits until the order's history records at least `atLeast` close requests to the channel. */
  const closesRecorded = (workflowId: string, atLeast: number) =>
    until(
      `${atLeast} closeChannelPayment call(s) in the history of ${workflowId}`,
      async () => {
        const { events } = await stack.client.workflow.getHandle(workflowId).fetchHistory();
        const closes = activityCalls(events).filter((name) => name === 'closeChannelPayment');
        return closes.length >= atLeast ? true : undefined;
      },
      30_000,
    );

  test('when the channel was paid after the last poll and its callback is lost, then the check at expiry finds it paid, not closed', async () => {
    // The channel's query lags (it answers pending after the payment) and the callback is
    // dropped: only the close at expiry can learn of the payment.
    const created = await create({
      expire_minutes: 1,
      extra: { sandbox: { callback: 'drop', query: 'stale' } },
    });
    await buyerPays(created.pay_credential.pay_url);
    await statusIs(created.trade_no, 'paid')();
    const workflowId = orderWorkflowId(app.app_id, String((await query(created.trade_no)).merchant_order_no));
    // The close ran as local activities: their markers reach the history when the workflow task
    // that ran them completes, a moment after they marked the row paid.
    await closesRecorded(workflowId, 1);
    // Past the (scaled) expiry, once nothing more can come of it: still paid, announced as paid
    // once and never as closed.
    await settled(created.trade_no);
    expect((await query(created.trade_no)).status).toBe('paid');
    expect(notificationsFor(created.trade_no, 'payment.closed')).toHaveLength(0);
    expect(notificationsFor(created.trade_no, 'payment.succeeded')).toHaveLength(1);
  });

  test('when the channel cannot be reached to close an expired order the buyer paid, then the order waits for it and ends paid, never closed', async () => {
    // The callback is lost, the query lags, and the first 8 close requests meet a channel that is
    // down (more than one close activity's attempts): only a close that waits for the channel
    // finds the payment.
    const created = await create({
      expire_minutes: 1,
      extra: { sandbox: { callback: 'drop', query: 'stale', close_failures: 8 } },
    });
    await buyerPays(created.pay_credential.pay_url);
    await until(
      'paid',
      async () => ((await query(created.trade_no)).status === 'paid' ? true : undefined),
      60_000,
    );
    const workflowId = orderWorkflowId(app.app_id, String((await query(created.trade_no)).merchant_order_no));
    await closesRecorded(workflowId, 2);
    await until('payment.succeeded', async () =>
      notificationsFor(created.trade_no, 'payment.succeeded').length ? true : undefined,
    );
    expect(notificationsFor(created.trade_no, 'payment.closed')).toHaveLength(0);
  });

  test('when the channel reports a payment after the order closed, then it is recorded paid, flagged for refund review, and payment.succeeded is sent', async () => {
    const created = await create({ extra: { sandbox: { callback: 'drop' } } });
    expect((await envelope(await post('/api/v1/pay/close', { trade_no: created.trade_no }))).code).toBe(
      'success',
    );
    await statusIs(created.trade_no, 'closed')();
    const body = JSON.stringify({
      event_id: randomUUID(),
      type: 'payment.paid',
      trade_no: created.trade_no,
      channel_trade_no: 'SBX-late',
      amount: 100,
      currency: 'CNY',
      paid_at: new Date().toISOString(),
    });
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, {
      method: 'POST',
      body,
      headers: { 'sandbox-signature': signSandboxPayload(stack.sandboxSecret, body) },
    });
    expect(await res.text()).toBe('success');
    await statusIs(created.trade_no, 'paid')();
    expect(
      await count('SELECT count(*) AS n FROM orders WHERE trade_no = :t AND needs_refund_review', {
        t: created.trade_no,
      }),
    ).toBe(1);
    await until('payment.succeeded', async () =>
      notificationsFor(created.trade_no, 'payment.succeeded').length ? true : undefined,
    );
  });

  test('when an order is closed while the channel already has the payment, then 422 order_already_paid and the order is paid', async () => {
    const created = await create({ extra: { sandbox: { callback: 'drop', query: 'stale' } } });
    await buyerPays(created.pay_credential.pay_url);
    expect((await query(created.trade_no)).status).toBe('pending');
    const res = await post('/api/v1/pay/close', { trade_no: created.trade_no });
    expect(res.status).toBe(422);
    expect((await envelope(res)).code).toBe('order_already_paid');
    expect((await query(created.trade_no)).status).toBe('paid');
    await until('payment.succeeded', async () =>
      notificationsFor(created.trade_no, 'payment.succeeded').length ? true : undefined,
    );
    expect(notificationsFor(created.trade_no, 'payment.closed')).toHaveLength(0);
  });

  test('when an order is left unpaid past expire_minutes, then it is closed and payment.closed is sent', async () => {
    const created = await create({ expire_minutes: 1 });
    await statusIs(created.trade_no, 'closed')();
    expect((await query(created.trade_no)).closed_at).not.toBeNull();
    await until('payment.closed', async () =>
      notificationsFor(created.trade_no, 'payment.closed').length ? true : undefined,
    );
  });

  test('when a pending order is closed, then 200 null and closed; closing again is 200; a paid one is 422 order_already_paid', async () => {
    const created = await create();
    const res = await post('/api/v1/pay/close', { trade_no: created.trade_no });
    expect(res.status).toBe(200);
    expect((await envelope(res)).data).toBeNull();
    expect((await query(created.trade_no)).status).toBe('closed');
    expect((await post('/api/v1/pay/close', { trade_no: created.trade_no })).status).toBe(200);

    const paid = await create();
    await buyerPays(paid.pay_credential.pay_url);
    await statusIs(paid.trade_no, 'paid')();
    const refused = await post('/api/v1/pay/close', { trade_no: paid.trade_no });
    expect(refused.status).toBe(422);
    expect((await envelope(refused)).code).toBe('order_already_paid');
  });

  test('when a paid order is created again, then 422 order_already_paid', async () => {
    const req = order();
    const created = await envelope<Created>(await post('/api/v1/pay/unified-order', req));
    await buyerPays(created.data!.pay_credential.pay_url);
    await statusIs(created.data!.trade_no, 'paid')();
    const again = await post('/api/v1/pay/unified-order', req);
    expect(again.status).toBe(422);
    expect(await envelope(again)).toMatchObject({ code: 'order_already_paid', data: null });
  });

  test('when a closed order is created again, then 422 order_closed', async () => {
    const req = order();
    const created = await envelope<Created>(await post('/api/v1/pay/unified-order', req));
    await post('/api/v1/pay/close', { trade_no: created.data!.trade_no });
    const again = await post('/api/v1/pay/unified-order', req);
    expect(again.status).toBe(422);
    expect((await envelope(again)).code).toBe('order_closed');
  });
});

describe('refunds', () => {
  async function paidOrder(amount = 100): Promise<Created> {
    const created = await create({ amount });
    await buyerPays(created.pay_credential.pay_url);
    await statusIs(created.trade_no, 'paid')();
    return created;
  }

  test('when a pending or closed order is refunded, then 422 order_not_paid or order_closed', async () => {
    const pending = await create();
    const r1 = await post('/api/v1/pay/refund', { trade_no: pending.trade_no, refund_amount: 10 });
    expect(r1.status).toBe(422);
    expect((await envelope(r1)).code).toBe('order_not_paid');
    await post('/api/v1/pay/close', { trade_no: pending.trade_no });
    const r2 = await post('/api/v1/pay/refund', { trade_no: pending.trade_no, refund_amount: 10 });
    expect((await envelope(r2)).code).toBe('order_closed');
  });

  test('when part of a paid order is refunded, then processing, then success by callback, order partially_refunded, refund.succeeded sent', async () => {
    const paid = await paidOrder();
    const res = await post('/api/v1/pay/refund', {
      trade_no: paid.trade_no,
      refund_amount: 30,
      reason: 'broken cup',
    });
    const body = await envelope<{
      refund_no: string;
      status: string;
      refund_amount: number;
      trade_no: string;
    }>(res);
    expect(body.code).toBe('success');
    expect(body.data).toMatchObject({ trade_no: paid.trade_no, refund_amount: 30, status: 'processing' });
    expect(body.data!.refund_no).toMatch(/^R\d{24}$/);
    const refundNo = body.data!.refund_no;
    const settled = await until('refund success', async () => {
      const q = (await envelope(await get(`/api/v1/pay/refund/query/${refundNo}`))).data!;
      return q.status === 'success' ? q : undefined;
    });
    expect(settled).toMatchObject({ refund_no: refundNo, reason: 'broken cup', refund_amount: 30 });
    expect(settled.refund_time).not.toBeNull();
    await statusIs(paid.trade_no, 'partially_refunded')();
    expect((await query(paid.trade_no)).refunded_amount).toBe(30);
    await until('refund.succeeded', async () =>
      receiver.received.some((r) => r.body.includes(refundNo) && r.body.includes('refund.succeeded'))
        ? true
        : undefined,
    );
  });

  test('when a refund exceeds what is left, then 422 refund_amount_exceed; a full refund makes the order refunded', async () => {
    const paid = await paidOrder();
    const over = await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 101 });
    expect((await envelope(over)).code).toBe('refund_amount_exceed');
    const full = await envelope(
      await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 100 }),
    );
    expect(full.code).toBe('success');
    await statusIs(paid.trade_no, 'refunded')();
    const more = await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 1 });
    expect((await envelope(more)).code).toBe('refund_amount_exceed');
  });

  test('when the channel fails a refund, then it ends failed, refund.failed is sent, and its amount is free again', async () => {
    const paid = await paidOrder();
    const res = await envelope<{ refund_no: string }>(
      await post('/api/v1/pay/refund', {
        trade_no: paid.trade_no,
        refund_amount: 100,
        reason: 'test [sandbox:fail]',
      }),
    );
    const refundNo = res.data!.refund_no;
    await until('refund failed', async () =>
      (await envelope(await get(`/api/v1/pay/refund/query/${refundNo}`))).data!.status === 'failed'
        ? true
        : undefined,
    );
    await until('refund.failed', async () =>
      receiver.received.some((r) => r.body.includes(refundNo) && r.body.includes('refund.failed'))
        ? true
        : undefined,
    );
    const again = await until('the amount to be released', async () => {
      const r = await envelope(
        await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 100 }),
      );
      return r.code === 'success' ? r : undefined;
    });
    expect(again.data).toMatchObject({ refund_amount: 100, status: 'processing' });
  });

  test('when the channel refuses a refund, then 502 channel_refund_fail and the amount stays refundable', async () => {
    const paid = await paidOrder();
    const res = await post('/api/v1/pay/refund', {
      trade_no: paid.trade_no,
      refund_amount: 100,
      reason: '[sandbox:refuse]',
    });
    expect(res.status).toBe(502);
    expect(await envelope(res)).toMatchObject({ code: 'channel_refund_fail', data: null });
    const again = await envelope(
      await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 100 }),
    );
    expect(again.code).toBe('success');
  });

  test('when the channel accepts a refund but its answer never arrives, then 502 channel_timeout, the amount stays reserved, and the refund ends success as the channel has it', async () => {
    const paid = await paidOrder();
    const merchantRefundNo = `MR-${randomUUID()}`;
    const lost = await post('/api/v1/pay/refund', {
      trade_no: paid.trade_no,
      refund_amount: 60,
      reason: 'answer lost [sandbox:no-answer]',
      merchant_refund_no: merchantRefundNo,
    });
    expect(lost.status).toBe(502);
    expect(await envelope(lost)).toMatchObject({ code: 'channel_timeout', data: null });
    // Reserved, not released: 60 may already be back with the buyer.
    const over = await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 50 });
    expect((await envelope(over)).code).toBe('refund_amount_exceed');
    // The same merchant_refund_no finds the refund that is being followed.
    const again = await envelope<{ refund_no: string; status: string }>(
      await post('/api/v1/pay/refund', {
        trade_no: paid.trade_no,
        refund_amount: 60,
        merchant_refund_no: merchantRefundNo,
      }),
    );
    expect(again.code).toBe('success');
    const refundNo = again.data!.refund_no;
    await until('refund success', async () =>
      (await envelope(await get(`/api/v1/pay/refund/query/${refundNo}`))).data!.status === 'success'
        ? true
        : undefined,
    );
    await statusIs(paid.trade_no, 'partially_refunded')();
    expect({
      refunded: (await query(paid.trade_no)).refunded_amount,
      atChannel: await count(
        "SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_refunds WHERE trade_no = :t AND status = 'success'",
        { t: paid.trade_no },
      ),
    }).toEqual({ refunded: 60, atChannel: 60 });
    await until('refund.succeeded', async () =>
      receiver.received.some((r) => r.body.includes(refundNo) && r.body.includes('refund.succeeded'))
        ? true
        : undefined,
    );
  });

  test('when a refund never reaches the channel, then 502 channel_timeout, and once the channel twice has no such refund it ends failed and its amount is free again', async () => {
    const paid = await paidOrder();
    const merchantRefundNo = `MR-${randomUUID()}`;
    const cut = await post('/api/v1/pay/refund', {
      trade_no: paid.trade_no,
      refund_amount: 100,
      reason: 'cut off [sandbox:unreachable]',
      merchant_refund_no: merchantRefundNo,
    });
    expect(cut.status).toBe(502);
    expect(await envelope(cut)).toMatchObject({ code: 'channel_timeout', data: null });
    const again = await envelope<{ refund_no: string }>(
      await post('/api/v1/pay/refund', {
        trade_no: paid.trade_no,
        refund_amount: 100,
        merchant_refund_no: merchantRefundNo,
      }),
    );
    const refundNo = again.data!.refund_no;
    await until('refund failed', async () =>
      (await envelope(await get(`/api/v1/pay/refund/query/${refundNo}`))).data!.status === 'failed'
        ? true
        : undefined,
    );
    await until('refund.failed', async () =>
      receiver.received.some((r) => r.body.includes(refundNo) && r.body.includes('refund.failed'))
        ? true
        : undefined,
    );
    const full = await until('the amount to be released', async () => {
      const r = await envelope(
        await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 100 }),
      );
      return r.code === 'success' ? r : undefined;
    });
    expect(full.data).toMatchObject({ refund_amount: 100, status: 'processing' });
    expect(
      await count('SELECT count(*) AS n FROM sandbox_refunds WHERE refund_no = :r', { r: refundNo }),
    ).toBe(0);
  });

  test('when a refund or close reaches an order whose workflow has ended, then it reopens the order from its saved state, or answers from the read model, never 500', async () => {
    const savedState = (tradeNo: string) =>
      count('SELECT count(*) AS n FROM order_saved_states WHERE trade_no = :t', { t: tradeNo });
    const terminated = async (tradeNo: string) => {
      const merchantOrderNo = (await query(tradeNo)).merchant_order_no as string;
      // A paid order with nothing to wait for saves its state in the task that paid it.
      await until('its state saved', async () => ((await savedState(tradeNo)) === 1 ? true : undefined));
      const handle = stack.client.workflow.getHandle(orderWorkflowId(app.app_id, merchantOrderNo));
      // An operator ended the order's workflow (or it ended between the API's read and its update).
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test');
    };
    // SPEC §7: a new run loads the state the order saved and refunds.
    const paid = await paidOrder(100);
    await terminated(paid.trade_no);
    const refund = await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 10 });
    expect([refund.status, (await envelope(refund)).code]).toEqual([200, 'success']);

    // With no state saved (a run that ended before runs saved theirs), the read model answers.
    const unsaved = await paidOrder(100);
    await terminated(unsaved.trade_no);
    await stack.database.db.sequelize.query('DELETE FROM order_saved_states WHERE trade_no = :t', {
      replacements: { t: unsaved.trade_no },
    });
    const answered = await post('/api/v1/pay/refund', { trade_no: unsaved.trade_no, refund_amount: 10 });
    expect(answered.status).toBe(422);
    expect((await envelope(answered)).code).toBe('refund_amount_exceed');
    expect(
      await count('SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t', { t: unsaved.trade_no }),
    ).toBe(0);

    const pending = await create();
    const pendingNo = (await query(pending.trade_no)).merchant_order_no as string;
    await stack.client.workflow.getHandle(orderWorkflowId(app.app_id, pendingNo)).terminate('test');
    const close = await post('/api/v1/pay/close', { trade_no: pending.trade_no });
    expect(close.status).toBe(422);
    expect((await envelope(close)).code).toBe('order_closed');
  });

  test('when an order lives through continue-as-new, then its refunded total and reservations carry over', async () => {
    // The tests' Temporal server suggests continue-as-new after 120 events (default 4 096).
    const paid = await paidOrder(100);
    for (let i = 0; i < 12; i++) {
      const r = await envelope<{ refund_no: string }>(
        await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 1 }),
      );
      expect(r.code).toBe('success');
      await until('refund settled', async () =>
        (await envelope(await get(`/api/v1/pay/refund/query/${r.data!.refund_no}`))).data!.status ===
        'success'
          ? true
          : undefined,
      );
    }
    const runs = await until('a second run', async () => {
      const found: string[] = [];
      for await (const run of stack.client.workflow.list({
        query: `TradeNo = '${paid.trade_no}' AND WorkflowType = 'orderWorkflow'`,
      })) {
        found.push(run.status.name);
      }
      return found.length > 1 ? found : undefined;
    });
    // Every run but the latest handed over by continue-as-new; the latest is still the order.
    expect(runs.filter((s) => s === 'CONTINUED_AS_NEW')).toHaveLength(runs.length - 1);
    expect(runs.filter((s) => s === 'RUNNING')).toHaveLength(1);
    await until('totals', async () =>
      (await query(paid.trade_no)).refunded_amount === 12 ? true : undefined,
    );
    const over = await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 89 });
    expect((await envelope(over)).code).toBe('refund_amount_exceed');
    const rest = await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 88 });
    expect((await envelope(rest)).code).toBe('success');
    await statusIs(paid.trade_no, 'refunded')();
  });

  test('when merchant_refund_no repeats, then the existing refund is returned', async () => {
    const paid = await paidOrder();
    const first = await envelope<{ refund_no: string }>(
      await post('/api/v1/pay/refund', {
        trade_no: paid.trade_no,
        refund_amount: 10,
        merchant_refund_no: 'MR-1',
      }),
    );
    const again = await envelope<{ refund_no: string }>(
      await post('/api/v1/pay/refund', {
        trade_no: paid.trade_no,
        refund_amount: 10,
        merchant_refund_no: 'MR-1',
      }),
    );
    expect(again.data!.refund_no).toBe(first.data!.refund_no);
  });

  test.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'when merchant_refund_no is %s (a name every object has), then it is an ordinary refund, the same when sent again, and the order takes the next one too',
    async (merchantRefundNo) => {
      const paid = await paidOrder();
      const refund = () =>
        post('/api/v1/pay/refund', {
          trade_no: paid.trade_no,
          refund_amount: 10,
          merchant_refund_no: merchantRefundNo,
        });
      const first = await envelope<{ refund_no: string }>(await refund());
      expect(first.code).toBe('success');
      // Sent again, it is the same refund.
      expect((await envelope<{ refund_no: string }>(await refund())).data?.refund_no).toBe(
        first.data!.refund_no,
      );
      const next = await post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 10 });
      expect({ status: next.status, code: (await envelope(next)).code }).toEqual({
        status: 200,
        code: 'success',
      });
    },
  );

  test.each([
    ['refund_amount 0', { refund_amount: 0 }, '"refund_amount" must be greater than or equal to 1'],
    ['refund_amount missing', { refund_amount: undefined }, '"refund_amount" is required'],
    ['trade_no missing', { trade_no: undefined }, '"trade_no" is required'],
    [
      'reason of 257 characters',
      { reason: 'r'.repeat(257) },
      '"reason" length must be less than or equal to 256 characters long',
    ],
  ])('when a refund has %s, then 400 invalid_param', async (_w, overrides, message) => {
    const res = await post('/api/v1/pay/refund', { trade_no: 'P1', refund_amount: 10, ...overrides });
    expect(res.status).toBe(400);
    expect(await envelope(res)).toMatchObject({ code: 'invalid_param', message });
  });
});

describe('the order workflow', () => {
  test('when an order is created, then an operator finds it in Temporal by AppId, TradeNo and BizStatus', async () => {
    const created = await create();
    const found = await until('visibility', async () => {
      const hits = [];
      for await (const wf of stack.client.workflow.list({
        query: `AppId = '${app.app_id}' AND TradeNo = '${created.trade_no}' AND BizStatus = 'pending'`,
      })) {
        hits.push(wf);
      }
      return hits.length ? hits : undefined;
    });
    expect(found.map((w) => w.workflowId)).toEqual([
      expect.stringMatching(new RegExp(`^order:${app.app_id}:M-`)),
    ]);
  });

  test('when an order with profit sharing is paid, then after the delay the amount is split by weight at the channel', async () => {
    // Receivers come from a merchant's configuration; here the workflow is driven directly.
    const merchantOrderNo = `M-${randomUUID()}`;
    const tradeNo = `P${Date.now()}0000000001`.slice(0, 25);
    const scale = (ms: number) => Math.max(1, Math.round(ms * TIME_SCALE));
    const result = await stack.client.workflow.executeUpdateWithStart(createOrderUpdate, {
      args: [
        {
          payMethod: 'qr_code',
          amount: 100,
          subject: 'Shared',
          notifyUrl: receiver.url,
          expireMinutes: 30,
          profitSharingAmount: 10,
          merchantId: null,
          subMerchantNo: null,
          receivers: [
            { type: 'merchant', account: 'acc-a', weight: 2 },
            { type: 'merchant', account: 'acc-b', weight: 1 },
          ],
          extra: null,
        },
      ],
      startWorkflowOperation: new WithStartWorkflowOperation('orderWorkflow', {
        workflowId: orderWorkflowId(app.app_id, merchantOrderNo),
        taskQueue: stack.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [
          {
            appId: app.app_id,
            merchantOrderNo,
            tradeNo,
            channelCode: 'sandbox',
            currency: 'CNY',
            callbackUrl: `${stack.baseUrl}/api/v1/notify/payment/sandbox`,
            createdAt: new Date().toISOString(),
            timings: {
              pollGapsMs: [100],
              expireAfterMs: scale(30 * 60_000),
              profitShareDelayMs: 200,
              refundPollGapsMs: [100],
              refundPollForMs: 60_000,
              latePaymentWindowMs: 1_000,
            },
          },
        ],
      }),
    });
    expect((await query(tradeNo)).profit_sharing_status).toBe('pending');
    await buyerPays((result.pay_credential as { pay_url: string }).pay_url);
    await until('profit sharing', async () =>
      (await query(tradeNo)).profit_sharing_status === 'finished' ? true : undefined,
    );
    const shares = await stack.database.db.sequelize.query<{
      receivers: { account: string; amount: number }[];
    }>('SELECT receivers FROM sandbox_profit_shares WHERE trade_no = :t', {
      replacements: { t: tradeNo },
      type: QueryTypes.SELECT,
    });
    expect(shares).toHaveLength(1);
    // 10 × 2/3 = 6 and 10 × 1/3 = 3; the remainder 1 goes to the first receiver.
    expect(shares[0]!.receivers.map((r) => [r.account, r.amount])).toEqual([
      ['acc-a', 7],
      ['acc-b', 3],
    ]);
  });
});

describe('queries and isolation', () => {
  test.each([
    ['/api/v1/pay/query/', 'trade_no is required'],
    ['/api/v1/pay/refund/query/', 'refund_no is required'],
  ])('when %s has an empty value, then 400 missing_param', async (path, message) => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(await envelope(res)).toMatchObject({ code: 'missing_param', message });
  });

  test("when another app asks for this app's order or refund, then it is not found", async () => {
    const created = await create();
    const other = await stack.createApp(['payments']);
    const q = await get(`/api/v1/pay/query/${created.trade_no}`, other);
    expect(q.status).toBe(422);
    expect((await envelope(q)).code).toBe('order_not_found');
    const c = await post('/api/v1/pay/close', { trade_no: created.trade_no }, other);
    expect((await envelope(c)).code).toBe('order_not_found');
    const r = await post('/api/v1/pay/refund', { trade_no: created.trade_no, refund_amount: 1 }, other);
    expect((await envelope(r)).code).toBe('order_not_found');
    expect((await envelope(await get('/api/v1/pay/refund/query/R1', other))).code).toBe('refund_not_found');
    expect((await query(created.trade_no)).status).toBe('pending');
  });
});
