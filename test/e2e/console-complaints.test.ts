/**
 * The console's complaints (SPEC §16) in a real browser (Debian's Chromium), against the real
 * API, Temporal, Postgres and the offline WeChat Pay upstream: a payer's complaint reaches the
 * list, overdue ones flagged (filter: overdue) and counted on the home page; an operator replies
 * and refunds from its page, the channel gets each once and the order's book the refund, then
 * completes it; each is audited without the payer's words. A viewer sees no forms. The pictures
 * are docs/console.md's (test-artifacts/console/), checked with axe-core.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { ensureComplaintSweepSchedule } from '../../src/modules/complaints';
import { ROOT_DIR } from '../../src/platform/paths';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { operatorsOf } from '../support/console';
import { consoleShotAndCheck, signInOnConsolePage } from '../support/console-page';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(240_000);

const SHOTS_DIR = path.join(ROOT_DIR, 'test-artifacts', 'console');
/** 1/5 000 of real time: a complaint nobody answers is overdue 17 s after it is made. */
const TIME_SCALE = 0.0002;
const SUB_MCHID = '1900000109';

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let browser: TestBrowser;
let merchantId: string;
const admin = { username: '', password: `admin ${randomUUID()}` };
const viewer = { username: '', password: `viewer ${randomUUID()}` };

beforeAll(async () => {
  browser = await launchBrowser();
  stack = await startTestStack({ timeScale: TIME_SCALE, wechatpay: {} });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = `MC-${randomUUID().slice(0, 8)}`;
  await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' });
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: SUB_MCHID });
  await ensureComplaintSweepSchedule(stack.client, {
    taskQueue: stack.taskQueue,
    publicBaseUrl: stack.baseUrl,
  });
  await until('the complaint notification URL registered', async () =>
    stack.wechatpay!.sandbox.complaintNotifyUrl() ? true : undefined,
  );
  const operators = operatorsOf(stack);
  const cli = { operatorId: null, username: 'cli:test' };
  admin.username = uniqueName('complaints-admin').slice(0, 40);
  viewer.username = uniqueName('complaints-viewer').slice(0, 40);
  await operators.create(cli, { username: admin.username, role: 'admin', password: admin.password });
  await operators.create(cli, { username: viewer.username, role: 'viewer', password: viewer.password });
  fs.mkdirSync(SHOTS_DIR, { recursive: true });
});
afterAll(async () => {
  await stack?.client.schedule
    .getHandle(`complaint-sweep:${stack.taskQueue}`)
    .delete()
    .catch(() => undefined);
  await browser?.close();
  await receiver?.stop();
  await stack?.stop();
});

/** A paid WeChat Pay order of the merchant, and its payer's complaint as durapay holds it. */
async function complained(detail: string, amount = 3_600) {
  const a = await pay.post<{ trade_no: string; pay_credential: Record<string, string> }>(
    '/api/v1/pay/unified-order',
    pay.orderBody({
      channel_code: 'wechatpay',
      merchant_id: merchantId,
      subject: 'Oolong',
      amount,
      expire_minutes: 1440,
    }),
  );
  const tradeNo = a.data!.trade_no;
  await fetch(a.data!.pay_credential.code_url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  await pay.statusIs(tradeNo, 'paid');
  const c = stack.wechatpay!.sandbox.openComplaint(tradeNo, { detail, payerPhone: '13900139000' });
  await until(`complaint ${c.complaintId} kept`, async () =>
    (await pay.get(`/api/v1/complaints/${c.complaintId}`)).status === 200 ? true : undefined,
  );
  return { tradeNo, c };
}

test('when a complaint goes unanswered, then the home page counts it overdue and the list flagged; an operator replies, refunds and completes it on its page, each once at the channel and audited', async () => {
  const late = await complained('快递一直没到');
  await until('the complaint overdue', async () =>
    (await pay.get<{ overdue: boolean }>(`/api/v1/complaints/${late.c.complaintId}`)).data!.overdue
      ? true
      : undefined,
  );
  const fresh = await complained('茶叶包装破损，申请部分退款');
  await browser.run(async (page) => {
    await signInOnConsolePage(page, stack.baseUrl, admin);
    const overdue = page.getByTestId('exception-overdue_complaints');
    await overdue.waitFor();
    expect(
      Number((await overdue.locator('.ant-statistic-content-value').innerText()).trim()),
    ).toBeGreaterThanOrEqual(1);
    await page.getByTestId('exception-link-overdue_complaints').click();
    await page
      .locator('tr', { hasText: late.c.complaintId })
      .getByTestId(`overdue-${late.c.complaintId}`)
      .waitFor();
    expect(await page.locator('tr', { hasText: fresh.c.complaintId }).count()).toBe(0);
    await page.getByTestId('nav-complaints').click();
    await page.locator('tr', { hasText: fresh.c.complaintId }).waitFor();
    await consoleShotAndCheck(page, SHOTS_DIR, 'complaints');

    await page.getByRole('link', { name: fresh.c.complaintId }).click();
    await page.getByTestId('complaint-detail').getByText('茶叶包装破损').waitFor();
    await page.locator('form[id="complaint-reply"]').getByLabel('Reply').fill('抱歉，已为您退款 12 元。');
    await page.getByTestId('complaint-reply-submit').click();
    await page.getByTestId('complaint-history').getByText('MERCHANT_RESPONSE').waitFor();
    await page.locator('form[id="complaint-refund"]').getByLabel('Refund (yuan)').fill('12.00');
    await page.getByTestId('complaint-refund-submit').click();
    await page
      .getByTestId('complaint-fields')
      .getByText(/^R\d+ \(¥12\.00\)$/)
      .waitFor();
    await consoleShotAndCheck(page, SHOTS_DIR, 'complaint-detail');
    await page.getByTestId('complaint-complete').click();
    await page.getByTestId('complaint-complete-confirm').click();
    await page.getByTestId('complaint-fields').getByText('processed').waitFor();
  });
  // The payer asked for a refund: the one refund made is approved at the channel, once.
  expect(fresh.c.calls).toEqual({ response: 1, complete: 1, refundProgress: 1 });
  expect(fresh.c.order.refundKeys).toHaveLength(1);
  await until('the refund settled in the book', async () =>
    (await pay.query(fresh.tradeNo)).refunded_amount === 1_200 ? true : undefined,
  );
  const audit = await stack.database.db.sequelize.query<{ action: string; outcome: string; after: unknown }>(
    'SELECT action, outcome, after FROM console_audit_log WHERE target_id = :id ORDER BY id',
    { type: QueryTypes.SELECT, replacements: { id: fresh.c.complaintId } },
  );
  expect(audit.map((a) => [a.action, a.outcome])).toEqual([
    ['complaint.reply', 'succeeded'],
    ['complaint.refund', 'succeeded'],
    ['complaint.complete', 'succeeded'],
  ]);
  expect(JSON.stringify(audit)).not.toContain('茶叶包装破损');
  expect(JSON.stringify(audit)).not.toContain('13900139000');
});

test('when a viewer opens a complaint, then it shows no forms, and the API refuses a viewer’s reply with 403', async () => {
  const { c } = await complained('请尽快处理');
  await browser.run(async (page) => {
    await signInOnConsolePage(page, stack.baseUrl, viewer);
    await page.goto(`${stack.baseUrl}/console/complaints/${c.complaintId}`);
    await page.getByTestId('complaint-detail').waitFor();
    expect(await page.getByTestId('complaint-reply-submit').count()).toBe(0);
    const csrf = await page.evaluate(async () => {
      const res = await fetch('/console/api/session');
      return ((await res.json()) as { data: { csrf_token: string } }).data.csrf_token;
    });
    const answer = await page.evaluate(
      async ([token, id]) => {
        const res = await fetch(`/console/api/complaints/${id}/reply`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': token! },
          body: JSON.stringify({ content: 'x' }),
        });
        return { status: res.status, code: ((await res.json()) as { code: string }).code };
      },
      [csrf, c.complaintId],
    );
    expect(answer).toEqual({ status: 403, code: 'permission_denied' });
  });
  expect(c.calls.response).toBe(0);
});

test('when a payer complains on the sandbox checkout page of a paid order, then the complaint reaches durapay and the console lists it', async () => {
  const a = await pay.post<{ trade_no: string; pay_credential: Record<string, string> }>(
    '/api/v1/pay/unified-order',
    pay.orderBody({
      channel_code: 'wechatpay',
      merchant_id: merchantId,
      subject: 'Pu-erh',
      amount: 1_200,
      expire_minutes: 1440,
    }),
  );
  const tradeNo = a.data!.trade_no;
  const checkoutUrl = a.data!.pay_credential.code_url!;
  await browser.run(async (page) => {
    await page.goto(checkoutUrl);
    // Not paid: no complaint form yet.
    expect(await page.getByRole('button', { name: 'Complain' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await pay.statusIs(tradeNo, 'paid');
    await page.reload();
    await page.getByLabel('What went wrong').fill('茶饼发霉了');
    await page.getByLabel('Problem').selectOption('SERVICE_NOT_WORK');
    await page.getByRole('button', { name: 'Complain' }).click();
    await page.locator('ul.complaints li', { hasText: '茶饼发霉了' }).waitFor();
  });
  const listed = await until('the complaint at durapay', async () => {
    const list = await pay.get<{ list: { complaint_id: string; problem_type: string }[] }>(
      `/api/v1/complaints?trade_no=${tradeNo}`,
    );
    return list.data!.list[0];
  });
  expect(listed.problem_type).toBe('service_not_work');
  await browser.run(async (page) => {
    await signInOnConsolePage(page, stack.baseUrl, admin);
    await page.getByTestId('nav-complaints').click();
    await page.locator('tr', { hasText: listed.complaint_id }).waitFor();
  });
});
