import { randomUUID } from 'node:crypto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { freePort } from '../../src/platform/net';
import { serveApi, startTestStack, uniqueName, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { startProductionApi } from '../support/production-api';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';
import { spawnWorker } from '../support/worker-process';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack();
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${stack.baseUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of one series in the exposition text: the line whose labels include all of `labels`. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return 0;
}

describe('GET /metrics on the API', () => {
  test('when a payment is created and paid, then its request and its callback are counted by route and outcome', async () => {
    const createdSeries = {
      method: 'POST',
      route: '/api/v1/pay/unified-order',
      status: '200',
    };
    const before = await scrape();
    await pay.paidOrder();
    const after = await until('the callback counted', async () => {
      const text = await scrape();
      const delivered = { channel: 'sandbox', outcome: 'delivered' };
      return value(text, 'durapay_channel_callbacks_total', delivered) >
        value(before, 'durapay_channel_callbacks_total', delivered)
        ? text
        : undefined;
    });
    const count = 'durapay_http_request_duration_seconds_count';
    expect(value(after, count, createdSeries)).toBe(value(before, count, createdSeries) + 1);
    expect(
      value(after, 'durapay_http_request_duration_seconds_bucket', { ...createdSeries, le: '+Inf' }),
    ).toBe(value(after, count, createdSeries));
    // The route pattern, not the trade number the path carried.
    expect(
      value(after, count, { method: 'GET', route: '/api/v1/pay/query/:tradeNo', status: '200' }),
    ).toBeGreaterThan(0);
    // Node's own process metrics are there too.
    expect(value(after, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  test('when requests are refused by authentication, then each is counted by its error code', async () => {
    const reason = { reason: 'unauthorized' };
    const before = value(await scrape(), 'durapay_http_requests_refused_total', reason);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${stack.baseUrl}/api/v1/pay/query/P1`);
      expect(res.status).toBe(401);
    }
    expect(value(await scrape(), 'durapay_http_requests_refused_total', reason)).toBe(before + 3);
  });

  test('when paths nobody routes are requested, then they share one series and no path becomes a label', async () => {
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    const before = value(await scrape(), 'durapay_http_request_duration_seconds_count', unmatched);
    const paths = Array.from({ length: 5 }, () => `/nowhere/${randomUUID()}`);
    for (const p of paths) expect((await fetch(`${stack.baseUrl}${p}`)).status).toBe(404);
    const text = await scrape();
    expect(value(text, 'durapay_http_request_duration_seconds_count', unmatched)).toBe(before + 5);
    for (const p of paths) expect(text).not.toContain(p);
  });

  test('when a callback names no known channel, then it is counted under channel "unknown"', async () => {
    const series = { channel: 'unknown', outcome: 'unknown_channel' };
    const before = value(await scrape(), 'durapay_channel_callbacks_total', series);
    const code = `nochannel${Date.now()}`;
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/${code}`, { method: 'POST', body: '{}' });
    expect(res.status).toBeLessThan(500);
    const text = await scrape();
    expect(value(text, 'durapay_channel_callbacks_total', series)).toBe(before + 1);
    expect(text).not.toContain(code);
  });
});

describe('GET /metrics on the worker', () => {
  test("when an order is created, paid, notified and refunded, then the worker counts the channel calls, status changes, the delivery, open workflows and the SDK's own series", async () => {
    const taskQueue = uniqueName('tq-metrics');
    const api = await serveApi(stack, { taskQueue });
    const port = await freePort();
    const worker = spawnWorker(taskQueue, {
      DATABASE_URL: stack.database.url,
      DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
      PUBLIC_BASE_URL: stack.baseUrl,
      SANDBOX_SECRET: stack.sandboxSecret,
      DURAPAY_TIME_SCALE: '0.0001',
      WORKER_METRICS_PORT: String(port),
    });
    const scrapeWorker = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return res.text();
    };
    try {
      await worker.ready;
      const own = paymentsClient({ ...stack, baseUrl: api.baseUrl }, app, receiver);
      const before = await scrapeWorker();
      const apiBefore = await (await fetch(`${api.baseUrl}/metrics`)).text();

      const created = await own.paidOrder();
      await until('payment.succeeded delivered', async () =>
        own.notificationsFor(created.trade_no, 'payment.succeeded').length > 0 ? true : undefined,
      );
      const refund = await own.post<{ refund_no: string }>('/api/v1/pay/refund', {
        trade_no: created.trade_no,
        refund_amount: 100,
      });
      expect(refund.code).toBe('success');
      await own.statusIs(created.trade_no, 'refunded');
      // A create the sandbox refuses: a failed channel call.
      const refused = await own.post(
        '/api/v1/pay/unified-order',
        own.orderBody({ extra: { sandbox: { fail_create: true } } }),
      );
      expect([refused.status, refused.code]).toEqual([502, 'channel_create_fail']);

      const after = await until('the refund settled in the metrics', async () => {
        const text = await scrapeWorker();
        const settled = { kind: 'refund', from: 'processing', to: 'success' };
        return value(text, 'durapay_status_transitions_total', settled) >
          value(before, 'durapay_status_transitions_total', settled)
          ? text
          : undefined;
      });
      const moved = (name: string, labels: Record<string, string>) =>
        value(after, name, labels) - value(before, name, labels);

      const create = { channel: 'sandbox', operation: 'payments.create' };
      expect(moved('durapay_channel_call_duration_seconds_count', { ...create, outcome: 'ok' })).toBe(1);
      expect(moved('durapay_channel_call_duration_seconds_count', { ...create, outcome: 'failed' })).toBe(1);
      expect(moved('durapay_channel_call_failures_total', { ...create, kind: 'refused' })).toBe(1);
      expect(
        moved('durapay_channel_call_duration_seconds_count', {
          channel: 'sandbox',
          operation: 'refunds.refund',
          outcome: 'ok',
        }),
      ).toBe(1);
      const transitions: [string, string, string][] = [
        ['order', 'new', 'pending'],
        ['order', 'pending', 'paid'],
        ['order', 'paid', 'refunded'],
        ['refund', 'new', 'processing'],
        ['refund', 'processing', 'success'],
      ];
      for (const [kind, from, to] of transitions) {
        expect([kind, from, to, moved('durapay_status_transitions_total', { kind, from, to })]).toEqual([
          kind,
          from,
          to,
          1,
        ]);
      }
      const delivered = { event: 'payment.succeeded', outcome: 'delivered' };
      expect(moved('durapay_notification_attempts_total', delivered)).toBe(1);
      expect(moved('durapay_notification_attempts_to_finish_count', delivered)).toBe(1);
      expect(moved('durapay_notification_attempts_to_finish_bucket', { ...delivered, le: '1' })).toBe(1);
      // An order left pending is an open workflow, counted once Temporal's visibility lists it
      // (the paid one above ends its run at this stack's time scale, and another file's open
      // orders must not be what this counts).
      const pending = await own.post<{ trade_no: string }>(
        '/api/v1/pay/unified-order',
        own.orderBody({ expire_minutes: 1440 }),
      );
      expect(pending.code).toBe('success');
      const counted = await until('the pending order counted as an open workflow', async () => {
        const text = await scrapeWorker();
        return value(text, 'durapay_open_workflows', { workflow_type: 'orderWorkflow' }) >= 1
          ? text
          : undefined;
      });
      expect(
        value(counted, 'durapay_open_workflows', { workflow_type: 'orderWorkflow' }),
      ).toBeGreaterThanOrEqual(1);
      // The Temporal SDK's own worker series, for this worker's task queue.
      expect(
        value(after, 'temporal_workflow_task_execution_latency_seconds_count', { task_queue: taskQueue }),
      ).toBeGreaterThan(0);
      expect(value(after, 'process_cpu_seconds_total')).toBeGreaterThan(0);

      // The API that took these requests counted them too.
      const apiAfter = await (await fetch(`${api.baseUrl}/metrics`)).text();
      const refundRoute = { method: 'POST', route: '/api/v1/pay/refund', status: '200' };
      expect(
        value(apiAfter, 'durapay_http_request_duration_seconds_count', refundRoute) -
          value(apiBefore, 'durapay_http_request_duration_seconds_count', refundRoute),
      ).toBe(1);
    } finally {
      await worker.stop();
      await api.close();
    }
  });
});

describe('GET /metrics on the API in production (SPEC §9)', () => {
  const productionApi = (env: Record<string, string>) => startProductionApi(stack, env);

  test('when nothing says otherwise, then the API port does not serve /metrics and METRICS_PORT does', async () => {
    const metricsPort = await freePort();
    const api = await productionApi({ METRICS_PORT: String(metricsPort) });
    try {
      const open = await fetch(`${api.baseUrl}/metrics`);
      expect(open.status).toBe(404);
      expect(await envelope(open)).toMatchObject({ code: 'not_found', data: null });
      const apart = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(apart.status).toBe(200);
      expect(apart.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      // The same registry: the refused request on the API port was counted.
      expect(
        value(await apart.text(), 'durapay_http_request_duration_seconds_count', {
          method: 'GET',
          route: 'unmatched',
          status: '404',
        }),
      ).toBe(1);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(404);
    } finally {
      await api.stop();
    }
  });

  test('when METRICS_TOKEN is set, then the API port serves /metrics to that bearer token only', async () => {
    const token = 'metrics-token-of-this-test-0123456789';
    const api = await productionApi({ METRICS_PORT: 'off', METRICS_TOKEN: token });
    try {
      const none = await fetch(`${api.baseUrl}/metrics`);
      expect(none.status).toBe(401);
      expect(await envelope(none)).toMatchObject({ code: 'unauthorized', data: null });
      const wrong = await fetch(`${api.baseUrl}/metrics`, {
        headers: { authorization: `Bearer ${token.replace('0', 'x')}` },
      });
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).not.toContain('durapay_');
      const right = await fetch(`${api.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(right.status).toBe(200);
      expect(
        value(await right.text(), 'durapay_http_requests_refused_total', { reason: 'unauthorized' }),
      ).toBe(2);
    } finally {
      await api.stop();
    }
  });
});
