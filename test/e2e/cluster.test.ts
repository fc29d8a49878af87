/**
 * durapay in its production topology: the Temporal server (built from go.temporal.io/server, not
 * the dev server) on Postgres with four history shards and deploy/temporal/dynamicconfig.yaml,
 * two API processes behind a balancer and two workers. Orders are created, paid, refunded and
 * notified across the processes; then one worker and one API are killed with SIGKILL in the
 * middle of a load, and nothing may be lost: every order the clients created is paid exactly
 * once and notified, and no merchant order number became two orders.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { startCluster, type Cluster } from '../../src/cli/dev/cluster';
import {
  cachedServerBinaries,
  DEPLOY_DYNAMIC_CONFIG,
  validateDynamicConfig,
} from '../../src/cli/dev/temporal-server';
import { loadConfig } from '../../src/config';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { DurapayClient, DurapayError } from '../../src/sdk';
import { WebhookReceiver } from '../../bench/lib/receiver';
import { globalState, durapayBin } from '../support/state';
import { responseConformance } from '../support/openapi-conformance';
import { until } from '../support/wait';

jest.setTimeout(300_000);

const run = promisify(execFile);
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-cluster-'));
let cluster: Cluster;
let stopCluster: (() => Promise<void>) | undefined;
let sdk: DurapayClient;
let receiver: WebhookReceiver;
let temporal: Client;
let connection: Connection;
let pg: PgClient;
let appId: string;

beforeAll(async () => {
  cluster = await startCluster({
    adminUrl: globalState().adminUrl,
    workDir,
    cacheDir: loadConfig().cacheDir,
    apis: 2,
    workers: 2,
    durapayBin: durapayBin(),
    // Whatever started is stopped in afterAll, even if start-up fails or times out half-way.
    onStarting: (stop) => (stopCluster = stop),
    progress: (line) => process.stderr.write(`[cluster] ${line}\n`),
  });
  const { stdout } = await run(
    process.execPath,
    [durapayBin(), 'apps', 'create', '--name', 'cluster-shop', '--scopes', 'payments', '--json'],
    { env: cluster.env, timeout: 60_000 },
  );
  const app = JSON.parse(stdout) as { app_id: string; secret: string; webhook_secret: string };
  appId = app.app_id;
  responseConformance().register(cluster.baseUrl);
  sdk = new DurapayClient({ baseUrl: cluster.baseUrl, appId: app.app_id, secret: app.secret });
  receiver = await new WebhookReceiver(app.webhook_secret).start();
  connection = await Connection.connect({ address: cluster.temporalAddress });
  temporal = new Client({ connection, namespace: cluster.namespace });
  pg = new PgClient({ connectionString: cluster.databaseUrl });
  await pg.connect();
}, 600_000);

afterAll(async () => {
  await pg?.end();
  await connection?.close();
  await receiver?.stop();
  await stopCluster?.();
  fs.rmSync(workDir, { recursive: true, force: true });
});

/**
 * Whether a call ended without an outcome: the connection failed, was cut or timed out before an
 * answer (a process behind the balancer was killed), or durapay answered that it does not know
 * the outcome (502 channel_timeout). Any other answer is the outcome, 500 internal_system
 * included. Duck-typed: fetch's errors come from Node's realm, not the test's.
 */
function unanswered(err: unknown): boolean {
  if (err instanceof DurapayError) return err.code === 'channel_timeout';
  const e = err as { name?: unknown; message?: unknown } | null;
  return (
    e?.name === 'TimeoutError' ||
    (e?.name === 'TypeError' && (e.message === 'fetch failed' || e.message === 'terminated'))
  );
}

/** What a careful client does: a call left without an outcome is sent again, as it was. */
async function withRetries<T>(what: string, call: () => Promise<T>): Promise<{ value: T; retries: number }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return { value: await call(), retries: attempt };
    } catch (err) {
      if (!unanswered(err) || attempt >= 20) throw new Error(`${what}: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function buyerPays(payUrl: string): Promise<void> {
  const { value: res } = await withRetries(`paying at ${payUrl}`, () =>
    fetch(payUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'success' }),
    }).then(async (r) => ({ status: r.status, text: await r.text() })),
  );
  // An answer is the outcome: only a call without one is sent again.
  if (res.status !== 200)
    throw new Error(`paying at ${payUrl} answered ${res.status} ${res.text.slice(0, 200)}`);
}

async function workerIdentities(workflowIds: string[]): Promise<Set<string>> {
  const identities = new Set<string>();
  for (const id of workflowIds) {
    const history = await temporal.workflow.getHandle(id).fetchHistory();
    for (const event of history.events ?? []) {
      const identity = event.workflowTaskCompletedEventAttributes?.identity;
      if (identity) identities.add(identity);
    }
  }
  return identities;
}

test('when the compose deployment reads its dynamic config, then the server knows every key and type', async () => {
  const report = await validateDynamicConfig(
    cachedServerBinaries(loadConfig().cacheDir),
    DEPLOY_DYNAMIC_CONFIG,
  );
  expect(report).toContain('dynamicconfig.yaml');
  expect(report).not.toMatch(/warning|unregistered|failed/i);
});

test('when orders are created, paid, refunded and notified through two APIs and two workers, then each completes once', async () => {
  // Concurrent creates open several connections, which the balancer spreads over the APIs.
  const orders = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      sdk.createOrder({
        merchant_order_no: `cluster-a-${i}`,
        pay_method: 'qr_code',
        amount: 1_000 + i,
        subject: 'cluster order',
        notify_url: receiver.url,
      }),
    ),
  );
  await Promise.all(orders.map((o) => buyerPays(String(o.pay_credential.pay_url))));
  await Promise.all(orders.map((o) => receiver.waitFor('payment.succeeded', o.trade_no, 60_000)));
  const refunds = await Promise.all(
    orders.slice(0, 4).map((o, i) => sdk.refund({ trade_no: o.trade_no, refund_amount: 1_000 + i })),
  );
  await Promise.all(orders.slice(0, 4).map((o) => receiver.waitFor('refund.succeeded', o.trade_no, 60_000)));
  for (const [i, r] of refunds.entries()) {
    expect((await sdk.queryRefund(r.refund_no)).status).toBe('success');
    expect((await sdk.queryOrder(orders[i]!.trade_no)).status).toBe('refunded');
  }
  for (const o of orders.slice(4)) expect((await sdk.queryOrder(o.trade_no)).status).toBe('paid');

  // Both APIs answered creates, and both workers ran the orders' workflow tasks.
  for (const api of cluster.apis) {
    expect(fs.readFileSync(api.logFile, 'utf8')).toContain('"path":"/api/v1/pay/unified-order"');
  }
  const identities = await workerIdentities(orders.map((_, i) => orderWorkflowId(appId, `cluster-a-${i}`)));
  const pids = cluster.workers.map((w) => `${w.child.pid}@`);
  for (const pid of pids) expect([...identities].some((id) => id.startsWith(pid))).toBe(true);
});

test('when one worker and one API are killed in the middle of a load, then no order, payment or notification is lost', async () => {
  const total = 48;
  const callers = 4;
  const created = new Map<string, string>();
  let next = 0;
  let retries = 0;
  let killed = false;
  const killing = (async () => {
    await until(
      'a quarter of the orders created',
      async () => (created.size >= total / 4 ? true : undefined),
      120_000,
    );
    await Promise.all([cluster.workers[0]!.kill(), cluster.apis[0]!.kill()]);
    killed = true;
  })();
  killing.catch(() => undefined); // awaited below; the load's own failure is the one to report
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = next++; i < total; i = next++) {
        const merchantOrderNo = `cluster-b-${i}`;
        const { value: order, retries: r } = await withRetries(`creating ${merchantOrderNo}`, () =>
          sdk.createOrder({
            merchant_order_no: merchantOrderNo,
            pay_method: 'qr_code',
            amount: 2_000 + i,
            subject: 'cluster order under faults',
            notify_url: receiver.url,
          }),
        );
        retries += r;
        created.set(merchantOrderNo, order.trade_no);
        await buyerPays(String(order.pay_credential.pay_url));
      }
    }),
  );
  await killing;
  expect(killed).toBe(true);
  expect(cluster.workers[0]!.alive()).toBe(false);
  expect(cluster.apis[0]!.alive()).toBe(false);

  // Every order the clients were told about is paid, and its merchant was notified.
  expect(created.size).toBe(total);
  await Promise.all(
    [...created.values()].map((tradeNo) => receiver.waitFor('payment.succeeded', tradeNo, 120_000)),
  );
  for (const tradeNo of created.values()) {
    const { value: order } = await withRetries(`querying ${tradeNo}`, () => sdk.queryOrder(tradeNo));
    expect(order.status).toBe('paid');
    // Delivered at least once, and as one event: a repeat carries the same webhook-id.
    const ids = receiver.deliveries.filter((d) => d.type === 'payment.succeeded' && d.tradeNo === tradeNo);
    expect(new Set(ids.map((d) => d.id)).size).toBe(1);
  }
  // The read model holds exactly the orders the clients were told about, a create sent again
  // after a lost answer having been answered with the order it had opened.
  const rows = await pg.query<{ merchant_order_no: string; trade_no: string; status: string }>(
    `SELECT merchant_order_no, trade_no, status FROM orders WHERE merchant_order_no LIKE 'cluster-b-%'`,
  );
  expect(Object.fromEntries(rows.rows.map((r) => [r.merchant_order_no, r.trade_no]))).toEqual(
    Object.fromEntries(created),
  );
  expect(rows.rows.every((r) => r.status === 'paid')).toBe(true);
  process.stderr.write(`[cluster] ${retries} create(s) sent again after a lost answer\n`);

  // The survivors finish the job alone: a new order is created, paid and notified.
  const order = await sdk.createOrder({
    merchant_order_no: 'cluster-c-after',
    pay_method: 'qr_code',
    amount: 3_000,
    subject: 'after the crash',
    notify_url: receiver.url,
  });
  await buyerPays(String(order.pay_credential.pay_url));
  await receiver.waitFor('payment.succeeded', order.trade_no, 60_000);
});
