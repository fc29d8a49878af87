import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { QueryTypes } from 'sequelize';
import { Webhook } from 'standardwebhooks';
import { createApp } from '../../src/api/app';
import { readinessProbes } from '../../src/api/server';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { captureLogger, startTestStack, uniqueName, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { freePort } from '../support/ports';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';
import { spawnWorker, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

// Audit polls at 1/100 of real time: 50 ms, 100 ms, 300 ms, 600 ms, …
const TIME_SCALE = 0.01;

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE });
  app = await stack.createApp(['merchants', 'payments']);
  receiver = await new Receiver().answer(200).start();
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

const post = (path: string, json: unknown, creds = app, base = stack.baseUrl) =>
  signedFetch(base, creds, 'POST', path, { json });
const get = (path: string, creds = app) => signedFetch(stack.baseUrl, creds, 'GET', path);

async function merchant(extra: Record<string, unknown> = {}): Promise<string> {
  const merchantId = `m-${randomUUID().slice(0, 8)}`;
  const res = await post('/api/v1/merchant', {
    merchant_id: merchantId,
    merchant_name: 'Tea House',
    ...extra,
  });
  expect((await envelope(res)).code).toBe('success');
  return merchantId;
}

/** Attaches the merchant's account at the sandbox channel (SPEC §5.8), which its orders need. */
async function attachSandbox(merchantId: string): Promise<void> {
  const path = `/api/v1/merchant/${merchantId}/channel-accounts/sandbox`;
  const res = await signedFetch(stack.baseUrl, app, 'PUT', path, {
    json: { sub_merchant_no: `S-${merchantId}` },
  });
  expect((await envelope(res)).code).toBe('success');
}

async function apply(merchantId: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await post(`/api/v1/merchant/${merchantId}/apply`, {
    channel_code: 'sandbox',
    notify_url: receiver.url,
    ...body,
  });
  const out = await envelope<{ application_id: string }>(res);
  expect(out.code).toBe('success');
  expect(out.data!.application_id).toMatch(/^apl_[a-z2-7]{20}$/);
  return out.data!.application_id;
}

async function audit(merchantId: string) {
  return (await envelope(await get(`/api/v1/merchant/${merchantId}/audit`))).data!;
}

async function finalAudit(merchantId: string, status: string, timeoutMs?: number) {
  return until(
    `application ${status}`,
    async () => {
      const a = await audit(merchantId);
      return a.status === status ? a : undefined;
    },
    timeoutMs,
  );
}

function updates(applicationId: string) {
  return receiver.received
    .map((r) => ({
      r,
      body: JSON.parse(r.body) as { type: string; data: { application_id: string; status: string } },
    }))
    .filter(
      (x) => x.body.type === 'merchant.application.updated' && x.body.data.application_id === applicationId,
    );
}

describe('applications', () => {
  test('when a merchant applies, then the audit goes submitted → auditing → finished and the merchant becomes active', async () => {
    const merchantId = await merchant();
    const applicationId = await apply(merchantId, { submit_data: { shop: 'tea' } });
    const done = await finalAudit(merchantId, 'finished');
    expect(done).toMatchObject({
      application_id: applicationId,
      merchant_id: merchantId,
      channel_code: 'sandbox',
      sub_merchant_no: expect.any(String),
      reject_reason: null,
    });
    expect(done.finished_at).not.toBeNull();
    const m = (await envelope(await get(`/api/v1/merchant/${merchantId}`))).data!;
    expect(m).toMatchObject({
      status: 'active',
      channel_code: 'sandbox',
      sub_merchant_no: done.sub_merchant_no,
    });
    const seen = await until('three updates', async () => {
      const u = updates(applicationId);
      return u.length >= 3 ? u : undefined;
    });
    expect(seen.map((x) => x.body.data.status)).toEqual(['submitted', 'auditing', 'finished']);
    for (const { r } of seen)
      expect(() => new Webhook(app.webhook_secret).verify(r.body, r.headers)).not.toThrow();
  });

  test('when the channel rejects, then rejected with a reason, the merchant rejected, and a new application may follow', async () => {
    const merchantId = await merchant();
    const first = await apply(merchantId, { submit_data: { sandbox_outcome: 'reject' } });
    const rejected = await finalAudit(merchantId, 'rejected');
    expect(rejected.reject_reason).toEqual(expect.any(String));
    expect((await envelope(await get(`/api/v1/merchant/${merchantId}`))).data!.status).toBe('rejected');
    await until('rejected notified', async () =>
      updates(first).some((u) => u.body.data.status === 'rejected') ? true : undefined,
    );
    const second = await apply(merchantId);
    expect(second).not.toBe(first);
    expect((await finalAudit(merchantId, 'finished')).application_id).toBe(second);
  });

  test('when an active merchant applies again and is rejected, then it stays active', async () => {
    const merchantId = await merchant();
    await apply(merchantId);
    await finalAudit(merchantId, 'finished');
    await apply(merchantId, { submit_data: { sandbox_outcome: 'reject' } });
    await finalAudit(merchantId, 'rejected');
    const m = (await envelope(await get(`/api/v1/merchant/${merchantId}`))).data!;
    expect(m).toMatchObject({ status: 'active', sub_merchant_no: expect.any(String) });
  });

  test('when the channel wants a signature, then the application passes through to_be_signed with a sign_url', async () => {
    const merchantId = await merchant();
    const applicationId = await apply(merchantId, { submit_data: { sandbox_outcome: 'sign' } });
    await finalAudit(merchantId, 'finished');
    const statuses = (
      await until('four updates', async () => {
        const u = updates(applicationId);
        return u.length >= 4 ? u : undefined;
      })
    ).map((x) => x.body.data as { status: string; sign_url?: string | null });
    expect(statuses.map((s) => s.status)).toEqual(['submitted', 'auditing', 'to_be_signed', 'finished']);
    expect(statuses[2]!.sign_url).toMatch(/^http/);
  });

  test('when a merchant applies again while its application is open, then the same application_id and nothing is submitted again', async () => {
    const merchantId = await merchant();
    const [a, b] = await Promise.all([apply(merchantId), apply(merchantId)]);
    expect(b).toBe(a);
    const rows = await stack.database.db.sequelize.query<{ n: string }>(
      'SELECT count(*) AS n FROM merchant_applications WHERE merchant_id = :m',
      { replacements: { m: merchantId }, type: QueryTypes.SELECT },
    );
    expect(Number(rows[0]!.n)).toBe(1);
  });

  test('when the merchant does not exist, then apply and audit answer 404 order_not_found "merchant not found"', async () => {
    for (const res of [
      await post('/api/v1/merchant/nobody/apply', { channel_code: 'sandbox' }),
      await get('/api/v1/merchant/nobody/audit'),
    ]) {
      expect(res.status).toBe(404);
      expect(await envelope(res)).toMatchObject({
        code: 'order_not_found',
        message: 'merchant not found',
        data: null,
      });
    }
  });

  test('when a merchant has no application, then audit answers 404 "application not found"', async () => {
    const merchantId = await merchant();
    const res = await get(`/api/v1/merchant/${merchantId}/audit`);
    expect(res.status).toBe(404);
    expect(await envelope(res)).toMatchObject({ code: 'order_not_found', message: 'application not found' });
  });

  test.each([
    ['channel_code missing', {}, '"channel_code" is required'],
    [
      'submit_data not an object',
      { channel_code: 'sandbox', submit_data: 'x' },
      '"submit_data" must be of type object',
    ],
    ['an unknown field', { channel_code: 'sandbox', extra: 1 }, '"extra" is not allowed'],
  ])('when apply has %s, then 400 invalid_param', async (_w, body, message) => {
    const merchantId = await merchant();
    const res = await post(`/api/v1/merchant/${merchantId}/apply`, body);
    expect(res.status).toBe(400);
    expect(await envelope(res)).toMatchObject({ code: 'invalid_param', message });
  });

  test('when the channel refuses the submission, then 500 internal_system saying so, the application reads canceled, and a new one may follow', async () => {
    const merchantId = await merchant();
    // The sandbox refuses an outcome it does not know.
    const res = await post(`/api/v1/merchant/${merchantId}/apply`, {
      channel_code: 'sandbox',
      submit_data: { sandbox_outcome: 'explode' },
    });
    expect(res.status).toBe(500);
    const refused = await envelope(res);
    expect(refused.code).toBe('internal_system');
    expect(refused.message).toMatch(/^the channel did not accept the application: /);
    expect(await audit(merchantId)).toMatchObject({ status: 'canceled' });
    const second = await apply(merchantId);
    expect((await finalAudit(merchantId, 'finished')).application_id).toBe(second);
  });

  test('when the channel does not exist or cannot onboard, then 500 internal_system', async () => {
    const merchantId = await merchant();
    const res = await post(`/api/v1/merchant/${merchantId}/apply`, { channel_code: 'nopay' });
    expect(res.status).toBe(500);
    expect((await envelope(res)).code).toBe('internal_system');
  });

  test("when another app applies for or audits this app's merchant, then it is not found", async () => {
    const merchantId = await merchant();
    await apply(merchantId);
    const other = await stack.createApp(['merchants']);
    const a = await post(`/api/v1/merchant/${merchantId}/apply`, { channel_code: 'sandbox' }, other);
    expect(a.status).toBe(404);
    const b = await get(`/api/v1/merchant/${merchantId}/audit`, other);
    expect(b.status).toBe(404);
    expect((await envelope(b)).message).toBe('merchant not found');
  });
});

describe('profit sharing through a merchant', () => {
  const order = (merchantId: string, extra: Record<string, unknown>) => ({
    merchant_order_no: `M-${randomUUID()}`,
    pay_method: 'qr_code',
    amount: 100,
    subject: 'Shared tea',
    notify_url: receiver.url,
    merchant_id: merchantId,
    ...extra,
  });

  test('when a merchant has no receivers, then a shared order answers 422 sharing_not_config', async () => {
    const merchantId = await merchant();
    const res = await post('/api/v1/pay/unified-order', order(merchantId, { profit_sharing_amount: 5 }));
    expect(res.status).toBe(422);
    expect((await envelope(res)).code).toBe('sharing_not_config');
  });

  test("when the share exceeds the merchant's max_ratio, then 422 sharing_fee_exceed; within it, the order is paid and shared", async () => {
    const merchantId = await merchant({
      profit_sharing: {
        receivers: [
          { type: 'merchant', account: 'acc-1', name: 'One', weight: 1 },
          { type: 'merchant', account: 'acc-2', name: 'Two', weight: 1 },
        ],
        max_ratio: 0.1,
      },
    });
    await attachSandbox(merchantId);
    const over = await post('/api/v1/pay/unified-order', order(merchantId, { profit_sharing_amount: 11 }));
    expect(over.status).toBe(422);
    expect((await envelope(over)).code).toBe('sharing_fee_exceed');

    const ok = await envelope<{ trade_no: string; pay_credential: { pay_url: string } }>(
      await post('/api/v1/pay/unified-order', order(merchantId, { profit_sharing_amount: 9 })),
    );
    expect(ok.code).toBe('success');
    await fetch(ok.data!.pay_credential.pay_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'success' }),
    });
    await until('profit sharing finished', async () => {
      const q = (await envelope(await get(`/api/v1/pay/query/${ok.data!.trade_no}`))).data!;
      return q.profit_sharing_status === 'finished' ? q : undefined;
    });
    const shares = await stack.database.db.sequelize.query<{
      receivers: { account: string; amount: number }[];
    }>('SELECT receivers FROM sandbox_profit_shares WHERE trade_no = :t', {
      replacements: { t: ok.data!.trade_no },
      type: QueryTypes.SELECT,
    });
    expect(shares[0]!.receivers.map((r) => [r.account, r.amount])).toEqual([
      ['acc-1', 5],
      ['acc-2', 4],
    ]);
  });
});

describe('worker crash between audit polls', () => {
  test('when the worker is killed while the application waits to poll, then polling resumes and it still finishes', async () => {
    const taskQueue = uniqueName('tq-apply-kill');
    const port = await freePort();
    const api = createApp({
      logger: captureLogger().logger,
      readiness: readinessProbes(stack.database.db, stack.connection),
      auth: stack.auth,
      // Slow polls for this API's applications: 5 s scaled by 0.4 → 2 s, then 4 s, …
      services: { ...stack.services, taskQueue, timeScale: 0.4 },
    });
    const server = await new Promise<Server>((resolve) => {
      const s = api.listen(port, '127.0.0.1', () => resolve(s));
    });
    const env = {
      DATABASE_URL: stack.database.url,
      DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
      PUBLIC_BASE_URL: stack.baseUrl,
      SANDBOX_SECRET: stack.sandboxSecret,
    };
    const first = spawnWorker(taskQueue, env);
    let second: WorkerProcess | undefined;
    try {
      await first.ready;
      const merchantId = await merchant();
      const res = await post(
        `/api/v1/merchant/${merchantId}/apply`,
        { channel_code: 'sandbox' },
        app,
        `http://127.0.0.1:${port}`,
      );
      const applicationId = (await envelope<{ application_id: string }>(res)).data!.application_id;
      expect((await audit(merchantId)).status).toBe('submitted');
      // The first poll is 2 s away on a durable timer: kill the worker now.
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
      second = spawnWorker(taskQueue, env);
      await second.ready;
      // A poll attempt the killed worker had started is sent again once its 10 s timeout passes.
      const done = await finalAudit(merchantId, 'finished', 60_000);
      expect(done.application_id).toBe(applicationId);
      const polled = await stack.database.db.sequelize.query<{ n: string }>(
        'SELECT count(*) AS n FROM sandbox_applications WHERE application_id = :a',
        { replacements: { a: applicationId }, type: QueryTypes.SELECT },
      );
      expect(Number(polled[0]!.n)).toBe(1);
    } finally {
      await first.stop();
      await second?.stop();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
