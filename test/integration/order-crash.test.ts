/**
 * A worker dies between the channel's create and the database write. Temporal retries the
 * create activity on the next worker; the channel treats trade_no as an idempotency key, so
 * the request completes with one order upstream and one in the read model.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { serveApi, startTestStack, uniqueName, type ExtraApi, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';
import { spawnWorker, type WorkerProcess } from '../support/worker-process';
import { createActivities } from '../../src/activities';
import { generateServiceNo } from '../../src/platform/ids';
import { armedFile, HELD_PREFIX } from '../../src/worker/activity-holds';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { replayHistories } from '../support/history';

jest.setTimeout(120_000);

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01 });
});
afterAll(async () => {
  await stack?.stop();
});

const workerEnv = () => ({
  DATABASE_URL: stack.database.url,
  DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
  PUBLIC_BASE_URL: stack.baseUrl,
  SANDBOX_SECRET: stack.sandboxSecret,
  DURAPAY_TIME_SCALE: '0.01',
});

async function count(sql: string, replacements: Record<string, unknown>): Promise<number> {
  const rows = await stack.database.db.sequelize.query<{ n: string }>(sql, {
    replacements,
    type: QueryTypes.SELECT,
  });
  return Number(rows[0]!.n);
}

/** An order of 100 created through `api` and paid by its buyer; its trade_no and its query. */
async function paidThrough(api: ExtraApi, app: AppCredentials, subject: string) {
  const created = await envelope<{ trade_no: string; pay_credential: { pay_url: string } }>(
    await signedFetch(api.baseUrl, app, 'POST', '/api/v1/pay/unified-order', {
      json: {
        merchant_order_no: `M-${randomUUID()}`,
        pay_method: 'qr_code',
        amount: 100,
        subject,
        notify_url: 'http://127.0.0.1:9/n',
      },
    }),
  );
  const tradeNo = created.data!.trade_no;
  await fetch(created.data!.pay_credential.pay_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"result":"success"}',
  });
  const status = async () =>
    (await envelope(await signedFetch(api.baseUrl, app, 'GET', `/api/v1/pay/query/${tradeNo}`))).data!;
  return { tradeNo, status };
}

test('when the worker is killed between the channel create and the database write, then the create completes once after restart', async () => {
  const taskQueue = uniqueName('tq-order-kill');
  // An API whose orders run on a worker process of their own.
  const api = await serveApi(stack, { taskQueue, requestTimeoutMs: 60_000 });
  const first = spawnWorker(taskQueue, workerEnv());
  let second: WorkerProcess | undefined;
  try {
    await first.ready;
    const app = await stack.createApp(['payments']);
    const merchantOrderNo = `M-${randomUUID()}`;
    const pending = signedFetch(api.baseUrl, app, 'POST', '/api/v1/pay/unified-order', {
      json: {
        merchant_order_no: merchantOrderNo,
        pay_method: 'qr_code',
        amount: 100,
        subject: 'Crash test',
        notify_url: 'http://127.0.0.1:9/n',
        extra: { sandbox: { latency_ms: 2_000 } },
      },
    });

    // The channel has the order (it answers late); the read model does not yet.
    const deadline = Date.now() + 20_000;
    let tradeNo: string | undefined;
    while (!tradeNo && Date.now() < deadline) {
      const rows = await stack.database.db.sequelize.query<{ trade_no: string }>(
        `SELECT trade_no FROM sandbox_orders WHERE subject = 'Crash test' ORDER BY created_at DESC LIMIT 1`,
        { type: QueryTypes.SELECT },
      );
      tradeNo = rows[0]?.trade_no;
      if (!tradeNo) await new Promise((r) => setTimeout(r, 20));
    }
    expect(tradeNo).toBeDefined();
    expect(await count('SELECT count(*) AS n FROM orders WHERE trade_no = :t', { t: tradeNo })).toBe(0);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    second = spawnWorker(taskQueue, workerEnv());
    await second.ready;
    const res = await pending;
    const body = await envelope<{ trade_no: string; is_idempotent: boolean }>(res);
    expect(body.code).toBe('success');
    expect(body.data).toMatchObject({ trade_no: tradeNo, is_idempotent: false });
    expect(await count('SELECT count(*) AS n FROM sandbox_orders WHERE trade_no = :t', { t: tradeNo })).toBe(
      1,
    );
    expect(
      await count('SELECT count(*) AS n FROM orders WHERE merchant_order_no = :m', { m: merchantOrderNo }),
    ).toBe(1);
  } finally {
    await first.stop();
    await second?.stop();
    await api.close();
  }
});

test('when the task that made an order runs again (it timed out or its worker died after the create), then the channel is not asked again', async () => {
  // What a workflow task run again does: its local activities run again, with the same input.
  const { createOrderAtChannel } = createActivities(stack.activityDeps);
  const app = await stack.createApp(['payments']);
  const tradeNo = generateServiceNo('P');
  const expireAt = new Date(Date.now() + 60_000).toISOString();
  const input = {
    channel: {
      channelCode: 'sandbox',
      tradeNo,
      amount: 100,
      currency: 'CNY',
      payMethod: 'qr_code',
      subject: 'Run again',
      expireAt,
      callbackUrl: `${stack.baseUrl}/api/v1/notify/payment/sandbox`,
      extra: null,
      subMerchantNo: null,
      profitSharing: false,
    },
    order: {
      tradeNo,
      appId: app.app_id,
      merchantOrderNo: `M-${randomUUID()}`,
      merchantId: null,
      subMerchantNo: null,
      channelCode: 'sandbox',
      payMethod: 'qr_code',
      amount: 100,
      currency: 'CNY',
      subject: 'Run again',
      notifyUrl: 'http://127.0.0.1:9/n',
      expireTime: expireAt,
      profitSharingAmount: 0,
      extra: null,
      createdAt: new Date().toISOString(),
    },
  };
  const first = await createOrderAtChannel(input);
  const again = await createOrderAtChannel(input);
  expect(again).toEqual(first);
  expect(
    await count('SELECT COALESCE(SUM(create_requests), 0) AS n FROM sandbox_orders WHERE trade_no = :t', {
      t: tradeNo,
    }),
  ).toBe(1);
  expect(await count('SELECT count(*) AS n FROM orders WHERE trade_no = :t', { t: tradeNo })).toBe(1);
});

test('when the worker is killed after the channel accepted a refund and before it was recorded, then one refund upstream and the right refunded amount', async () => {
  const taskQueue = uniqueName('tq-refund-kill');
  // An API whose orders run on a worker process of their own.
  const api = await serveApi(stack, { taskQueue, requestTimeoutMs: 60_000 });
  const first = spawnWorker(taskQueue, workerEnv());
  let second: WorkerProcess | undefined;
  try {
    await first.ready;
    const app = await stack.createApp(['payments']);
    const { tradeNo, status } = await paidThrough(api, app, 'Refund crash');
    await until('paid', async () => ((await status()).status === 'paid' ? true : undefined));

    // The sandbox accepts the refund at once and answers 2 s later.
    const pending = signedFetch(api.baseUrl, app, 'POST', '/api/v1/pay/refund', {
      json: { trade_no: tradeNo, refund_amount: 100, reason: 'crash [sandbox:slow]' },
    });
    await until('the channel accepted the refund', async () =>
      (await count('SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t', { t: tradeNo })) === 1
        ? true
        : undefined,
    );
    // Not yet recorded as accepted by durapay: its channel_refund_no is still unknown.
    expect(
      await count('SELECT count(*) AS n FROM refunds WHERE trade_no = :t AND channel_refund_no IS NOT NULL', {
        t: tradeNo,
      }),
    ).toBe(0);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    second = spawnWorker(taskQueue, workerEnv());
    await second.ready;
    const answer = await envelope<{ refund_no: string; status: string }>(await pending);
    expect(answer.code).toBe('success');
    await until('refunded', async () => ((await status()).status === 'refunded' ? true : undefined), 60_000);
    expect((await status()).refunded_amount).toBe(100);
    // The retried activity asked the channel again, which answered with the same refund.
    expect(await count('SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t', { t: tradeNo })).toBe(
      1,
    );
    expect(
      await count('SELECT SUM(refund_requests) AS n FROM sandbox_refunds WHERE trade_no = :t', {
        t: tradeNo,
      }),
    ).toBe(2);
    expect(await count('SELECT count(*) AS n FROM refunds WHERE trade_no = :t', { t: tradeNo })).toBe(1);
  } finally {
    await first.stop();
    await second?.stop();
    await api.close();
  }
});

test('when the worker dies after a payment was recorded and before its task completed, then a refund arriving with the next worker is decided against the paid order', async () => {
  const taskQueue = uniqueName('tq-paid-kill');
  const holds = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-holds-'));
  const api = await serveApi(stack, { taskQueue, requestTimeoutMs: 60_000 });
  // The payment's announcement, made right after its row, hangs until the worker is killed.
  fs.writeFileSync(armedFile(holds, 'notifyOrderEvent', 'before'), '');
  const first = spawnWorker(taskQueue, { ...workerEnv(), DURAPAY_CHAOS_HOLDS_DIR: holds });
  let second: WorkerProcess | undefined;
  try {
    await first.ready;
    const app = await stack.createApp(['payments']);
    const { tradeNo, status } = await paidThrough(api, app, 'Paid crash');
    // The read model says paid; the task that wrote it is held, and dies with its worker.
    await until('paid in the read model', async () =>
      (await status()).status === 'paid' ? true : undefined,
    );
    await until('the announcement held', async () =>
      fs.readdirSync(holds).some((f) => f.startsWith(HELD_PREFIX)) ? true : undefined,
    );
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    // The refund reaches the order together with the payment its next task applies again.
    const pending = signedFetch(api.baseUrl, app, 'POST', '/api/v1/pay/refund', {
      json: { trade_no: tradeNo, refund_amount: 10, merchant_refund_no: `MR-${randomUUID()}` },
    });
    second = spawnWorker(taskQueue, workerEnv());
    await second.ready;
    const answer = await envelope<{ refund_no: string }>(await pending);
    expect({ status: answer.code, message: answer.message }).toEqual({
      status: 'success',
      message: 'success',
    });
    await until('partially refunded', async () =>
      (await status()).status === 'partially_refunded' ? true : undefined,
    );
    expect(await count('SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t', { t: tradeNo })).toBe(
      1,
    );
    // The path the payment took with the refund replays as it ran.
    const [order] = await stack.database.db.sequelize.query<{ merchant_order_no: string }>(
      'SELECT merchant_order_no FROM orders WHERE trade_no = :t',
      { replacements: { t: tradeNo }, type: QueryTypes.SELECT },
    );
    const workflowId = orderWorkflowId(app.app_id, order!.merchant_order_no);
    const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
    expect(await replayHistories([{ workflowId, history }])).toEqual([{ workflowId, error: undefined }]);
  } finally {
    await first.stop();
    await second?.stop();
    await api.close();
    fs.rmSync(holds, { recursive: true, force: true });
  }
});
