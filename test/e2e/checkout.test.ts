/**
 * The hosted checkout (SPEC §15) in a real browser (Debian's Chromium): a payment link, a standing
 * code and an order's checkout (`pay_method: checkout`) opened with WeChat's user agent, with
 * Alipay's and with a plain browser's. The wallets' in-app browsers give
 * a page their JS bridge; here the offline upstreams' emulation of it (/wechatpay/js-bridge.js,
 * /alipay/js-bridge.js) is put into the page before its own script runs, as the wallet would, and
 * the page itself loads nothing but its own script. Each payment is counted at the upstream's
 * ledger. The screenshots are docs/images/checkout's (test-artifacts/checkout/).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { ROOT_DIR } from '../../src/platform/paths';
import { launchBrowser, readQrOnScreen, type TestBrowser } from '../support/browser';
import { ALIPAY_UA, PLAIN_UA, WECHAT_UA } from '../support/checkout-buyer';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';

jest.setTimeout(180_000);

/** Where the pages' screenshots go; docs/payment-links.md shows copies of them (docs/images/checkout/). */
const SHOTS_DIR = path.join(ROOT_DIR, 'test-artifacts', 'checkout');
const PHONE = { width: 390, height: 760 };

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let browser: TestBrowser;
let merchantId: string;

beforeAll(async () => {
  browser = await launchBrowser();
  stack = await startTestStack({ timeScale: 1, wechatpay: {}, alipay: {} });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = await pay.merchant();
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: '1900000109' });
  await pay.attach(merchantId, 'alipay', { smid: '2088000000000778' });
  fs.mkdirSync(SHOTS_DIR, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await stack?.stop();
});

async function makeLink(overrides: Record<string, unknown> = {}) {
  const made = await pay.post<{ link_id: string; url: string; subject: string }>('/api/v1/payment-links', {
    merchant_link_no: `L-${randomUUID()}`,
    merchant_id: merchantId,
    amount: 4_800,
    subject: `Pottery class ${randomUUID().slice(0, 6)}`,
    notify_url: receiver.url,
    ...overrides,
  });
  if (made.code !== 'success') throw new Error(`link failed: ${made.code} ${made.message}`);
  return made.data!;
}

/** The wallet's bridge, as its in-app browser provides it, before any script of the page runs. */
async function withBridge(page: Page, wallet: 'wechatpay' | 'alipay'): Promise<void> {
  const script = await (await fetch(`${stack.baseUrl}/${wallet}/js-bridge.js`)).text();
  await page.addInitScript({ content: script });
}

const paidAt = (subject: string) => ({
  wechatpay: stack
    .wechatpay!.sandbox.transactions()
    .filter((t) => t.description === subject && t.trade_state === 'SUCCESS').length,
  alipay: stack.alipay!.sandbox.trades().filter((t) => t.subject === subject && t.status === 'TRADE_SUCCESS')
    .length,
});

/** Only the page's own origin was asked for anything: no third-party script, style or image. */
function sameOrigin(page: Page): string[] {
  const foreign: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(stack.baseUrl) && !r.url().startsWith('data:')) foreign.push(r.url());
  });
  return foreign;
}

describe('a payment link in a browser', () => {
  test("when a buyer opens it in WeChat, then WeChat's sign-in, the JSAPI pay sheet and durapay's status take the buyer to 'Payment succeeded', and WeChat Pay holds the one payment", async () => {
    const link = await makeLink();
    await browser.run(
      async (page) => {
        const foreign = sameOrigin(page);
        await withBridge(page, 'wechatpay');
        await page.goto(link.url);
        await page.locator('#outcome', { hasText: '付款成功' }).waitFor();
        expect(page.url()).toMatch(/\/checkout\/o\//);
        expect(await page.locator('.amount').innerText()).toBe('¥48.00');
        expect(await page.locator('h1').innerText()).toBe(link.subject);
        expect(await page.locator('#status').textContent()).toBe('paid');
        await page.screenshot({ path: path.join(SHOTS_DIR, 'wechat-paid.png') });
        expect(foreign).toEqual([]);
      },
      { userAgent: WECHAT_UA, viewport: PHONE, locale: 'zh-CN' },
    );
    expect(paidAt(link.subject)).toEqual({ wechatpay: 1, alipay: 0 });
  });

  test('when a buyer opens it in Alipay and cancels the pay sheet once, then the page says so, and paying again takes the one payment', async () => {
    const link = await makeLink();
    await browser.run(
      async (page) => {
        await withBridge(page, 'alipay');
        await page.addInitScript({ content: "window.__alipaySandboxBuyer = 'cancel';" });
        await page.goto(`${link.url}?lang=en`);
        await page.locator('#outcome', { hasText: 'Payment cancelled' }).waitFor();
        expect(paidAt(link.subject).alipay).toBe(0);
        await page.evaluate("window.__alipaySandboxBuyer = 'pay'");
        await page.getByRole('button', { name: 'Pay now' }).click();
        await page.locator('#outcome', { hasText: 'Payment succeeded' }).waitFor();
        await page.screenshot({ path: path.join(SHOTS_DIR, 'alipay-paid.png') });
      },
      { userAgent: ALIPAY_UA, viewport: PHONE, locale: 'en-US' },
    );
    expect(paidAt(link.subject)).toEqual({ wechatpay: 0, alipay: 1 });
  });

  test("when a buyer opens it in another browser, then the page shows the link's QR code and H5 pay, and WeChat Pay's H5 checkout takes the payment", async () => {
    const link = await makeLink();
    await browser.run(
      async (page) => {
        const foreign = sameOrigin(page);
        await page.goto(link.url);
        const qr = page.getByRole('img', { name: /QR code/ });
        expect(await readQrOnScreen(qr)).toBe(link.url);
        await page.screenshot({ path: path.join(SHOTS_DIR, 'landing.png') });
        expect(foreign).toEqual([]);
        await page.getByRole('button', { name: 'WeChat Pay' }).click();
        // WeChat Pay's own H5 page (the offline one), where the buyer pays.
        await page.getByRole('button', { name: 'Pay', exact: true }).click();
        await page
          .getByText(/SUCCESS/)
          .first()
          .waitFor();
      },
      { userAgent: PLAIN_UA, viewport: PHONE, locale: 'en-US' },
    );
    const orders = await stack.database.db.sequelize.query<{ trade_no: string }>(
      'SELECT trade_no FROM orders WHERE payment_link_id = :id',
      { replacements: { id: link.link_id }, type: 'SELECT' as never },
    );
    expect(orders).toHaveLength(1);
    await pay.statusIs(orders[0]!.trade_no, 'paid');
    expect(paidAt(link.subject)).toEqual({ wechatpay: 1, alipay: 0 });
  });

  test('when a buyer opens a deactivated link or a forged sign-in, then each gets a clear page and no order', async () => {
    const link = await makeLink();
    await pay.post(`/api/v1/payment-links/${link.link_id}/deactivate`, {});
    await browser.run(
      async (page) => {
        const answer = await page.goto(link.url);
        expect(answer!.status()).toBe(410);
        await page.getByRole('heading', { name: 'This link is no longer active' }).waitFor();
        await page.screenshot({ path: path.join(SHOTS_DIR, 'deactivated.png') });
        const forged = await page.goto(
          `${stack.baseUrl}/checkout/signed-in/wechatpay?code=abc&state=${'A'.repeat(52)}`,
        );
        expect(forged!.status()).toBe(400);
        await page.getByRole('heading', { name: 'This sign-in cannot be verified' }).waitFor();
      },
      { userAgent: WECHAT_UA, viewport: PHONE, locale: 'en-US' },
    );
    expect(
      await pay.count('SELECT count(*) AS n FROM orders WHERE payment_link_id = :id', { id: link.link_id }),
    ).toBe(0);
  });
});

describe("a merchant's standing code in a browser", () => {
  test('when a WeChat buyer scans it, enters an amount out of bounds and then one within, then the page says so, and the amount entered is paid', async () => {
    const made = await pay.post<{ code_id: string; url: string; name: string }>(
      `/api/v1/merchant/${merchantId}/codes`,
      { name: `Tea stall ${randomUUID().slice(0, 6)}`, notify_url: receiver.url, max_amount: 10_000 },
    );
    const code = made.data!;
    await browser.run(
      async (page) => {
        await withBridge(page, 'wechatpay');
        await page.goto(`${code.url}?lang=en`);
        await page.getByLabel('Amount (yuan)').fill('150');
        await page.getByLabel('Note (optional)').fill('Two oolong');
        await page.getByRole('button', { name: 'Pay' }).click();
        await page.locator('#outcome', { hasText: 'Enter an amount from ¥0.01 to ¥100.00' }).waitFor();
        await page.getByLabel('Amount (yuan)').fill('36.50');
        await page.screenshot({ path: path.join(SHOTS_DIR, 'code-amount.png') });
        await page.getByRole('button', { name: 'Pay' }).click();
        await page.locator('#outcome', { hasText: 'Payment succeeded' }).waitFor();
        expect(await page.locator('.amount').innerText()).toBe('¥36.50');
      },
      { userAgent: WECHAT_UA, viewport: PHONE, locale: 'en-US' },
    );
    const paid = stack
      .wechatpay!.sandbox.transactions()
      .filter((t) => t.description === code.name && t.trade_state === 'SUCCESS');
    expect(paid.map((t) => t.total)).toEqual([3_650]);
  });
});

describe("a merchant's standing code in Alipay and in another browser", () => {
  async function makeCode() {
    const made = await pay.post<{ code_id: string; url: string; name: string }>(
      `/api/v1/merchant/${merchantId}/codes`,
      { name: `Fruit stand ${randomUUID().slice(0, 6)}`, notify_url: receiver.url },
    );
    if (made.code !== 'success') throw new Error(`code failed: ${made.code} ${made.message}`);
    return made.data!;
  }
  const paidAtCode = (name: string) => ({
    wechatpay: stack
      .wechatpay!.sandbox.transactions()
      .filter((t) => t.description === name && t.trade_state === 'SUCCESS')
      .map((t) => t.total),
    alipay: stack
      .alipay!.sandbox.trades()
      .filter((t) => t.subject === name && t.status === 'TRADE_SUCCESS')
      .map((t) => Math.round(Number(t.total_amount) * 100)),
  });

  test('when an Alipay buyer scans it and enters an amount and a note, then auth_base and tradePay take that amount, and the order keeps the note', async () => {
    const code = await makeCode();
    await browser.run(
      async (page) => {
        await withBridge(page, 'alipay');
        await page.goto(`${code.url}?lang=en`);
        await page.getByLabel('Amount (yuan)').fill('12.80');
        await page.getByLabel('Note (optional)').fill('Three mangoes');
        await page.getByRole('button', { name: 'Pay' }).click();
        await page.locator('#outcome', { hasText: 'Payment succeeded' }).waitFor();
        expect(await page.locator('.amount').innerText()).toBe('¥12.80');
      },
      { userAgent: ALIPAY_UA, viewport: PHONE, locale: 'en-US' },
    );
    expect(paidAtCode(code.name)).toEqual({ wechatpay: [], alipay: [1_280] });
    const [order] = await stack.database.db.sequelize.query<{ buyer_note: string; channel_code: string }>(
      'SELECT buyer_note, channel_code FROM orders WHERE standing_code_id = :id',
      { replacements: { id: code.code_id }, type: 'SELECT' as never },
    );
    expect(order).toEqual({ buyer_note: 'Three mangoes', channel_code: 'alipay' });
  });

  test("when a buyer in another browser enters an amount and picks WeChat Pay, then WeChat Pay's H5 page takes that amount", async () => {
    const code = await makeCode();
    await browser.run(
      async (page) => {
        const foreign = sameOrigin(page);
        await page.goto(`${code.url}?lang=en`);
        await page.getByLabel('Amount (yuan)').fill('7.5');
        await page.getByRole('button', { name: 'WeChat Pay' }).click();
        // WeChat Pay's own H5 page (the offline one), where the buyer pays.
        await page.getByRole('button', { name: 'Pay', exact: true }).click();
        await page
          .getByText(/SUCCESS/)
          .first()
          .waitFor();
        expect(foreign).toEqual([]);
      },
      { userAgent: PLAIN_UA, viewport: PHONE, locale: 'en-US' },
    );
    expect(paidAtCode(code.name)).toEqual({ wechatpay: [750], alipay: [] });
  });
});

describe("an order's checkout (pay_method: checkout) in a browser", () => {
  async function checkoutOrder() {
    const subject = `Bike repair ${randomUUID().slice(0, 6)}`;
    const made = await pay.post<{ trade_no: string; pay_credential: { checkout_url: string } }>(
      '/api/v1/pay/unified-order',
      {
        merchant_order_no: `CO-${randomUUID()}`,
        pay_method: 'checkout',
        merchant_id: merchantId,
        amount: 6_600,
        subject,
        notify_url: receiver.url,
      },
    );
    if (made.code !== 'success') throw new Error(`order failed: ${made.code} ${made.message}`);
    return { ...made.data!, subject };
  }

  test.each([
    ['WeChat', 'wechatpay', WECHAT_UA, 'order-wechat-paid.png'],
    ['Alipay', 'alipay', ALIPAY_UA, 'order-alipay-paid.png'],
  ] as const)(
    "when the buyer opens the order's page in %s, then the wallet's sign-in and pay sheet take the buyer to 'Payment succeeded', and only that channel holds the payment",
    async (_wallet, channel, userAgent, shot) => {
      const order = await checkoutOrder();
      await browser.run(
        async (page) => {
          const foreign = sameOrigin(page);
          await withBridge(page, channel);
          await page.goto(`${order.pay_credential.checkout_url}?lang=en`);
          await page.locator('#outcome', { hasText: 'Payment succeeded' }).waitFor();
          expect(await page.locator('.amount').innerText()).toBe('¥66.00');
          expect(await page.locator('#trade-no').innerText()).toBe(order.trade_no);
          await page.screenshot({ path: path.join(SHOTS_DIR, shot) });
          expect(foreign).toEqual([]);
        },
        { userAgent, viewport: PHONE, locale: 'en-US' },
      );
      await pay.statusIs(order.trade_no, 'paid');
      expect(paidAt(order.subject)).toEqual(
        channel === 'wechatpay' ? { wechatpay: 1, alipay: 0 } : { wechatpay: 0, alipay: 1 },
      );
    },
  );

  test("when the buyer opens the order's page in another browser, then it shows the page's QR code and H5 pay, and Alipay's H5 cashier takes the payment", async () => {
    const order = await checkoutOrder();
    await browser.run(
      async (page) => {
        const foreign = sameOrigin(page);
        await page.goto(order.pay_credential.checkout_url);
        expect(await readQrOnScreen(page.getByRole('img', { name: /QR code/ }))).toBe(
          order.pay_credential.checkout_url,
        );
        await page.screenshot({ path: path.join(SHOTS_DIR, 'order-landing.png') });
        expect(foreign).toEqual([]);
        await page.getByRole('button', { name: 'Alipay' }).click();
        // Alipay's own wap cashier (the offline one), where the buyer pays.
        await page.getByRole('button', { name: 'Pay', exact: true }).click();
        await pay.statusIs(order.trade_no, 'paid');
      },
      { userAgent: PLAIN_UA, viewport: PHONE, locale: 'en-US' },
    );
    await pay.statusIs(order.trade_no, 'paid');
    expect(paidAt(order.subject)).toEqual({ wechatpay: 0, alipay: 1 });
    expect(await pay.query(order.trade_no)).toEqual(
      expect.objectContaining({ pay_method: 'checkout', channel_code: 'alipay', channel_pay_method: 'h5' }),
    );
  });
});
