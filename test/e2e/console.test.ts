/**
 * The operator console in a real browser (Debian's Chromium through playwright-core), against
 * the real API, Temporal and Postgres: an admin signs in, finds an order paid after it closed in
 * the review queue and refunds it, resends a failed notification, resolves a reconciliation
 * mismatch, and finds each action in the audit log; a viewer sees no action buttons and the API
 * refuses its changes; a change without the CSRF token, or from another origin, is refused.
 * Every main page is saved at 1280×800 in test-artifacts/console/ (the docs show them) and
 * checked with axe-core: no serious or critical violation.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { billDateOf } from '../../src/modules/reconciliation/rules';
import { ROOT_DIR } from '../../src/platform/paths';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { operatorsOf, signInAs } from '../support/console';
import { consoleShotAndCheck, signInOnConsolePage } from '../support/console-page';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(240_000);

/** Where the pages' screenshots go; docs/console.md shows copies of them (docs/images/console/). */
export const CONSOLE_SHOTS_DIR = path.join(ROOT_DIR, 'test-artifacts', 'console');
const VIEWPORT = { width: 1280, height: 800 };

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let failing: Receiver;
let pay: PaymentsClient;
let browser: TestBrowser;
const admin = { username: '', password: `admin ${randomUUID()}` };
const viewer = { username: '', password: `viewer ${randomUUID()}` };
let lateTradeNo: string;
let failedNotificationId: string;
let runId: string;
let mismatchId: string;

const db = () => stack.database.db.sequelize;
const one = async <T extends object>(sql: string, replacements: Record<string, unknown>) =>
  (await db().query<T>(sql, { type: QueryTypes.SELECT, replacements }))[0];

beforeAll(async () => {
  // First: without Chromium every test here fails saying how to install it, before anything starts.
  browser = await launchBrowser();
  stack = await startTestStack({
    timeScale: 0.01,
    sandboxRefundDelayMs: 100,
    // Notifications give up after three attempts, milliseconds apart.
    notifications: { retryScheduleMs: [50, 50], timeoutMs: 2_000 },
  });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  failing = await new Receiver().answer(500).start();
  pay = paymentsClient(stack, app, receiver);
  const operators = operatorsOf(stack);
  const cli = { operatorId: null, username: 'cli:test' };
  admin.username = uniqueName('alice').slice(0, 40);
  viewer.username = uniqueName('victor').slice(0, 40);
  await operators.create(cli, { username: admin.username, role: 'admin', password: admin.password });
  await operators.create(cli, { username: viewer.username, role: 'viewer', password: viewer.password });

  // The exceptions an operator handles: a payment after close, a notification that failed, a
  // statement line that disagrees with the order.
  lateTradeNo = (await pay.paidAfterClose({ subject: 'Paid after close' })).trade_no;
  const bad = await pay.paidOrder({ notify_url: failing.url, subject: 'Receiver down' });
  failedNotificationId = await until(
    'a failed notification',
    async () =>
      (
        await one<{ notification_id: string }>(
          "SELECT notification_id FROM notifications WHERE trade_no = :t AND status = 'failed'",
          { t: bad.trade_no },
        )
      )?.notification_id,
  );
  const merchantId = await pay.merchant();
  await pay.paidOrder({ merchant_id: merchantId, amount: 400, subject: 'Tea [statement:amount+1]' });
  const started = await pay.post<{ list: { run_id: string }[] }>('/api/v1/reconciliation/runs', {
    channel_code: 'sandbox',
    bill_date: billDateOf(new Date()),
    account: `S-${merchantId}`,
  });
  runId = started.data!.list[0]!.run_id;
  await stack.client.workflow.getHandle(`reconciliation:${runId}`).result();
  mismatchId = (await one<{ id: string }>(
    "SELECT id::text AS id FROM reconciliation_mismatches WHERE run_id = :r AND state = 'open'",
    { r: runId },
  ))!.id;
  // A few more orders, so that the lists and the charts have something to show.
  for (let i = 0; i < 3; i += 1)
    await pay.paidOrder({ amount: 1000 + i * 250, subject: `Coffee beans ${i + 1}` });
  await pay.create({ amount: 880, subject: 'Waiting for the buyer' });
  fs.mkdirSync(CONSOLE_SHOTS_DIR, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await failing?.stop();
  await stack?.stop();
});

const signInOnPage = (page: Page, who: { username: string; password: string }) =>
  signInOnConsolePage(page, stack.baseUrl, who);
const shotAndCheck = (page: Page, name: string) => consoleShotAndCheck(page, CONSOLE_SHOTS_DIR, name);

test('when an admin signs in, refunds an order paid after close from the review queue, resends a failed notification and resolves a mismatch, then each is done and each is in the audit log', async () => {
  await browser.run(
    async (page) => {
      await page.goto(`${stack.baseUrl}/console/login`);
      await page.getByTestId('login-username').waitFor();
      await shotAndCheck(page, 'login');
      await signInOnPage(page, admin);
      await page.getByTestId('exception-needs_refund_review').waitFor();
      await shotAndCheck(page, 'home');

      // The review queue, then the order's page.
      await page.getByTestId('nav-orders').click();
      await page.getByTestId('tab-needs-refund-review').click();
      await page.getByText(lateTradeNo).first().waitFor();
      await shotAndCheck(page, 'orders-review-queue');
      await page.getByRole('link', { name: lateTradeNo }).first().click();
      await page.getByTestId('order-timeline').waitFor();
      await shotAndCheck(page, 'order-detail');
      await page.getByTestId('order-refund').click();
      await page.getByRole('dialog').waitFor();
      const merchantRefundNo = (await page.getByTestId('refund-merchant-no').textContent())!.trim();
      await page.getByTestId('refund-reason').fill('Paid after the order closed');
      await page.getByTestId('refund-submit').click();
      const refunded = await until('the refund succeeded', async () => {
        const r = await one<{ refund_no: string; status: string; amount: string }>(
          'SELECT refund_no, status, refund_amount AS amount FROM refunds WHERE trade_no = :t AND merchant_refund_no = :m',
          { t: lateTradeNo, m: merchantRefundNo },
        );
        return r?.status === 'success' ? r : undefined;
      });
      expect(Number(refunded.amount)).toBe(90);
      await page.reload();
      await page.getByTestId(`refund-row-${refunded.refund_no}`).waitFor();

      // The failed notification, resent.
      await page.goto(`${stack.baseUrl}/console/notifications?status=failed`);
      await page.getByTestId(`resend-${failedNotificationId}`).click();
      await page.getByTestId(`resend-${failedNotificationId}-confirm`).click();
      await until('the notification is sent again', async () => {
        const n = await one<{ status: string }>(
          'SELECT status FROM notifications WHERE notification_id = :n',
          {
            n: failedNotificationId,
          },
        );
        return n?.status !== 'failed' ? true : undefined;
      });
      await shotAndCheck(page, 'notifications');

      // The mismatch, resolved with a note.
      await page.goto(`${stack.baseUrl}/console/reconciliation`);
      await page.getByTestId(`run-link-${runId}`).waitFor();
      await shotAndCheck(page, 'reconciliation');
      await page.getByTestId(`run-link-${runId}`).click();
      await page.getByTestId(`resolve-${mismatchId}`).click();
      await page
        .getByTestId('resolve-note')
        .fill('Statement line checked with the channel: rounding on their side');
      await page.getByTestId('resolve-submit').click();
      await until('the mismatch is resolved', async () => {
        const m = await one<{ state: string }>('SELECT state FROM reconciliation_mismatches WHERE id = :id', {
          id: mismatchId,
        });
        return m?.state !== 'open' ? true : undefined;
      });
      await shotAndCheck(page, 'reconciliation-run');

      // Each action in the audit log, by this admin.
      await page.goto(`${stack.baseUrl}/console/audit?operator=${encodeURIComponent(admin.username)}`);
      for (const action of ['order.refund', 'notification.resend', 'mismatch.resolve', 'session.sign_in'])
        await page.getByRole('cell', { name: action, exact: true }).first().waitFor();
      await shotAndCheck(page, 'audit');
      const logged = await db().query<{ action: string; target_id: string }>(
        `SELECT action, target_id FROM console_audit_log WHERE operator_username = :u AND outcome = 'succeeded' ORDER BY id`,
        { type: QueryTypes.SELECT, replacements: { u: admin.username } },
      );
      expect(logged).toEqual(
        expect.arrayContaining([
          { action: 'order.refund', target_id: lateTradeNo },
          { action: 'notification.resend', target_id: failedNotificationId },
          { action: 'mismatch.resolve', target_id: mismatchId },
        ]),
      );
    },
    { viewport: VIEWPORT },
  );
});

test('when an admin opens every other page, then each shows and has no serious accessibility violation', async () => {
  await browser.run(
    async (page) => {
      await signInOnPage(page, admin);
      for (const [name, route, ready] of [
        ['orders', '/console/orders', 'nav-orders'],
        ['refunds', '/console/refunds', 'nav-refunds'],
        ['transfers', '/console/transfers', 'nav-transfers'],
        ['merchants', '/console/merchants', 'nav-merchants'],
        ['apps', '/console/apps', 'nav-apps'],
        ['operators', '/console/operators', 'operator-create'],
      ] as const) {
        await page.goto(`${stack.baseUrl}${route}`);
        await page.getByTestId(ready).waitFor();
        await shotAndCheck(page, name);
      }
    },
    { viewport: VIEWPORT },
  );
});

test("when an admin makes an operator in the page and changes its role, then a bad name is refused in the dialog with the server's reason, the password the server made is shown once and signs in, and the new role is kept", async () => {
  const username = uniqueName('clerk').slice(0, 60);
  await browser.run(
    async (page) => {
      await signInOnPage(page, admin);
      await page.goto(`${stack.baseUrl}/console/operators`);
      await page.getByTestId('operator-create').click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      // Nothing typed: the form says what is missing, and nothing is sent.
      await page.getByTestId('operator-create-submit').click();
      await dialog.getByText('Enter a username').waitFor();
      // A name the server refuses: its own reason shows, and the dialog stays open to correct it.
      await page.getByTestId('operator-username').fill('op_clerk');
      await page.getByTestId('operator-create-submit').click();
      await page.locator('.ant-message').getByText('must not start with op_').waitFor();
      expect(await dialog.isVisible()).toBe(true);
      await page.getByTestId('operator-username').fill(username);
      await page.getByTestId('operator-create-submit').click();
      const shown = page.getByTestId('generated-password');
      await shown.waitFor();
      const password = (await shown.textContent())!.trim();
      expect(password.length).toBeGreaterThanOrEqual(12);
      await page.getByRole('button', { name: 'OK' }).click();

      const made = await one<{ operator_id: string; role: string }>(
        'SELECT operator_id, role FROM console_operators WHERE username = :u',
        { u: username },
      );
      expect(made).toMatchObject({ role: 'viewer' });
      expect((await signInAs(stack, username, password)).status).toBe(200);

      await page.getByTestId(`change-role-${made!.operator_id}`).click();
      await page.getByTestId('operator-role-select').click();
      await page.locator('.ant-select-item-option[title="operator"]').click();
      await page.getByTestId('operator-role-submit').click();
      await page.locator('.ant-message').getByText(`${username} is now operator`).waitFor();
      await until('the role kept', async () =>
        (
          await one<{ role: string }>('SELECT role FROM console_operators WHERE username = :u', {
            u: username,
          })
        )?.role === 'operator'
          ? true
          : undefined,
      );
    },
    { viewport: VIEWPORT },
  );
});

test('when a viewer signs in, then no action button shows, and the console API refuses its changes with 403', async () => {
  await browser.run(
    async (page) => {
      await signInOnPage(page, viewer);
      await expect(page.getByTestId('current-role').textContent()).resolves.toBe('viewer');
      await page.goto(`${stack.baseUrl}/console/orders/${lateTradeNo}`);
      await page.getByTestId('order-timeline').waitFor();
      expect(await page.getByTestId('order-refund').count()).toBe(0);
      expect(await page.getByTestId('order-close').count()).toBe(0);
      await page.goto(`${stack.baseUrl}/console/notifications`);
      await page.getByTestId('nav-notifications').waitFor();
      expect(await page.locator('[data-testid^="resend-"]').count()).toBe(0);
      expect(await page.getByTestId('nav-audit').count()).toBe(0);
      // What the buttons would have sent, sent by the page itself with the session's token.
      const answer = await page.evaluate(async (tradeNo) => {
        const session = (await (await fetch('/console/api/session')).json()) as {
          data: { csrf_token: string };
        };
        const res = await fetch(`/console/api/orders/${tradeNo}/close`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': session.data.csrf_token },
          body: '{}',
        });
        return { status: res.status, code: ((await res.json()) as { code: string }).code };
      }, lateTradeNo);
      expect(answer).toEqual({ status: 403, code: 'permission_denied' });
    },
    { viewport: VIEWPORT },
  );
});

test('when a change comes without the CSRF token, or from a page of another origin, then it is refused and the session goes on', async () => {
  // A page of another origin (another port of this host: the same site, so the cookie goes along)
  // whose form posts to the console's API as soon as it loads.
  const target = `${stack.baseUrl}/console/api/session/sign-out-everywhere`;
  const attacker = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(
      `<!doctype html><html lang="en"><title>Win a prize</title><form method="post" action="${target}" enctype="text/plain"><input name="x" value="y"></form><script>document.forms[0].submit()</script></html>`,
    );
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  const attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
  try {
    await browser.run(
      async (page) => {
        await signInOnPage(page, admin);
        const noToken = await page.evaluate(async () => {
          const res = await fetch('/console/api/session/sign-out-everywhere', { method: 'POST', body: '{}' });
          return { status: res.status, code: ((await res.json()) as { code: string }).code };
        });
        expect(noToken).toEqual({ status: 403, code: 'permission_denied' });

        const posted = page.waitForResponse((r) => r.url() === target);
        await page.goto(attackerUrl);
        const answer = await posted;
        expect(answer.status()).toBe(403);
        expect(((await answer.json()) as { code: string }).code).toBe('permission_denied');

        await page.goto(`${stack.baseUrl}/console/`);
        await page.getByTestId('current-operator').waitFor();
      },
      { viewport: VIEWPORT },
    );
  } finally {
    await new Promise((resolve) => attacker.close(resolve));
  }
});
