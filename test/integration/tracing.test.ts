/**
 * Traces (src/platform/tracing.ts): with an in-memory exporter installed in this process, a
 * request to the API (in process), the Temporal client's call, the workflow, its activities and
 * their HTTP calls to the channel and to the merchant make one trace, each span the child of the
 * one that caused it.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { installTracing, type Tracing } from '../../src/platform/tracing';
import { bundleTraces } from '../../src/worker';
import { startTestStack, tracingWorkflowBundle, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { paymentsClient, type Created, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { reaches } from '../support/settled';
import { signedFetch } from '../support/signing';
import { globalState } from '../support/state';
import { parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { sealedDataConverter } from '../../src/platform/data-converter';
import { until } from '../support/wait';

jest.setTimeout(120_000);

let exporter: InMemorySpanExporter;
let tracing: Tracing;
let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let merchantId: string;

beforeAll(async () => {
  exporter = new InMemorySpanExporter();
  tracing = installTracing({ serviceName: 'durapay-test', exporter }, 'test');
  stack = await startTestStack({
    tracing,
    timeScale: 0.001,
    wechatpay: { timeScale: 0.01 },
    alipay: { timeScale: 0.001 },
  });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  // WeChat Pay takes orders for a sub-merchant only.
  merchantId = `MWX-${randomUUID().slice(0, 8)}`;
  expect((await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea' })).code).toBe(
    'success',
  );
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: '1900000109' });
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
  await tracing?.shutdown();
});

const spanId = (s: ReadableSpan) => s.spanContext().spanId;
const traceId = (s: ReadableSpan) => s.spanContext().traceId;

/** The first finished span `pick` accepts, once it has been exported. */
function finished(what: string, pick: (s: ReadableSpan) => boolean): Promise<ReadableSpan> {
  return until(what, async () => exporter.getFinishedSpans().find(pick), 20_000);
}

/** The finished span that is `child`'s parent. */
function parentOf(child: ReadableSpan): Promise<ReadableSpan> {
  return finished(`the parent of ${child.name}`, (s) => spanId(s) === child.parentSpanId);
}

/** A create through the API with a request id of the test's own; its answer and request span. */
async function createOrder(body: Record<string, unknown>) {
  const requestId = `trace-${randomUUID()}`;
  const res = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/pay/unified-order', {
    json: body,
    headers: { 'x-request-id': requestId },
  });
  const answer = await envelope<Created>(res);
  expect(answer.code).toBe('success');
  const request = await finished(
    'the API request span',
    (s) => s.kind === SpanKind.SERVER && s.attributes['durapay.request_id'] === requestId,
  );
  return { created: answer.data!, request };
}

/** The channel's HTTP call of a create, found from the create's request span, with its parents. */
async function channelCreateCall(request: ReadableSpan) {
  const start = await finished(
    'the client span',
    (s) => s.name === 'UpdateWithStartWorkflow:createOrder' && s.parentSpanId === spanId(request),
  );
  const handle = await finished(
    "the workflow's update span",
    (s) => s.name === 'HandleUpdate:createOrder' && s.parentSpanId === spanId(start),
  );
  const scheduled = await finished(
    'the activity scheduled',
    (s) => s.name === 'StartActivity:createOrderAtChannel' && s.parentSpanId === spanId(handle),
  );
  const run = await finished(
    'the activity run',
    (s) => s.name === 'RunActivity:createOrderAtChannel' && s.parentSpanId === spanId(scheduled),
  );
  const http = await finished(
    "the channel's HTTP call",
    (s) => s.kind === SpanKind.CLIENT && s.parentSpanId === spanId(run),
  );
  return { start, handle, scheduled, run, http };
}

/** The create request's span of an order created with `pay.create`. */
const createRequestOf = (tradeNo: string) =>
  finished(
    'the create request span',
    (s) =>
      s.kind === SpanKind.SERVER &&
      s.attributes['http.route'] === '/api/v1/pay/unified-order' &&
      s.attributes['durapay.trade_no'] === tradeNo,
  );

/**
 * No span of the trace carries a header, a body, a URL query or a secret: attribute names and
 * values are checked, against the app's secrets and the channels' shared secret.
 */
function expectNothingSecret(trace: string): void {
  const spans = exporter.getFinishedSpans().filter((s) => traceId(s) === trace);
  expect(spans.length).toBeGreaterThan(5);
  const secrets = [app.secret, app.webhook_secret, stack.sandboxSecret];
  for (const span of spans) {
    for (const [key, value] of Object.entries(span.attributes)) {
      expect(key).not.toMatch(/body|authorization|signature|secret|token|cookie/i);
      // The undici instrumentation's one header: the answer's length.
      if (/header/.test(key)) expect(key).toBe('http.response.header.content-length');
      const text = JSON.stringify(value);
      for (const secret of secrets) expect(text).not.toContain(secret);
      if (/url/.test(key)) expect(text).not.toContain('?');
    }
  }
}

describe('traces', () => {
  test('when an order is created, then one trace holds the request, the workflow update, the activity and the channel call, each the child of the one before', async () => {
    const body = pay.orderBody({ expire_minutes: 1440 });
    const merchantOrderNo = body.merchant_order_no;
    const { created, request } = await createOrder(body);
    const tradeNo = created.trade_no;
    const createTrace = traceId(request);

    expect(request.name).toBe('POST /api/v1/pay/unified-order');
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/v1/pay/unified-order',
      'http.response.status_code': 200,
      'durapay.trade_no': tradeNo,
      'durapay.merchant_order_no': merchantOrderNo,
      'durapay.app_id': app.app_id,
    });

    const { start, handle, scheduled, run, http } = await channelCreateCall(request);
    for (const span of [start, handle, scheduled, run, http]) expect(traceId(span)).toBe(createTrace);
    expect(start.attributes.temporalWorkflowId).toBe(orderWorkflowId(app.app_id, merchantOrderNo));
    // Workflow spans carry the run and, once the workflow has set it, its trade number.
    expect(handle.attributes.workflowType).toBe('orderWorkflow');
    expect(run.attributes).toMatchObject({ 'durapay.trade_no': tradeNo, 'durapay.channel': 'sandbox' });
    expect(http.name).toBe('POST');
    expect(http.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.full': `${stack.baseUrl}/sandbox/v1/orders`,
      'http.response.status_code': 200,
    });
    // The sandbox upstream is mounted in this API: its request continues the trace over HTTP.
    const upstream = await finished(
      "the sandbox upstream's request span",
      (s) => s.kind === SpanKind.SERVER && s.parentSpanId === spanId(http),
    );
    expect(upstream.attributes['http.route']).toBe('/sandbox');
    expectNothingSecret(createTrace);
  });

  test("when the order is paid, then the merchant's notification is posted in a span of the notifying activity, in the create's trace", async () => {
    const { trade_no: tradeNo } = await pay.paidOrder({ expire_minutes: 1440 });
    const createTrace = traceId(await createRequestOf(tradeNo));
    await until('the notification', async () =>
      pay.notificationsFor(tradeNo, 'payment.succeeded').length > 0 ? true : undefined,
    );
    const post = await finished(
      'the notification POST',
      (s) => s.kind === SpanKind.CLIENT && s.attributes['url.full'] === receiver.url,
    );
    // The payment is handled by the order's main loop, which runs in the workflow run's span,
    // itself the child of the create's client span: the order's whole life is one trace.
    expect(traceId(post)).toBe(createTrace);
    expect(post.attributes['http.response.status_code']).toBe(200);
    const run = await parentOf(post);
    expect(run.name).toBe('RunActivity:notifyOrderEvent');
    expect(run.attributes['durapay.trade_no']).toBe(tradeNo);
    const scheduled = await parentOf(run);
    expect(scheduled.name).toBe('StartActivity:notifyOrderEvent');
    expect(traceId(scheduled)).toBe(createTrace);
    expectNothingSecret(createTrace);
  });

  test.each([
    ['wechatpay', 'qr_code', '/wechatpay/v3/pay/partner/transactions/native'],
    ['alipay', 'qr_code', '/alipay/gateway.do'],
  ])(
    'when an order is created on %s, then its channel call is a client span of the activity, without the URL query',
    async (channel, payMethod, urlPath) => {
      const { request } = await createOrder(
        pay.orderBody({
          channel_code: channel,
          pay_method: payMethod,
          expire_minutes: 1440,
          ...(channel === 'wechatpay' ? { merchant_id: merchantId } : {}),
        }),
      );
      const { http, run } = await channelCreateCall(request);
      expect(run.attributes['durapay.channel']).toBe(channel);
      expect(traceId(http)).toBe(traceId(request));
      expect(http.attributes).toMatchObject({
        'http.request.method': 'POST',
        'url.full': `${stack.baseUrl}${urlPath}`,
        'http.response.status_code': 200,
      });
      expect(http.attributes['url.query']).toBeUndefined();
      expectNothingSecret(traceId(request));
    },
  );

  test("when a traced order's history is replayed without tracing, and the committed ones with it, then none fails", async () => {
    const body = pay.orderBody({ expire_minutes: 1440 });
    const { trade_no: tradeNo } = await pay.paidOrder(body);
    await until('the notification', async () =>
      pay.notificationsFor(tradeNo, 'payment.succeeded').length > 0 ? true : undefined,
    );
    const history = await settledHistory(orderWorkflowId(app.app_id, body.merchant_order_no));
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(Object.keys(started?.header?.fields ?? {})).toContain('_tracer-data');
    // Tracing adds headers to commands, never a command: what a traced worker recorded replays
    // on an untraced one, and what untraced workers recorded replays on a traced one.
    const plain = fs.readFileSync(globalState().bundlePath, 'utf8');
    const traced = await tracingWorkflowBundle();
    // What lets a worker refuse a bundle that does not match its tracing (createWorker).
    expect([bundleTraces(plain), bundleTraces(traced)]).toEqual([false, true]);
    const order = [{ workflowId: 'traced-order', history }];
    expect(await replay(plain, order)).toEqual([]);
    expect(await replay(traced, order)).toEqual([]);
    const fixtures = path.join(__dirname, '..', 'fixtures', 'histories');
    const committed = fs
      .readdirSync(fixtures, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.json'))
      .map((f) => ({
        workflowId: `replayed/${f}`,
        history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(fixtures, f), 'utf8'))),
      }));
    // Release 1.0.0's histories: one of each way each workflow type ends (replay.test.ts).
    expect(committed.length).toBeGreaterThanOrEqual(25);
    expect(await replay(traced, committed)).toEqual([]);
    // A replay makes its spans again, but exports none of them.
    const replayed = exporter
      .getFinishedSpans()
      .filter((s) => String(s.attributes.workflowId).startsWith('replayed/'));
    expect(replayed).toEqual([]);
  });
});

/** A workflow's history once nothing of it is pending (support/settled.ts), not after a quiet spell. */
async function settledHistory(workflowId: string) {
  await reaches(stack.client, workflowId, ['closed', 'at rest']);
  return stack.client.workflow.getHandle(workflowId).fetchHistory();
}

/** The replays of `histories` with bundled `code` that failed, with their errors. */
async function replay(
  code: string,
  histories: { workflowId: string; history: temporal.api.history.v1.IHistory }[],
) {
  const failed: { workflowId: string; error: string }[] = [];
  for await (const result of Worker.runReplayHistories(
    {
      workflowBundle: { code },
      sinks: tracing.workflowSinks,
      // This run's histories are sealed with the tests' key, the committed ones with their own.
      dataConverter: sealedDataConverter(
        parsePayloadKeys(
          `${globalState().payloadKeys}\n${fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'histories', 'payload-keys.txt'), 'utf8')}`,
          'the replayed histories keys',
        ),
      ),
    },
    histories,
  )) {
    if (result.error) failed.push({ workflowId: result.workflowId, error: result.error.message });
  }
  return failed;
}
