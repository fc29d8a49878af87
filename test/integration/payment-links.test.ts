/**
 * Payment links (SPEC §15) over durapay's HTTP API and its hosted checkout, on the real stack,
 * against the offline WeChat Pay and Alipay upstreams with their wallets' sign-ins (WeChat OAuth
 * snsapi_base, Alipay auth_base) and JS bridges. Buyers are plain HTTP clients with a wallet's
 * user agent and a cookie jar (test/support/checkout-buyer.ts), so that twenty can open a link at
 * once; the pages themselves are driven in a real browser by test/e2e/checkout.test.ts.
 *
 * Money is counted where it is taken: at the upstreams' ledgers (their payment orders by the
 * link's subject), never only by durapay's answers.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import jsQR from 'jsqr';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { ALIPAY_UA, CheckoutBuyer, PLAIN_UA, WECHAT_UA } from '../support/checkout-buyer';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { decodeQrDataUrl } from '../support/qr';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';

/** pngjs (qrcode's own PNG codec) has no types of its own. */
const { PNG } = createRequire(__filename)('pngjs') as {
  PNG: { sync: { read(data: Buffer): { width: number; height: number; data: Buffer } } };
};

jest.setTimeout(180_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let merchantId: string;

beforeAll(async () => {
  // Real time: an order opened through a link holds its place for 10 minutes, as in production.
  stack = await startTestStack({ timeScale: 1, wechatpay: {}, alipay: {} });
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

interface Link {
  link_id: string;
  merchant_link_no: string;
  merchant_id: string | null;
  amount: number;
  subject: string;
  status: string;
  paid_count: number;
  max_payments: number;
  expires_at: string | null;
  url: string;
  qr_code: string;
  is_idempotent?: boolean;
}

const linkBody = (overrides: Record<string, unknown> = {}) => ({
  merchant_link_no: `L-${randomUUID()}`,
  merchant_id: merchantId,
  amount: 2_500,
  subject: `Workshop ticket ${randomUUID().slice(0, 8)}`,
  notify_url: receiver.url,
  ...overrides,
});

async function makeLink(overrides: Record<string, unknown> = {}): Promise<Link> {
  const made = await pay.post<Link>('/api/v1/payment-links', linkBody(overrides));
  if (made.code !== 'success') throw new Error(`link failed: ${made.code} ${made.message}`);
  return made.data!;
}

/** The link's payments as the channels hold them: WeChat Pay's and Alipay's, paid, by its subject. */
function paidAtChannels(subject: string): { wechatpay: number; alipay: number } {
  const wechatpay = stack
    .wechatpay!.sandbox.transactions()
    .filter((t) => t.description === subject && ['SUCCESS', 'REFUND'].includes(t.trade_state)).length;
  const alipay = stack
    .alipay!.sandbox.trades()
    .filter((t) => t.subject === subject && ['TRADE_SUCCESS', 'TRADE_FINISHED'].includes(t.status)).length;
  return { wechatpay, alipay };
}

const ordersOf = async (linkId: string) =>
  stack.database.db.sequelize.query<{ trade_no: string; status: string; channel_code: string }>(
    'SELECT trade_no, status, channel_code FROM orders WHERE payment_link_id = :linkId ORDER BY created_at',
    { replacements: { linkId }, type: QueryTypes.SELECT },
  );

/** A wallet buyer signs in through the link and pays at its bridge; the bridge's answer. */
async function walletPays(buyer: CheckoutBuyer, link: Link): Promise<{ tradeNo: string; answer: string }> {
  const visit = await buyer.open(link.url);
  const data = CheckoutBuyer.pageData(visit.html);
  const tradeNo = /<span id="trade-no">([A-Z0-9]+)<\/span>/.exec(visit.html)![1]!;
  const answer =
    data.wallet === 'wechatpay'
      ? await buyer.wechatBridgePay(stack.baseUrl, data.bridge!)
      : await buyer.alipayBridgePay(stack.baseUrl, data.bridge!);
  return { tradeNo, answer };
}

describe('POST /api/v1/payment-links', () => {
  test('when an app makes a link, then it answers the link with its page URL and the same URL as a QR image, active and unpaid', async () => {
    const body = linkBody({ max_payments: 3 });
    const made = await pay.post<Link>('/api/v1/payment-links', body);
    expect(made.status).toBe(200);
    const link = made.data!;
    expect(link).toEqual(
      expect.objectContaining({
        merchant_link_no: body.merchant_link_no,
        merchant_id: merchantId,
        amount: 2_500,
        subject: body.subject,
        max_payments: 3,
        paid_count: 0,
        status: 'active',
        expires_at: null,
        is_idempotent: false,
      }),
    );
    expect(link.link_id).toMatch(/^pl_[a-z2-7]{20}$/);
    expect(link.url).toBe(`${stack.baseUrl}/checkout/l/${link.link_id}`);
    expect(decodeQrDataUrl(link.qr_code)).toBe(link.url);
    const read = await pay.get<Link>(`/api/v1/payment-links/${link.link_id}`);
    expect(read.data).toEqual(expect.objectContaining({ link_id: link.link_id, status: 'active' }));
  });

  test('when the same merchant_link_no is sent again with the same fields, then it answers the same link, and with other fields 400 invalid_param', async () => {
    const body = linkBody();
    const first = (await pay.post<Link>('/api/v1/payment-links', body)).data!;
    const again = await pay.post<Link>('/api/v1/payment-links', body);
    expect(again.data).toEqual(expect.objectContaining({ link_id: first.link_id, is_idempotent: true }));
    const changed = await pay.post('/api/v1/payment-links', { ...body, amount: 2_600 });
    expect(changed.status).toBe(400);
    expect(changed.code).toBe('invalid_param');
    expect(changed.message).toMatch(/merchant_link_no/);
    const count = await pay.count('SELECT count(*) AS n FROM payment_links WHERE merchant_link_no = :no', {
      no: body.merchant_link_no,
    });
    expect(count).toBe(1);
  });

  test.each([
    ['amount missing', { amount: undefined }, /"amount" is required/],
    ['amount zero', { amount: 0 }, /"amount"/],
    ['subject empty', { subject: '' }, /"subject"/],
    ['notify_url not a URL', { notify_url: 'not a url' }, /"notify_url"/],
    ['max_payments zero', { max_payments: 0 }, /"max_payments"/],
    ['expires_at not a date', { expires_at: 'tomorrow' }, /"expires_at"/],
    ['expires_at in the past', { expires_at: '2020-01-01T00:00:00Z' }, /"expires_at" must be in the future/],
    ['merchant_link_no with a space', { merchant_link_no: 'A B' }, /"merchant_link_no"/],
    ['an unknown field', { colour: 'red' }, /"colour"/],
  ])('when %s, then 400 invalid_param names the field', async (_what, overrides, message) => {
    const body: Record<string, unknown> = { ...linkBody(), ...overrides };
    for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
    const answer = await pay.post('/api/v1/payment-links', body);
    expect(answer.status).toBe(400);
    expect(answer.code).toBe('invalid_param');
    expect(answer.message).toMatch(message);
  });

  test('when the merchant is not one of the app, then 422 order_not_found, merchant not found', async () => {
    const answer = await pay.post('/api/v1/payment-links', linkBody({ merchant_id: 'nobody-here' }));
    expect(answer.status).toBe(422);
    expect(answer).toEqual(
      expect.objectContaining({ code: 'order_not_found', message: 'merchant not found' }),
    );
  });
});

describe('GET, list and deactivate', () => {
  test("when an app reads an unknown link or another app's, then 404 link_not_found", async () => {
    const theirs = await stack.createApp(['payments']);
    const theirLink = await paymentsClient(stack, theirs, receiver).post<Link>(
      '/api/v1/payment-links',
      linkBody({ merchant_id: undefined }),
    );
    expect(theirLink.code).toBe('success');
    for (const id of ['pl_aaaaaaaaaaaaaaaaaaaa', theirLink.data!.link_id]) {
      const answer = await pay.get(`/api/v1/payment-links/${id}`);
      expect(answer.status).toBe(404);
      expect(answer.code).toBe('link_not_found');
      const off = await pay.post(`/api/v1/payment-links/${id}/deactivate`, {});
      expect(off.status).toBe(404);
      expect(off.code).toBe('link_not_found');
    }
  });

  test('when an app lists its links, then it sees its own, newest first, with a total, filtered by status', async () => {
    const theirs = await stack.createApp(['payments']);
    const client = paymentsClient(stack, theirs, receiver);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await client.post<Link>('/api/v1/payment-links', linkBody({ merchant_id: undefined }))).data!
          .link_id,
      );
    }
    await client.post(`/api/v1/payment-links/${ids[0]}/deactivate`, {});
    const page = await client.get<{ list: Link[]; total: number }>('/api/v1/payment-links?limit=2');
    expect(page.data!.total).toBe(3);
    expect(page.data!.list.map((l) => l.link_id)).toEqual([ids[2], ids[1]]);
    const active = await client.get<{ list: Link[]; total: number }>('/api/v1/payment-links?status=active');
    expect(active.data!.list.map((l) => l.link_id)).toEqual([ids[2], ids[1]]);
    const bad = await client.get('/api/v1/payment-links?status=paused');
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('invalid_param');
  });

  test('when a link is deactivated (twice), then it says so, and a buyer who opens it gets its page and no order', async () => {
    const link = await makeLink();
    const off = await pay.post<Link>(`/api/v1/payment-links/${link.link_id}/deactivate`, {});
    expect(off.data).toEqual(expect.objectContaining({ status: 'deactivated' }));
    expect((await pay.post<Link>(`/api/v1/payment-links/${link.link_id}/deactivate`, {})).data!.status).toBe(
      'deactivated',
    );
    for (const ua of [WECHAT_UA, ALIPAY_UA, PLAIN_UA]) {
      const visit = await new CheckoutBuyer(ua).open(link.url);
      expect(visit.status).toBe(410);
      expect(CheckoutBuyer.messageOf(visit.html)).toBe('deactivated');
    }
    expect(await ordersOf(link.link_id)).toEqual([]);
  });
});

describe('a buyer on the hosted checkout', () => {
  test("when a WeChat buyer opens a link, then WeChat's OAuth signs the buyer in, a JSAPI order of the link's amount is made, and paying at the bridge makes it paid and notified with the link", async () => {
    const link = await makeLink();
    const buyer = new CheckoutBuyer(WECHAT_UA);
    const visit = await buyer.open(`${link.url}?amount=1&subject=cheap`);
    // The hops: the link, WeChat's authorize, the sign-in's return, the order's page.
    expect(visit.hops[1]).toMatch(
      /\/wechatpay\/connect\/oauth2\/authorize\?appid=wx[0-9a-f]{16}&redirect_uri=.*&response_type=code&scope=snsapi_base&state=[A-Za-z0-9]{52}#wechat_redirect$/,
    );
    expect(visit.hops[2]).toMatch(/\/checkout\/signed-in\/wechatpay\?code=[0-9a-f]+&state=/);
    expect(visit.url).toMatch(/\/checkout\/o\/P\d+-[0-9a-f]{24}$/);
    const data = CheckoutBuyer.pageData(visit.html);
    expect(data.wallet).toBe('wechatpay');
    expect(data.bridge).toEqual(
      expect.objectContaining({ signType: 'RSA', package: expect.stringMatching(/^prepay_id=/) }),
    );

    const [order] = await ordersOf(link.link_id);
    expect(order).toEqual(expect.objectContaining({ status: 'pending', channel_code: 'wechatpay' }));
    // The link's amount and subject, never the query's.
    const queried = await pay.query(order!.trade_no);
    expect(queried).toEqual(
      expect.objectContaining({
        amount: 2_500,
        subject: link.subject,
        pay_method: 'jsapi',
        payment_link_id: link.link_id,
      }),
    );

    expect(await buyer.wechatBridgePay(stack.baseUrl, data.bridge!)).toBe('get_brand_wcpay_request:ok');
    await pay.statusIs(order!.trade_no, 'paid');
    expect(paidAtChannels(link.subject)).toEqual({ wechatpay: 1, alipay: 0 });
    const notice = await until(
      'the payment notified',
      async () => pay.notificationsFor(order!.trade_no, 'payment.succeeded')[0],
    );
    expect(JSON.parse(notice.body).data).toEqual(
      expect.objectContaining({ payment_link_id: link.link_id, amount: 2_500 }),
    );
    const read = (await pay.get<Link>(`/api/v1/payment-links/${link.link_id}`)).data!;
    expect(read).toEqual(expect.objectContaining({ paid_count: 1, status: 'completed' }));
    // Paid as often as it may be: the next buyer is told so, and nothing is made.
    const late = await new CheckoutBuyer(WECHAT_UA).open(link.url);
    expect(late.status).toBe(410);
    expect(CheckoutBuyer.messageOf(late.html)).toBe('completed');
    expect(await ordersOf(link.link_id)).toHaveLength(1);
  });

  test("when an Alipay buyer opens a link, then auth_base signs the buyer in, alipay.trade.create makes the buyer's trade, and tradePay pays it", async () => {
    const link = await makeLink({ max_payments: 2 });
    const buyer = new CheckoutBuyer(ALIPAY_UA);
    const visit = await buyer.open(link.url);
    expect(visit.hops[1]).toMatch(
      /\/alipay\/oauth2\/publicAppAuthorize\.htm\?app_id=\d+&scope=auth_base&redirect_uri=/,
    );
    expect(visit.hops[2]).toMatch(/\/checkout\/signed-in\/alipay\?.*auth_code=[0-9a-f]+/);
    const data = CheckoutBuyer.pageData(visit.html);
    expect(data.wallet).toBe('alipay');
    const [order] = await ordersOf(link.link_id);
    const trade = stack.alipay!.sandbox.trade(order!.trade_no)!;
    expect(trade).toEqual(expect.objectContaining({ method: 'alipay.trade.create', total_amount: '25.00' }));
    expect(data.bridge).toEqual({ tradeNO: trade.trade_no });

    expect(await buyer.alipayBridgePay(stack.baseUrl, data.bridge!)).toBe('9000');
    await pay.statusIs(order!.trade_no, 'paid');
    expect(paidAtChannels(link.subject)).toEqual({ wechatpay: 0, alipay: 1 });
    expect((await pay.get<Link>(`/api/v1/payment-links/${link.link_id}`)).data).toEqual(
      expect.objectContaining({ paid_count: 1, status: 'active' }),
    );
  });

  test('when a buyer with a pending order opens the link again, then it gets the same order, not a second one', async () => {
    const link = await makeLink({ max_payments: 1 });
    const buyer = new CheckoutBuyer(WECHAT_UA);
    const first = await buyer.open(link.url);
    const again = await buyer.open(link.url);
    expect(again.url).toBe(first.url);
    expect(await ordersOf(link.link_id)).toHaveLength(1);
    // Another WeChat user meanwhile is told someone is paying.
    const other = await new CheckoutBuyer(WECHAT_UA).open(link.url);
    expect(other.status).toBe(409);
    expect(CheckoutBuyer.messageOf(other.html)).toBe('taken');
  });

  test("when a buyer opens a link in another browser, then the page shows the link's QR code and H5 buttons, and Alipay's H5 pay takes the payment", async () => {
    const link = await makeLink();
    const buyer = new CheckoutBuyer(PLAIN_UA);
    const landing = await buyer.open(link.url);
    expect(landing.status).toBe(200);
    const qr = /<img class="qr" src="([^"]+)"/.exec(landing.html)![1]!;
    expect(decodeQrDataUrl(qr.replace(/&#61;/g, '='))).toBe(link.url);
    expect(landing.html).toContain('name="channel" value="alipay"');
    expect(landing.html).toContain('name="channel" value="wechatpay"');
    const h5 = await buyer.fetch(`${link.url}/h5`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'channel=alipay',
    });
    expect(h5.status).toBe(303);
    const cashier = h5.headers.get('location')!;
    expect(cashier).toContain('/alipay/');
    const [order] = await ordersOf(link.link_id);
    expect(await pay.query(order!.trade_no)).toEqual(
      expect.objectContaining({ pay_method: 'h5', channel_code: 'alipay' }),
    );
    // The buyer goes on to Alipay's wap cashier (the gateway's page method sends it there) and pays.
    const atAlipay = await buyer.open(cashier);
    expect(atAlipay.url).toMatch(/\/alipay\/cashier\//);
    const paid = await pay.buyerPays(atAlipay.url);
    expect(paid.status).toBe(200);
    await pay.statusIs(order!.trade_no, 'paid');
    expect(paidAtChannels(link.subject)).toEqual({ wechatpay: 0, alipay: 1 });
  });
});

describe('sign-in states and codes', () => {
  test('when a state is forged (never signed, or signed for another link), then the page says so and no order is made', async () => {
    const link = await makeLink();
    const victim = await makeLink();
    const buyer = new CheckoutBuyer(WECHAT_UA);
    // A real round trip to WeChat, stopped before durapay: its code and state.
    const start = await buyer.fetch(link.url);
    const authorize = start.headers.get('location')!;
    const back = new URL((await buyer.fetch(authorize)).headers.get('location')!);
    const code = back.searchParams.get('code')!;
    const state = back.searchParams.get('state')!;

    const forged = [
      'A'.repeat(52),
      `${state.slice(0, 20)}${'0'.repeat(32)}`,
      state.slice(0, 51),
      `${state}x`,
      '',
    ];
    for (const s of forged) {
      const visit = await buyer.open(`${stack.baseUrl}/checkout/signed-in/wechatpay?code=${code}&state=${s}`);
      expect(visit.status).toBe(400);
      expect(CheckoutBuyer.messageOf(visit.html)).toBe('state_invalid');
    }
    // The state of this link at another channel's return: bound to its channel.
    const elsewhere = await buyer.open(
      `${stack.baseUrl}/checkout/signed-in/alipay?auth_code=${code}&state=${state}`,
    );
    expect(CheckoutBuyer.messageOf(elsewhere.html)).toBe('state_invalid');
    expect(await ordersOf(link.link_id)).toEqual([]);
    expect(await ordersOf(victim.link_id)).toEqual([]);
    // The genuine one still works once.
    const genuine = await buyer.open(
      `${stack.baseUrl}/checkout/signed-in/wechatpay?code=${code}&state=${state}`,
    );
    expect(genuine.url).toMatch(/\/checkout\/o\//);
    expect(await ordersOf(link.link_id)).toHaveLength(1);
  });

  test('when a sign-in is replayed (its state again, or its code with a new state), then each gets its page and no second order', async () => {
    const link = await makeLink({ max_payments: 5 });
    const buyer = new CheckoutBuyer(WECHAT_UA);
    const first = await buyer.open(link.url);
    const returned = first.hops[2]!;
    expect(await ordersOf(link.link_id)).toHaveLength(1);

    // The same return URL again: the state is used.
    const replay = await new CheckoutBuyer(WECHAT_UA).open(returned);
    expect(replay.status).toBe(409);
    expect(CheckoutBuyer.messageOf(replay.html)).toBe('state_used');

    // The used code with a fresh state of the same link: WeChat refuses the code (40163).
    const thief = new CheckoutBuyer(WECHAT_UA);
    const fresh = new URL((await thief.fetch(link.url)).headers.get('location')!);
    const freshState = fresh.searchParams.get('state')!;
    const usedCode = new URL(returned).searchParams.get('code')!;
    const stolen = await thief.open(
      `${stack.baseUrl}/checkout/signed-in/wechatpay?code=${usedCode}&state=${freshState}`,
    );
    expect(stolen.status).toBe(400);
    expect(CheckoutBuyer.messageOf(stolen.html)).toBe('sign_in_failed');
    expect(await ordersOf(link.link_id)).toHaveLength(1);
  });

  test('when a link expires, then a buyer who opens it gets its page and no order', async () => {
    const link = await makeLink({ expires_at: new Date(Date.now() + 1_500).toISOString() });
    await until('the link expired', async () =>
      (await pay.get<Link>(`/api/v1/payment-links/${link.link_id}`)).data!.status === 'expired'
        ? true
        : undefined,
    );
    for (const ua of [WECHAT_UA, ALIPAY_UA, PLAIN_UA]) {
      const visit = await new CheckoutBuyer(ua).open(link.url);
      expect(visit.status).toBe(410);
      expect(CheckoutBuyer.messageOf(visit.html)).toBe('expired');
    }
    expect(await ordersOf(link.link_id)).toEqual([]);
  });
});

describe('a link opened by many buyers at once', () => {
  const ROUNDS = 4;

  test.each([
    [1, 20, 'WeChat'],
    [1, 20, 'both wallets'],
    [3, 20, 'both wallets'],
  ])(
    'when a link of max_payments %i is opened by %i buyers at once (%s) and every buyer with an order pays, then the channels take exactly max_payments payments',
    async (maxPayments, buyers, wallets) => {
      for (let round = 0; round < ROUNDS; round++) {
        const link = await makeLink({ max_payments: maxPayments });
        const crowd = Array.from(
          { length: buyers },
          (_, i) => new CheckoutBuyer(wallets === 'WeChat' || i % 2 === 0 ? WECHAT_UA : ALIPAY_UA),
        );
        // Everyone opens at once; whoever got an order page pays at once.
        const visits = await Promise.all(crowd.map((b) => b.open(link.url)));
        const payers = visits.flatMap((v, i) =>
          v.url.includes('/checkout/o/') ? [{ buyer: crowd[i]!, visit: v }] : [],
        );
        const refused = visits.filter((v) => !v.url.includes('/checkout/o/'));
        expect(payers).toHaveLength(maxPayments);
        for (const v of refused) expect(CheckoutBuyer.messageOf(v.html)).toBe('taken');
        const answers = await Promise.all(payers.map((p) => walletPays(p.buyer, link)));
        for (const a of answers) expect(['get_brand_wcpay_request:ok', '9000']).toContain(a.answer);
        for (const a of answers) await pay.statusIs(a.tradeNo, 'paid');

        // And the crowd, once more, after: nobody else is charged.
        const after = await Promise.all(crowd.map((b) => b.open(link.url)));
        for (const v of after) expect(CheckoutBuyer.messageOf(v.html)).toBe('completed');
        const paid = paidAtChannels(link.subject);
        expect(paid.wechatpay + paid.alipay).toBe(maxPayments);
        const orders = await ordersOf(link.link_id);
        expect(orders.filter((o) => o.status === 'paid')).toHaveLength(maxPayments);
        expect(orders.filter((o) => o.status === 'pending')).toHaveLength(0);
        expect((await pay.get<Link>(`/api/v1/payment-links/${link.link_id}`)).data!.paid_count).toBe(
          maxPayments,
        );
      }
    },
  );
});

describe("a merchant's standing code (码牌)", () => {
  interface Code {
    code_id: string;
    name: string;
    min_amount: number;
    max_amount: number;
    status: string;
    url: string;
    qr_code: string;
  }

  const makeCode = async (overrides: Record<string, unknown> = {}): Promise<Code> => {
    const made = await pay.post<Code>(`/api/v1/merchant/${merchantId}/codes`, {
      name: `Counter ${randomUUID().slice(0, 6)}`,
      notify_url: receiver.url,
      ...overrides,
    });
    if (made.code !== 'success') throw new Error(`code failed: ${made.code} ${made.message}`);
    return made.data!;
  };

  /** The buyer enters an amount and a note on the code's page (and, outside a wallet, picks H5 pay). */
  const enter = (buyer: CheckoutBuyer, code: Code, fields: Record<string, string>) =>
    buyer.open(code.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });

  test('when a merchant makes a code, then it answers it with its page, a QR image of it, and printable PNG and SVG of the same', async () => {
    const code = await makeCode({ min_amount: 100, max_amount: 20_000 });
    expect(code).toEqual(expect.objectContaining({ min_amount: 100, max_amount: 20_000, status: 'active' }));
    expect(code.code_id).toMatch(/^mc_[a-z2-7]{20}$/);
    expect(code.url).toBe(`${stack.baseUrl}/checkout/c/${code.code_id}`);
    expect(decodeQrDataUrl(code.qr_code)).toBe(code.url);
    const svg = await signedFetch(
      stack.baseUrl,
      app,
      'GET',
      `/api/v1/merchant/${merchantId}/codes/${code.code_id}/qr.svg`,
    );
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    const svgText = await svg.text();
    expect(decodeQrDataUrl(`data:image/svg+xml;base64,${Buffer.from(svgText).toString('base64')}`)).toBe(
      code.url,
    );
    const png = await signedFetch(
      stack.baseUrl,
      app,
      'GET',
      `/api/v1/merchant/${merchantId}/codes/${code.code_id}/qr.png`,
    );
    expect(png.headers.get('content-type')).toBe('image/png');
    const image = PNG.sync.read(Buffer.from(await png.arrayBuffer()));
    expect(image.width).toBe(1024);
    // Read at a quarter of its size (every fourth pixel): what a phone sees of a print, and fast.
    const side = image.width / 4;
    const small = new Uint8ClampedArray(side * side * 4);
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        const from = (y * 4 * image.width + x * 4) * 4;
        small.set(image.data.subarray(from, from + 4), (y * side + x) * 4);
      }
    }
    expect(jsQR(small, side, side)?.data).toBe(code.url);
    const list = await pay.get<{ list: Code[]; total: number }>(`/api/v1/merchant/${merchantId}/codes`);
    expect(list.data!.list[0]!.code_id).toBe(code.code_id);
  });

  test('when a code is asked for with bad fields, an unknown merchant or an unknown code, then each is refused naming what is wrong', async () => {
    const bad = await pay.post(`/api/v1/merchant/${merchantId}/codes`, {
      name: '',
      notify_url: receiver.url,
    });
    expect(bad.status).toBe(400);
    expect(bad.message).toMatch(/"name"/);
    const bounds = await pay.post(`/api/v1/merchant/${merchantId}/codes`, {
      name: 'Till',
      notify_url: receiver.url,
      min_amount: 500,
      max_amount: 100,
    });
    expect(bounds.status).toBe(400);
    expect(bounds.message).toMatch(/"max_amount" must be at least "min_amount"/);
    const nobody = await pay.post('/api/v1/merchant/nobody-here/codes', {
      name: 'Till',
      notify_url: receiver.url,
    });
    expect(nobody.status).toBe(404);
    expect(nobody.code).toBe('order_not_found');
    for (const path of ['', '/disable']) {
      const unknown =
        path === ''
          ? await pay.get(`/api/v1/merchant/${merchantId}/codes/mc_aaaaaaaaaaaaaaaaaaaa`)
          : await pay.post(`/api/v1/merchant/${merchantId}/codes/mc_aaaaaaaaaaaaaaaaaaaa${path}`, {});
      expect(unknown.status).toBe(404);
      expect(unknown.code).toBe('link_not_found');
    }
  });

  test("when a WeChat buyer scans a code and enters an amount, then an amount out of bounds is refused on the page, and the entered one is the order's, paid at the bridge", async () => {
    const code = await makeCode({ min_amount: 100, max_amount: 20_000 });
    const buyer = new CheckoutBuyer(WECHAT_UA);
    const page = await buyer.open(code.url);
    expect(page.status).toBe(200);
    expect(page.html).toContain('name="amount"');
    for (const amount of ['0.99', '200.01', 'ten', '1.234', '']) {
      const refused = await enter(buyer, code, { amount, note: '' });
      expect(refused.status).toBe(400);
      expect(refused.html).toMatch(/¥1\.00.*¥200\.00/);
    }
    const longNote = await enter(buyer, code, { amount: '12', note: 'x'.repeat(65) });
    expect(longNote.status).toBe(400);

    const paid = await enter(buyer, code, { amount: '12.5', note: 'Table 7' });
    expect(paid.hops[1]).toMatch(/\/wechatpay\/connect\/oauth2\/authorize\?/);
    const data = CheckoutBuyer.pageData(paid.html);
    const tradeNo = /<span id="trade-no">([A-Z0-9]+)<\/span>/.exec(paid.html)![1]!;
    expect(await pay.query(tradeNo)).toEqual(
      expect.objectContaining({
        amount: 1_250,
        subject: code.name,
        standing_code_id: code.code_id,
        buyer_note: 'Table 7',
        merchant_id: merchantId,
        pay_method: 'jsapi',
      }),
    );
    expect(await buyer.wechatBridgePay(stack.baseUrl, data.bridge!)).toBe('get_brand_wcpay_request:ok');
    await pay.statusIs(tradeNo, 'paid');
    expect(paidAtChannels(code.name)).toEqual({ wechatpay: 1, alipay: 0 });
    // A code is paid any number of times: another buyer, another order.
    const again = await enter(new CheckoutBuyer(ALIPAY_UA), code, { amount: '3', note: '' });
    expect(CheckoutBuyer.pageData(again.html).wallet).toBe('alipay');
  });

  test('when a buyer in another browser enters an amount and picks Alipay, then an H5 order of that amount goes on to Alipay, and a disabled code gets its page and no order', async () => {
    const code = await makeCode();
    const buyer = new CheckoutBuyer(PLAIN_UA);
    const page = await buyer.open(code.url);
    expect(page.html).toContain('name="channel" value="alipay"');
    const res = await buyer.fetch(code.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'amount=8.80&note=&channel=alipay',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toContain('/alipay/');
    const orders = await stack.database.db.sequelize.query<{ amount: string; pay_method: string }>(
      'SELECT amount, pay_method FROM orders WHERE standing_code_id = :id',
      { replacements: { id: code.code_id }, type: QueryTypes.SELECT },
    );
    expect(orders).toEqual([{ amount: '880', pay_method: 'h5' }]);

    const off = await pay.post<Code>(`/api/v1/merchant/${merchantId}/codes/${code.code_id}/disable`, {});
    expect(off.data!.status).toBe('disabled');
    for (const ua of [WECHAT_UA, PLAIN_UA]) {
      const visit = await new CheckoutBuyer(ua).open(code.url);
      expect(visit.status).toBe(410);
      expect(CheckoutBuyer.messageOf(visit.html)).toBe('code_disabled');
      const posted = await enter(new CheckoutBuyer(ua), code, { amount: '5', note: '' });
      expect(CheckoutBuyer.messageOf(posted.html)).toBe('code_disabled');
    }
    expect(
      await pay.count('SELECT count(*) AS n FROM orders WHERE standing_code_id = :id', { id: code.code_id }),
    ).toBe(1);
  });
});
