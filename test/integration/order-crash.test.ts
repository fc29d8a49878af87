/**
 * A worker dies between the channel's create and the database write. Temporal retries the
 * create activity on the next worker; the channel treats trade_no as an idempotency key, so
 * the request completes with one order upstream and one in the read model.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { QueryTypes } from 'sequelize';
import { createApp } from '../../src/api/app';
import { readinessProbes } from '../../src/api/server';
import { captureLogger, startTestStack, uniqueName, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { freePort } from '../support/ports';
import { signedFetch } from '../support/signing';
import { spawnWorker, type WorkerProcess } from '../support/worker-process';

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

test('when the worker is killed between the channel create and the database write, then the create completes once after restart', async () => {
  const taskQueue = uniqueName('tq-order-kill');
  // An API whose orders run on a worker process of their own.
  const port = await freePort();
  const api = createApp({
    logger: captureLogger().logger,
    readiness: readinessProbes(stack.database.db, stack.connection),
    auth: stack.auth,
    services: { ...stack.services, taskQueue, requestTimeoutMs: 60_000 },
  });
  const server = await new Promise<Server>((resolve) => {
    const s = api.listen(port, '127.0.0.1', () => resolve(s));
  });
  const first = spawnWorker(taskQueue, workerEnv());
  let second: WorkerProcess | undefined;
  try {
    await first.ready;
    const app = await stack.createApp(['payments']);
    const merchantOrderNo = `M-${randomUUID()}`;
    const pending = signedFetch(`http://127.0.0.1:${port}`, app, 'POST', '/api/v1/pay/unified-order', {
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
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
