/**
 * The console's payment links and standing codes (SPEC §15) in a real browser (Debian's
 * Chromium), against the real API, Temporal and Postgres: an admin makes a link on the page, a
 * buyer pays through it, the page shows it paid; another is deactivated; a merchant's code is
 * made, printed as PNG and disabled. Each change is in the audit log; a viewer gets no form.
 * The pictures are docs/console.md's (test-artifacts/console/), checked with axe-core.
 *
 * @runs-alone: beside two other files on two cores, the printed code's PNG download (in this
 * process, with the API, the worker and the browser's driver) twice went unanswered for 20 s,
 * while alone it takes under a second (test/support/tiered-runner.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import jsQR from 'jsqr';
import { createRequire } from 'node:module';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { ROOT_DIR } from '../../src/platform/paths';
import { launchBrowser, readQrOnScreen, type TestBrowser } from '../support/browser';
import { CheckoutBuyer, PLAIN_UA } from '../support/checkout-buyer';
import { operatorsOf } from '../support/console';
import { consoleShotAndCheck, signInOnConsolePage } from '../support/console-page';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

/** pngjs (qrcode's own PNG codec) has no types of its own. */
const { PNG } = createRequire(__filename)('pngjs') as {
  PNG: { sync: { read(data: Buffer): { width: number; height: number; data: Buffer } } };
};

jest.setTimeout(240_000);

const SHOTS_DIR = path.join(ROOT_DIR, 'test-artifacts', 'console');
const VIEWPORT = { width: 1280, height: 800 };

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let browser: TestBrowser;
let merchantId: string;
const admin = { username: '', password: `admin ${randomUUID()}` };
const viewer = { username: '', password: `viewer ${randomUUID()}` };

const auditOf = (action: string, targetId: string) =>
  stack.database.db.sequelize.query<{ outcome: string }>(
    'SELECT outcome FROM console_audit_log WHERE action = :action AND target_id = :targetId',
    { type: QueryTypes.SELECT, replacements: { action, targetId } },
  );

beforeAll(async () => {
  browser = await launchBrowser();
  stack = await startTestStack({ timeScale: 0.01 });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = await pay.merchant();
  const operators = operatorsOf(stack);
  const cli = { operatorId: null, username: 'cli:test' };
  admin.username = uniqueName('links-admin').slice(0, 40);
  viewer.username = uniqueName('links-viewer').slice(0, 40);
  await operators.create(cli, { username: admin.username, role: 'admin', password: admin.password });
  await operators.create(cli, { username: viewer.username, role: 'viewer', password: viewer.password });
  fs.mkdirSync(SHOTS_DIR, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await stack?.stop();
});

test('when an admin makes a link on the page and a buyer pays through it, then the list shows it paid; a second link deactivated from the list is refused to buyers; both changes are audited', async () => {
  const subject = `Yoga class ${randomUUID().slice(0, 6)}`;
  let linkId = '';
  await browser.run(
    async (page) => {
      await signInOnConsolePage(page, stack.baseUrl, admin);
      await page.getByTestId('nav-payment-links').click();
      const form = page.locator('form[id="create-link"]');
      await form.getByLabel('App id').fill(app.app_id);
      await form.getByLabel('Merchant id').fill(merchantId);
      await form.getByLabel('Amount (yuan)').fill('88.00');
      await form.getByLabel('Subject').fill(subject);
      await form.getByLabel('Notify URL').fill(receiver.url);
      await page.getByTestId('create-link-submit').click();
      const made = page.getByTestId('made-link');
      await made.waitFor();
      // The link's QR code on the page is its buyer's page.
      const url = (await readQrOnScreen(made.getByRole('img', { name: /^QR code of pl_/ }))) ?? '';
      expect(url).toMatch(new RegExp(`^${stack.baseUrl}/checkout/l/pl_[a-z2-7]{20}$`));
      linkId = url.split('/').pop()!;
      expect(linkId).toMatch(/^pl_[a-z2-7]{20}$/);

      // A buyer in a plain browser pays it at the sandbox's H5 page.
      const buyer = new CheckoutBuyer(PLAIN_UA);
      const h5 = await buyer.fetch(`${stack.baseUrl}/checkout/l/${linkId}/h5`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'channel=sandbox',
      });
      expect(h5.status).toBe(303);
      expect((await pay.buyerPays(h5.headers.get('location')!)).status).toBe(200);
      const [order] = await stack.database.db.sequelize.query<{ trade_no: string }>(
        'SELECT trade_no FROM orders WHERE payment_link_id = :linkId',
        { type: QueryTypes.SELECT, replacements: { linkId } },
      );
      await pay.statusIs(order!.trade_no, 'paid');

      await page.reload();
      const row = page.locator('tr', { hasText: linkId });
      await row.getByText('1 / 1').waitFor();
      await row.getByText('completed').waitFor();
      await consoleShotAndCheck(page, SHOTS_DIR, 'payment-links');

      // A second link, deactivated from the list.
      await form.getByLabel('App id').fill(app.app_id);
      await form.getByLabel('Amount (yuan)').fill('12.00');
      await form.getByLabel('Subject').fill(`${subject} (spare)`);
      await form.getByLabel('Notify URL').fill(receiver.url);
      await page.getByTestId('create-link-submit').click();
      const spare = page.locator('tr', { hasText: `${subject} (spare)` });
      await spare.waitFor();
      const spareId = (await spare
        .locator('[data-testid^="deactivate-pl_"]')
        .getAttribute('data-testid'))!.slice('deactivate-'.length);
      await page.getByTestId(`deactivate-${spareId}`).click();
      await page.getByTestId(`deactivate-${spareId}-confirm`).click();
      await spare.getByText('deactivated').waitFor();
      const refused = await new CheckoutBuyer(PLAIN_UA).open(`${stack.baseUrl}/checkout/l/${spareId}`);
      expect(refused.status).toBe(410);
      expect(CheckoutBuyer.messageOf(refused.html)).toBe('deactivated');
      expect(await auditOf('payment_link.deactivate', spareId)).toEqual([{ outcome: 'succeeded' }]);
    },
    { viewport: VIEWPORT },
  );
  const made = await stack.database.db.sequelize.query<{ merchant_link_no: string }>(
    'SELECT merchant_link_no FROM payment_links WHERE link_id = :linkId',
    { type: QueryTypes.SELECT, replacements: { linkId } },
  );
  expect(made[0]!.merchant_link_no).toMatch(/^console-/);
  expect(await auditOf('payment_link.create', made[0]!.merchant_link_no)).toEqual([{ outcome: 'succeeded' }]);
});

test("when an admin makes a merchant's standing code on its page, then it is listed with its QR, prints as a PNG of its URL, and once disabled a buyer who scans it is told so", async () => {
  const name = `Noodle stall ${randomUUID().slice(0, 6)}`;
  await browser.run(
    async (page) => {
      await signInOnConsolePage(page, stack.baseUrl, admin);
      await page.goto(`${stack.baseUrl}/console/merchants/${merchantId}?app_id=${app.app_id}`);
      const form = page.locator('form[id="create-code"]');
      await form.getByLabel('Name').fill(name);
      await form.getByLabel('Notify URL').fill(receiver.url);
      await page.getByTestId('create-code-submit').click();
      const row = page.locator('tr[data-testid^="code-row-"]', { hasText: name });
      await row.waitFor();
      const codeId = (await row.getAttribute('data-testid'))!.slice('code-row-'.length);
      await consoleShotAndCheck(page, SHOTS_DIR, 'merchant-codes');

      // The PNG the Print link downloads is the code's page, scannable.
      const png = await page.request.get(
        `${stack.baseUrl}/console/api/merchants/${merchantId}/codes/${codeId}/qr.png?app_id=${app.app_id}`,
      );
      expect(png.headers()['content-type']).toBe('image/png');
      const image = PNG.sync.read(await png.body());
      const read = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
      expect(read?.data).toBe(`${stack.baseUrl}/checkout/c/${codeId}`);

      await page.getByTestId(`disable-${codeId}`).click();
      await page.getByTestId(`disable-${codeId}-confirm`).click();
      await row.getByText('disabled').waitFor();
      const scanned = await new CheckoutBuyer(PLAIN_UA).open(`${stack.baseUrl}/checkout/c/${codeId}`);
      expect(scanned.status).toBe(410);
      expect(CheckoutBuyer.messageOf(scanned.html)).toBe('code_disabled');
      await until('the disable audited', async () =>
        (await auditOf('merchant_code.disable', codeId)).length > 0 ? true : undefined,
      );
    },
    { viewport: VIEWPORT },
  );
});

test('when a checkout order no buyer took to a channel is among the orders, then the home page and its overview show it under channel none, and its timeline says so', async () => {
  const made = await pay.post<{ trade_no: string }>('/api/v1/pay/unified-order', {
    merchant_order_no: `CO-${randomUUID()}`,
    pay_method: 'checkout',
    amount: 990,
    subject: 'Waiting for its buyer to pick',
    notify_url: receiver.url,
  });
  expect(made.code).toBe('success');
  await browser.run(
    async (page) => {
      await signInOnConsolePage(page, stack.baseUrl, viewer);
      const overview = await page.evaluate(async () => {
        const res = await fetch('/console/api/overview');
        return { status: res.status, body: (await res.json()) as { data: { by_channel: unknown[] } } };
      });
      expect(overview.status).toBe(200);
      expect(overview.body.data.by_channel).toContainEqual(
        expect.objectContaining({ channel_code: 'none', pay_method: 'checkout' }),
      );
      const detail = await page.evaluate(async (tradeNo) => {
        const res = await fetch(`/console/api/orders/${tradeNo}`);
        return (await res.json()) as { data: { timeline: { summary: string }[] } };
      }, made.data!.trade_no);
      expect(detail.data.timeline[0]!.summary).toBe(
        'created: 990 fen by checkout at no channel yet (the buyer picks one)',
      );
    },
    { viewport: VIEWPORT },
  );
});

test('when a viewer opens the links page and a merchant, then no form or action shows, and the API refuses a link made anyway with 403', async () => {
  await browser.run(
    async (page) => {
      await signInOnConsolePage(page, stack.baseUrl, viewer);
      await page.goto(`${stack.baseUrl}/console/payment-links`);
      await page.getByRole('heading', { name: 'Payment links' }).waitFor();
      expect(await page.getByTestId('create-link-submit').count()).toBe(0);
      await page.goto(`${stack.baseUrl}/console/merchants/${merchantId}?app_id=${app.app_id}`);
      await page.getByRole('heading', { name: 'Standing codes' }).waitFor();
      expect(await page.getByTestId('create-code-submit').count()).toBe(0);
      const csrf = await page.evaluate(async () => {
        const res = await fetch('/console/api/session');
        return ((await res.json()) as { data: { csrf_token: string } }).data.csrf_token;
      });
      const answer = await page.evaluate(
        async ([token, appId]) => {
          const res = await fetch('/console/api/payment-links', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': token! },
            body: JSON.stringify({
              app_id: appId,
              amount: 100,
              subject: 'x',
              notify_url: 'https://a.example/',
            }),
          });
          return res.status;
        },
        [csrf, app.app_id],
      );
      expect(answer).toBe(403);
    },
    { viewport: VIEWPORT },
  );
});
