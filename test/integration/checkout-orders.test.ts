/**
 * An order's checkout (SPEC §15): `pay_method: "checkout"` on unified-order answers durapay's
 * hosted page, where the buyer's browser picks the channel — WeChat's OAuth and JSAPI in WeChat,
 * Alipay's auth_base and tradePay in Alipay, a QR code and H5 pay in any other browser. On the
 * real stack, against the offline WeChat Pay and Alipay upstreams; buyers are plain HTTP clients
 * with a wallet's user agent (test/support/checkout-buyer.ts), the pages in a real browser are
 * test/e2e/checkout.test.ts's.
 *
 * Money is counted where it is taken: at the upstreams' ledgers, by the order's subject.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { ALIPAY_UA, CheckoutBuyer, PLAIN_UA, WECHAT_UA } from '../support/checkout-buyer';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { decodeQrDataUrl } from '../support/qr';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(180_000);

/** 1/100 of production's durations: an order of `expire_minutes: 1` expires in 0.6 s. */
const TIME_SCALE = 0.01;

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let merchantId: string;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE, wechatpay: {}, alipay: {} });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = await pay.merchant();
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: '1900000109' });
  await pay.attach(merchantId, 'alipay', { smid: '2088000000000778' });
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Checkout {
  trade_no: string;
  pay_credential: { checkout_url: string; qr_code: string };
  is_idempotent: boolean;
}

const orderBody = (overrides: Record<string, unknown> = {}) => ({
  merchant_order_no: `CO-${randomUUID()}`,
  pay_method: 'checkout',
  merchant_id: merchantId,
  amount: 1_800,
  subject: `Two coffees ${randomUUID().slice(0, 8)}`,
  notify_url: receiver.url,
  // 14 minutes at this scale: long enough for any buyer's round trip here.
  expire_minutes: 1440,
  ...overrides,
});

async function checkoutOrder(
  overrides: Record<string, unknown> = {},
): Promise<Checkout & { subject: string }> {
  const body = orderBody(overrides);
  const made = await pay.post<Checkout>('/api/v1/pay/unified-order', body);
  if (made.code !== 'success') throw new Error(`order failed: ${made.code} ${made.message}`);
  return { ...made.data!, subject: body.subject };
}

/** The order's payments as the channels hold them, by its subject: made, and paid. */
function atChannels(subject: string) {
  const wechat = stack.wechatpay!.sandbox.transactions().filter((t) => t.description === subject);
  const alipay = stack.alipay!.sandbox.trades().filter((t) => t.subject === subject);
  return {
    made: { wechatpay: wechat.length, alipay: alipay.length },
    paid: {
      wechatpay: wechat.filter((t) => ['SUCCESS', 'REFUND'].includes(t.trade_state)).length,
      alipay: alipay.filter((t) => ['TRADE_SUCCESS', 'TRADE_FINISHED'].includes(t.status)).length,
    },
  };
}

const rowOf = async (tradeNo: string) =>
  (
    await stack.database.db.sequelize.query<{
      channel_code: string | null;
      channel_pay_method: string | null;
    }>('SELECT channel_code, channel_pay_method FROM orders WHERE trade_no = :tradeNo', {
      replacements: { tradeNo },
      type: QueryTypes.SELECT,
    })
  )[0]!;

describe('POST /api/v1/pay/unified-order with pay_method checkout', () => {
  test('when an app makes a checkout order, then it answers the hosted page and the same page as a QR image, and the order is pending with no channel; the same create again answers the same', async () => {
    const body = orderBody();
    const made = await pay.post<Checkout>('/api/v1/pay/unified-order', body);
    expect(made.status).toBe(200);
    const order = made.data!;
    expect(order.is_idempotent).toBe(false);
    expect(order.pay_credential.checkout_url).toMatch(
      new RegExp(`^${stack.baseUrl}/checkout/o/${order.trade_no}-[0-9a-f]{24}$`),
    );
    expect(decodeQrDataUrl(order.pay_credential.qr_code)).toBe(order.pay_credential.checkout_url);
    expect(await pay.query(order.trade_no)).toEqual(
      expect.objectContaining({
        pay_method: 'checkout',
        status: 'pending',
        amount: 1_800,
        channel_code: null,
        channel_pay_method: null,
        merchant_id: merchantId,
      }),
    );
    const again = await pay.post<Checkout>('/api/v1/pay/unified-order', body);
    expect(again.data).toEqual({ ...order, is_idempotent: true });
    // Another amount under the same number is another order: refused, as for any pay method.
    const changed = await pay.post('/api/v1/pay/unified-order', { ...body, amount: 1_900 });
    expect(changed.status).toBe(400);
    expect(changed.code).toBe('invalid_param');
  });

  test.each([
    ['a channel_code', { channel_code: 'wechatpay' }, /"channel_code" is not for pay_method checkout/],
    [
      'a profit share',
      { profit_sharing_amount: 100 },
      /"profit_sharing_amount" is not for pay_method checkout/,
    ],
    ['a buyer code', { auth_code: '134567890123456789' }, /"auth_code" is for pay_method barcode only/],
  ])(
    'when a checkout order is asked with %s, then 400 invalid_param names the field',
    async (_what, extra, message) => {
      const answer = await pay.post('/api/v1/pay/unified-order', orderBody(extra));
      expect(answer.status).toBe(400);
      expect(answer.code).toBe('invalid_param');
      expect(answer.message).toMatch(message);
    },
  );

  test('when a checkout order names a merchant the app does not have, then 422 order_not_found, merchant not found', async () => {
    const answer = await pay.post('/api/v1/pay/unified-order', orderBody({ merchant_id: 'nobody-here' }));
    expect(answer.status).toBe(422);
    expect(answer).toEqual(
      expect.objectContaining({ code: 'order_not_found', message: 'merchant not found' }),
    );
  });
});

describe("a checkout order's buyer", () => {
  test("when a WeChat buyer opens the page, then WeChat's OAuth signs the buyer in, the order is made a JSAPI one at WeChat Pay, the bridge pays it, and it is paid and notified under its own trade_no", async () => {
    const order = await checkoutOrder();
    const buyer = new CheckoutBuyer(WECHAT_UA);
    const visit = await buyer.open(`${order.pay_credential.checkout_url}?amount=1`);
    expect(visit.hops[1]).toMatch(
      /\/wechatpay\/connect\/oauth2\/authorize\?appid=wx[0-9a-f]{16}&.*scope=snsapi_base/,
    );
    expect(visit.hops[2]).toMatch(/\/checkout\/signed-in\/wechatpay\?code=/);
    expect(visit.url).toBe(order.pay_credential.checkout_url);
    const data = CheckoutBuyer.pageData(visit.html);
    expect(data.wallet).toBe('wechatpay');
    expect(await rowOf(order.trade_no)).toEqual({ channel_code: 'wechatpay', channel_pay_method: 'jsapi' });
    // The order's amount, never the query's.
    expect(stack.wechatpay!.sandbox.transactions().find((t) => t.description === order.subject)).toEqual(
      expect.objectContaining({
        out_trade_no: order.trade_no,
        total: 1_800,
      }),
    );

    // Back again in WeChat (a reload): the same order's bridge, no second sign-in or order.
    const reload = await buyer.open(order.pay_credential.checkout_url);
    expect(reload.hops).toHaveLength(1);
    expect(CheckoutBuyer.pageData(reload.html).bridge).toEqual(data.bridge);

    expect(await buyer.wechatBridgePay(stack.baseUrl, data.bridge!)).toBe('get_brand_wcpay_request:ok');
    await pay.statusIs(order.trade_no, 'paid');
    expect(await pay.query(order.trade_no)).toEqual(
      expect.objectContaining({
        pay_method: 'checkout',
        channel_code: 'wechatpay',
        channel_pay_method: 'jsapi',
      }),
    );
    const notice = await until(
      'the payment notified',
      async () => pay.notificationsFor(order.trade_no, 'payment.succeeded')[0],
    );
    expect(JSON.parse(notice.body).data).toEqual(
      expect.objectContaining({ trade_no: order.trade_no, amount: 1_800, channel_code: 'wechatpay' }),
    );
    expect(atChannels(order.subject)).toEqual({
      made: { wechatpay: 1, alipay: 0 },
      paid: { wechatpay: 1, alipay: 0 },
    });

    // Paid: an Alipay buyer who opens the page sees it paid, and nothing is made at Alipay.
    const late = await new CheckoutBuyer(ALIPAY_UA).open(order.pay_credential.checkout_url);
    expect(late.hops).toHaveLength(1);
    expect(CheckoutBuyer.pageData(late.html).status).toBe('paid');
    expect(atChannels(order.subject).made.alipay).toBe(0);
    // A paid checkout order is refunded like any other, at the channel its buyer paid at.
    const refund = await pay.post('/api/v1/pay/refund', {
      trade_no: order.trade_no,
      refund_amount: 800,
      merchant_refund_no: `R-${randomUUID()}`,
    });
    expect(refund.code).toBe('success');
    await pay.statusIs(order.trade_no, 'partially_refunded');
  });

  test('when an Alipay buyer opens the page, then auth_base signs the buyer in, alipay.trade.create makes the trade for that buyer, and tradePay pays it', async () => {
    const order = await checkoutOrder();
    const buyer = new CheckoutBuyer(ALIPAY_UA);
    const visit = await buyer.open(order.pay_credential.checkout_url);
    expect(visit.hops[1]).toMatch(/\/alipay\/oauth2\/publicAppAuthorize\.htm\?.*scope=auth_base/);
    expect(visit.url).toBe(order.pay_credential.checkout_url);
    const data = CheckoutBuyer.pageData(visit.html);
    expect(data.wallet).toBe('alipay');
    expect(await rowOf(order.trade_no)).toEqual({ channel_code: 'alipay', channel_pay_method: 'jsapi' });
    expect(await buyer.alipayBridgePay(stack.baseUrl, data.bridge!)).toBe('9000');
    await pay.statusIs(order.trade_no, 'paid');
    expect(atChannels(order.subject)).toEqual({
      made: { wechatpay: 0, alipay: 1 },
      paid: { wechatpay: 0, alipay: 1 },
    });
  });

  test("when a buyer opens the page in another browser, then it shows the page's QR code and H5 buttons, and WeChat Pay's H5 takes the order there", async () => {
    const order = await checkoutOrder();
    const buyer = new CheckoutBuyer(PLAIN_UA);
    const landing = await buyer.open(order.pay_credential.checkout_url);
    expect(landing.status).toBe(200);
    const qr = /<img class="qr" src="([^"]+)"/.exec(landing.html)![1]!;
    expect(decodeQrDataUrl(qr.replace(/&#61;/g, '='))).toBe(order.pay_credential.checkout_url);
    const action = /<form method="post" action="([^"]+)"/.exec(landing.html)![1]!;
    expect(`${stack.baseUrl}${action}`).toBe(`${order.pay_credential.checkout_url}/h5`);
    expect(landing.html).toContain('name="channel" value="wechatpay"');
    expect(landing.html).toContain('name="channel" value="alipay"');
    // Nothing is made at a channel by looking.
    expect(atChannels(order.subject).made).toEqual({ wechatpay: 0, alipay: 0 });

    const h5 = await buyer.fetch(`${order.pay_credential.checkout_url}/h5`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'channel=wechatpay',
    });
    expect(h5.status).toBe(303);
    expect(h5.headers.get('location')).toMatch(/\/wechatpay\//);
    expect(await rowOf(order.trade_no)).toEqual({ channel_code: 'wechatpay', channel_pay_method: 'h5' });
    expect(atChannels(order.subject).made).toEqual({ wechatpay: 1, alipay: 0 });
    // The same pick again (a second press) goes to the same page; another channel is refused.
    const again = await buyer.fetch(`${order.pay_credential.checkout_url}/h5`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'channel=wechatpay',
    });
    expect(again.headers.get('location')).toBe(h5.headers.get('location'));
    const other = await buyer.open(`${order.pay_credential.checkout_url}/h5`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'channel=alipay',
    });
    expect(other.status).toBe(409);
    expect(CheckoutBuyer.messageOf(other.html)).toBe('order_taken');
    expect(atChannels(order.subject).made).toEqual({ wechatpay: 1, alipay: 0 });
  });

  test('when a WeChat buyer took the order to WeChat Pay, then an Alipay buyer who opens the page is told it is being paid elsewhere, and nothing is made at Alipay', async () => {
    const order = await checkoutOrder();
    const first = await new CheckoutBuyer(WECHAT_UA).open(order.pay_credential.checkout_url);
    expect(CheckoutBuyer.pageData(first.html).wallet).toBe('wechatpay');
    // Pending at WeChat Pay: the Alipay buyer, and a buyer in another browser, are told so.
    for (const ua of [ALIPAY_UA, PLAIN_UA]) {
      const second = await new CheckoutBuyer(ua).open(order.pay_credential.checkout_url);
      expect(second.hops).toHaveLength(1);
      expect(second.status).toBe(409);
      expect(CheckoutBuyer.messageOf(second.html)).toBe('order_taken');
    }
    expect(atChannels(order.subject).made).toEqual({ wechatpay: 1, alipay: 0 });
  });

  test("when the order's row already names another channel (an attempt abandoned by an earlier task bound it), then a WeChat buyer's pick is refused and nothing is made at WeChat Pay", async () => {
    const order = await checkoutOrder();
    const buyer = new CheckoutBuyer(WECHAT_UA);
    // The buyer's way to WeChat's sign-in and back, stopped before durapay takes the code.
    const authorize = (await buyer.fetch(order.pay_credential.checkout_url)).headers.get('location')!;
    const back = (await buyer.fetch(authorize)).headers.get('location')!;
    expect(back).toMatch(/\/checkout\/signed-in\/wechatpay\?code=/);
    // Meanwhile the row is bound as an earlier attempt that made the order at Alipay, and wrote
    // the row, but whose answer the workflow never had, leaves it.
    await stack.database.db.sequelize.query(
      "UPDATE orders SET channel_code = 'alipay', channel_pay_method = 'h5' WHERE trade_no = :tradeNo",
      { replacements: { tradeNo: order.trade_no } },
    );
    const visit = await buyer.open(back);
    expect(visit.status).toBe(409);
    expect(CheckoutBuyer.messageOf(visit.html)).toBe('order_taken');
    expect(atChannels(order.subject).made).toEqual({ wechatpay: 0, alipay: 0 });
  });

  test('when two WeChat buyers sign in to one page at once, then one order is made at WeChat Pay, for one of them, and the other is told so', async () => {
    const order = await checkoutOrder();
    const buyers = Array.from({ length: 6 }, () => new CheckoutBuyer(WECHAT_UA));
    const visits = await Promise.all(buyers.map((b) => b.open(order.pay_credential.checkout_url)));
    const payable = visits.filter(
      (v) => v.status === 200 && CheckoutBuyer.pageData(v.html).wallet === 'wechatpay',
    );
    const told = visits.filter((v) => CheckoutBuyer.messageOf(v.html) === 'order_taken');
    // Each buyer is its own WeChat user (a cookie of its own): only the first pick's may pay.
    expect(payable.length + told.length).toBe(buyers.length);
    expect(atChannels(order.subject).made).toEqual({ wechatpay: 1, alipay: 0 });
    const payers = new Set(payable.map((v) => JSON.stringify(CheckoutBuyer.pageData(v.html).bridge)));
    expect(payers.size).toBe(1);
  });
});

describe('a pick and a close at once', () => {
  test('when a buyer picks WeChat Pay as the app closes the order, for 10 rounds, then each order ends closed, and any order made at WeChat Pay is closed there: nothing can be paid', async () => {
    // The first round closes before the pick and the last picks before the close, so both
    // outcomes are met whatever the machine's speed; between them the two race, the close
    // starting later each round (0 to 800 ms after the pick).
    const seen = { pickedFirst: 0, closedFirst: 0 };
    const ROUNDS = 10;
    for (let round = 0; round < ROUNDS; round++) {
      const order = await checkoutOrder();
      const buyer = new CheckoutBuyer(WECHAT_UA);
      const authorize = (await buyer.fetch(order.pay_credential.checkout_url)).headers.get('location')!;
      const back = (await buyer.fetch(authorize)).headers.get('location')!;
      const close = () => pay.post('/api/v1/pay/close', { trade_no: order.trade_no });
      let picked: Awaited<ReturnType<CheckoutBuyer['open']>>;
      let closed: Awaited<ReturnType<typeof close>>;
      if (round === 0) {
        closed = await close();
        picked = await buyer.open(back);
      } else if (round === ROUNDS - 1) {
        picked = await buyer.open(back);
        closed = await close();
      } else {
        [picked, closed] = await Promise.all([
          buyer.open(back),
          new Promise((r) => setTimeout(r, (round - 1) * 100)).then(close),
        ]);
      }
      expect({ round, close: closed.code }).toEqual({ round, close: 'success' });
      await pay.statusIs(order.trade_no, 'closed');
      const atWechat = stack.wechatpay!.sandbox.transactions().filter((t) => t.description === order.subject);
      // Picked first: made there, then closed there by the close; closed first: never made.
      expect({ round, states: atWechat.map((t) => t.trade_state) }).toEqual({
        round,
        states: atWechat.length === 0 ? [] : ['CLOSED'],
      });
      expect([200, 410]).toContain(picked.status);
      seen[atWechat.length === 0 ? 'closedFirst' : 'pickedFirst'] += 1;
    }
    expect(seen.pickedFirst).toBeGreaterThan(0);
    expect(seen.closedFirst).toBeGreaterThan(0);
  });
});

describe('a checkout order no buyer took to a channel', () => {
  test('when the app closes it, then it is closed without any channel, notified, and its page says so', async () => {
    const order = await checkoutOrder();
    const closed = await pay.post('/api/v1/pay/close', { trade_no: order.trade_no });
    expect(closed.code).toBe('success');
    await pay.statusIs(order.trade_no, 'closed');
    await until('the close notified', async () => pay.notificationsFor(order.trade_no, 'payment.closed')[0]);
    const page = await new CheckoutBuyer(WECHAT_UA).open(order.pay_credential.checkout_url);
    expect(page.hops).toHaveLength(1);
    expect(CheckoutBuyer.pageData(page.html).status).toBe('closed');
    expect(atChannels(order.subject).made).toEqual({ wechatpay: 0, alipay: 0 });
  });

  test('when it expires, then it is closed without any channel and notified, and a buyer signing in after gets its closed page and no order', async () => {
    const order = await checkoutOrder({ expire_minutes: 1 });
    await pay.statusIs(order.trade_no, 'closed');
    await until('the close notified', async () => pay.notificationsFor(order.trade_no, 'payment.closed')[0]);
    const page = await new CheckoutBuyer(ALIPAY_UA).open(order.pay_credential.checkout_url);
    expect(page.hops).toHaveLength(1);
    expect(CheckoutBuyer.pageData(page.html).status).toBe('closed');
    expect(atChannels(order.subject).made).toEqual({ wechatpay: 0, alipay: 0 });
    expect(await rowOf(order.trade_no)).toEqual({ channel_code: null, channel_pay_method: null });
  });

  test('when a page token is forged, then the page says there is no such order', async () => {
    const order = await checkoutOrder();
    const forged = order.pay_credential.checkout_url.replace(/-[0-9a-f]{24}$/, `-${'0'.repeat(24)}`);
    const page = await new CheckoutBuyer(WECHAT_UA).open(forged);
    expect(page.status).toBe(404);
    expect(CheckoutBuyer.messageOf(page.html)).toBe('order_not_found');
  });
});
