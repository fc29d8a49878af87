/**
 * The pages people open, in a real browser (Debian's Chromium through playwright-core): the
 * buyer's sandbox checkout that a pay_url opens, and the Temporal UI where an operator finds an
 * order's workflow by its trade number. A failed scenario leaves its screenshot and HTML in
 * test-artifacts/browser/ (test/support/browser.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { imageState, launchBrowser, readQrOnScreen, type TestBrowser } from '../support/browser';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { globalState } from '../support/state';
import { until } from '../support/wait';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let browser: TestBrowser;

beforeAll(async () => {
  // First: without Chromium every test here fails saying how to install it, before anything starts.
  browser = await launchBrowser();
  // Real time: a buyer in a browser takes seconds, and at the tests' usual 1/10 000 an order's
  // 30 minutes to expiry are 180 ms.
  stack = await startTestStack({ timeScale: 1 });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await stack?.stop();
});

/** The sandbox's own record of the order: what the buyer's buttons changed at the channel. */
const channelStatus = async (tradeNo: string) =>
  (
    await stack.database.db.sequelize.query<{ status: string }>(
      'SELECT status FROM sandbox_orders WHERE trade_no = :tradeNo',
      { replacements: { tradeNo }, type: QueryTypes.SELECT },
    )
  )[0]?.status;

describe('the sandbox checkout page', () => {
  test("when a buyer opens a qr_code order's pay_url and presses Pay, then the page shows the amount, the subject and a QR code of the pay_url, and the order becomes paid", async () => {
    const subject = `Flat white ${randomUUID().slice(0, 8)}`;
    const created = await pay.create({ pay_method: 'qr_code', amount: 1234, subject });
    const { pay_url: payUrl, qr_code: qrCode } = created.pay_credential;

    await browser.run(async (page) => {
      await page.goto(payUrl);
      await page.getByText(subject, { exact: true }).waitFor();
      expect(await page.locator('.amount').innerText()).toMatch(/^¥12\.34\b/);

      const qr = page.getByRole('img', { name: /QR code/ });
      // Rendered, not a broken image: a browser that cannot decode an image gives it no natural size.
      const image = await imageState(qr);
      expect(image.complete).toBe(true);
      expect(image.naturalWidth).toBeGreaterThan(0);
      // What a phone pointed at the screen reads: the credential's qr_code, which opens this page.
      const scanned = await readQrOnScreen(qr);
      expect(scanned).toBe(qrCode);
      expect(scanned).toBe(payUrl);

      await page.getByRole('button', { name: 'Pay', exact: true }).click();
      await page.locator('#outcome', { hasText: 'Payment succeeded' }).waitFor();
      expect(await page.locator('#status').innerText()).toBe('paid');

      // durapay hears of it by the sandbox's callback (or its polling); the API answers paid.
      await pay.statusIs(created.trade_no, 'paid');
      expect(await pay.query(created.trade_no)).toEqual(
        expect.objectContaining({ status: 'paid', amount: 1234, subject }),
      );
    });
  });

  test('when a buyer presses Fail, then the page says the order is still pending, Pay stays available, and the order stays pending at the channel and in durapay', async () => {
    const created = await pay.create({ pay_method: 'qr_code' });

    await browser.run(async (page) => {
      await page.goto(created.pay_credential.pay_url);
      await page.getByRole('button', { name: 'Fail', exact: true }).click();
      // The sandbox has answered the buyer's Fail: whatever it did to the order is done.
      await page.locator('#outcome', { hasText: 'Payment failed; the order is still pending.' }).waitFor();
      expect(await page.locator('#status').innerText()).toBe('pending');
      expect(await page.getByRole('button', { name: 'Pay', exact: true }).isEnabled()).toBe(true);

      expect(await channelStatus(created.trade_no)).toBe('pending');
      expect((await pay.query(created.trade_no)).status).toBe('pending');
    });
  });
});

describe('the Temporal UI', () => {
  test("when an operator opens the workflows list with a TradeNo query, then it lists that order's workflow and no other order's", async () => {
    const merchantOrderNo = `M-${randomUUID()}`;
    const created = await pay.create({ merchant_order_no: merchantOrderNo });
    const otherOrderNo = `M-${randomUUID()}`;
    const other = await pay.create({ merchant_order_no: otherOrderNo });
    const workflowId = orderWorkflowId(app.app_id, merchantOrderNo);
    const query = `TradeNo="${created.trade_no}"`;
    // The UI reads the list once: open it only when Temporal's visibility store has both orders.
    for (const tradeNo of [created.trade_no, other.trade_no]) {
      await until(`order ${tradeNo} visible to a TradeNo query`, async () =>
        (await stack.client.workflow.count(`TradeNo="${tradeNo}"`)).count === 1 ? true : undefined,
      );
    }

    await browser.run(async (page) => {
      await page.goto(
        `${globalState().temporalUiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`,
      );
      // The UI's first load fetches and starts a large app; its own list request follows.
      await page.getByRole('link', { name: workflowId, exact: true }).waitFor({ timeout: 60_000 });
      expect(await page.getByRole('link', { name: orderWorkflowId(app.app_id, otherOrderNo) }).count()).toBe(
        0,
      );
    });
  });
});

describe('the API reference page', () => {
  test('when /docs is opened, then it renders every operation and webhook of the OpenAPI document and loads nothing from another origin', async () => {
    const document = (await (await fetch(`${stack.baseUrl}/openapi.json`)).json()) as {
      info: { title: string };
      paths: Record<string, Record<string, { operationId: string }>>;
      webhooks: Record<string, Record<string, { operationId: string }>>;
    };
    const operationIds = [...Object.values(document.paths), ...Object.values(document.webhooks)].flatMap(
      (item) => Object.values(item).map((op) => op.operationId),
    );
    expect(operationIds.length).toBeGreaterThan(20);

    await browser.run(async (page) => {
      // Every request to another origin, and how it ended.
      const elsewhere: string[] = [];
      const outside = (url: string) => new URL(url).origin !== stack.baseUrl;
      page.on('response', (res) => {
        if (outside(res.url())) elsewhere.push(`${res.url()}: answered ${res.status()}`);
      });
      page.on('requestfailed', (req) => {
        if (outside(req.url())) elsewhere.push(`${req.url()}: ${req.failure()?.errorText}`);
      });
      await page.goto(`${stack.baseUrl}/docs`);
      await page.locator('[data-section-id="operation/createOrder"]').waitFor();
      const rendered = await page
        .locator('[data-section-id^="operation/"]')
        .evaluateAll((sections) => sections.map((s) => s.getAttribute('data-section-id')));
      expect([...rendered].sort()).toEqual(operationIds.map((id) => `operation/${id}`).sort());
      expect(await page.locator('h1').first().innerText()).toContain(document.info.title);
      // The error codes an operation answers are shown with it.
      await page
        .locator('[data-section-id="operation/refund"]')
        .getByText('refund_amount_exceed')
        .first()
        .waitFor();
      // Redoc's assets come from durapay itself; the page's CSP blocks the one CDN image Redoc
      // links to before it is asked for (this machine's closed network would hide a request).
      expect(elsewhere.filter((r) => !/: (csp|net::ERR_BLOCKED_BY_CSP)$/.test(r))).toEqual([]);
    });
  });
});

describe('the Temporal UI with the codec server', () => {
  /** The UI's own Data Encoder settings, as an operator sets them once in their browser. */
  const useCodecServer = (page: Page) =>
    page.addInitScript((endpoint: string) => {
      const storage = (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } })
        .localStorage;
      storage.setItem('endpoint', JSON.stringify(endpoint));
      storage.setItem('includeCredentials', 'true');
      storage.setItem('overrideRemoteCodecConfiguration', 'true');
    }, `${stack.baseUrl}/codec`);

  test("when an operator opens an order's workflow, then its input is ciphertext until they sign in at the codec server with the operator token, and readable after", async () => {
    const merchantOrderNo = `M-${randomUUID()}`;
    const created = await pay.create({ merchant_order_no: merchantOrderNo });
    const workflowId = orderWorkflowId(app.app_id, merchantOrderNo);
    const { runId } = await stack.client.workflow.getHandle(workflowId).describe();
    const workflowPage = `${globalState().temporalUiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}/${runId}/history`;
    // What the order's input holds that is not on the page otherwise.
    const decodedOnly = `"tradeNo": "${created.trade_no}"`;

    await browser.run(
      async (page) => {
        await useCodecServer(page);
        await page.goto(workflowPage);
        // The input as stored: the sealed payload's metadata and ciphertext, and the UI saying its
        // codec server refused it.
        await page.getByText('"encryption-key-id"').first().waitFor({ timeout: 60_000 });
        await page.getByText('Codec Server could not connect').filter({ visible: true }).first().waitFor();
        expect(await page.getByText(decodedOnly).count()).toBe(0);
      },
      { name: 'temporal-ui-codec-without-token' },
    );

    await browser.run(
      async (page) => {
        await useCodecServer(page);
        await page.goto(`${stack.baseUrl}/codec/login`);
        await page.getByLabel('Codec token').fill(stack.codecToken);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Signed in' }).waitFor();
        await page.goto(workflowPage);
        await page.getByText(decodedOnly).first().waitFor({ timeout: 60_000 });
        expect(await page.getByText('"encryption-key-id"').count()).toBe(0);
      },
      { name: 'temporal-ui-codec-with-token' },
    );
  });
});
