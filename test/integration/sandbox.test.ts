/**
 * The sandbox channel end to end: the simulator router on a real Postgres, driven only through
 * the SandboxChannel adapter over HTTP (and plain fetch where a buyer's browser would act),
 * with a callback receiver that checks Sandbox-Signature on its own.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { captureRawBody } from '../../src/platform/http/body';
import { SandboxChannel } from '../../src/channels/sandbox';
import { signSandboxPayload } from '../../src/channels/sandbox/signature';
import { createSandboxRouter } from '../../sandbox';
import { ChannelError, type ChannelErrorKind } from '../../src/channels/errors';
import type { CallbackRequest, ChannelEvent, CreatePaymentInput } from '../../src/channels/ports';
import { RecordedBackground } from '../support/background';
import { captureLogger, createTestDatabase, type TestDatabase } from '../support/harness';
import { freePort } from '../support/ports';

jest.setTimeout(60_000);

const SECRET = `sbx_${randomBytes(16).toString('hex')}`;
const REFUND_DELAY_MS = 400;
const CALLBACK_DELAY_MS = 700;

interface Callback {
  path: string;
  headers: Record<string, string>;
  raw: Buffer;
  body: Record<string, unknown>;
  /** Checked by this receiver with its own HMAC, not the code under test. */
  signatureValid: boolean;
}

/** durapay's callback endpoint, played by the test: verifies, records, answers "success". */
class CallbackReceiver {
  readonly received: Callback[] = [];
  private server?: http.Server;
  private origin = '';

  constructor(private readonly secret: string) {}

  url(key: string): string {
    return `${this.origin}/cb/${key}`;
  }

  for(key: string): Callback[] {
    return this.received.filter((c) => c.path === `/cb/${key}`);
  }

  private verify(header: string | undefined, raw: Buffer): boolean {
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
    if (!match) return false;
    const [, t, v1] = match;
    if (Math.abs(Date.now() / 1000 - Number(t)) > 300) return false;
    const expected = createHmac('sha256', this.secret).update(`${t}.`).update(raw).digest();
    return timingSafeEqual(expected, Buffer.from(v1!, 'hex'));
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        this.received.push({
          path: req.url ?? '',
          headers,
          raw,
          body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>,
          signatureValid: this.verify(headers['sandbox-signature'], raw),
        });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('success');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}

async function listen(app: express.Express): Promise<{ server: http.Server; origin: string }> {
  const server = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function channelError(promise: Promise<unknown>): Promise<ChannelError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ChannelError) return err;
    throw err;
  }
  throw new Error('expected the channel call to fail');
}

const CNY = { currency: 'CNY' };

/**
 * The adapter's callback steps as the callback route runs them (verify, decode), answered in one
 * result: the event and the acknowledgement, or why the callback is refused.
 */
async function parseCallback(
  ch: SandboxChannel,
  rawBody: Buffer,
  headers: Record<string, string>,
): Promise<{ ok: true; event: ChannelEvent; ack: string } | { ok: false; reason: string }> {
  const request: CallbackRequest = { rawBody, headers };
  const check = await ch.callbacks.verify(request);
  if (!check.ok) return check;
  try {
    const event = await ch.callbacks.decode(request);
    return { ok: true, event, ack: ch.callbacks.reply({ ok: true }).body };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : 'unparseable callback' };
  }
}

let database: TestDatabase;
let server: http.Server;
let origin: string;
let channel: SandboxChannel;
let receiver: CallbackReceiver;
let background: RecordedBackground;
/** Requests whose caller hung up before the simulator answered them, as `METHOD path`, in order. */
const hungUp: string[] = [];
const extraChannels: SandboxChannel[] = [];
const extraServers: http.Server[] = [];

const logs = captureLogger();
let logsSeen = 0;

function sandboxRouter() {
  return createSandboxRouter({
    db: database.db,
    secret: SECRET,
    publicBaseUrl: origin,
    refundDelayMs: REFUND_DELAY_MS,
    callbackDelayMs: CALLBACK_DELAY_MS,
    logger: logs.logger,
    background,
  });
}

function otherChannel(options: { baseUrl?: string; secret?: string; timeoutMs?: number }): SandboxChannel {
  const c = new SandboxChannel({
    baseUrl: `${origin}/sandbox`,
    secret: SECRET,
    timeoutMs: 3_000,
    ...options,
  });
  extraChannels.push(c);
  return c;
}

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await new CallbackReceiver(SECRET).start();
  background = new RecordedBackground((err) =>
    logs.logger.error('sandbox task failed', { error: String(err) }),
  );
  const app = express();
  ({ server, origin } = await listen(app));
  app.use((req, res, next) => {
    res.on('close', () => {
      if (!res.headersSent) hungUp.push(`${req.method} ${req.originalUrl}`);
    });
    next();
  });
  // Mounted once the port is known, since pay_url must name it.
  app.use('/sandbox', sandboxRouter());
  channel = new SandboxChannel({ baseUrl: `${origin}/sandbox`, secret: SECRET, timeoutMs: 3_000 });
});

// A refusal is an answer, not a fault: nothing the tests do may make the simulator log an error.
afterEach(() => {
  const lines = logs.lines();
  const fresh = lines.slice(logsSeen);
  logsSeen = lines.length;
  expect(fresh.filter((line) => (JSON.parse(line) as { level: string }).level === 'error')).toEqual([]);
});

afterAll(async () => {
  await Promise.all([channel, ...extraChannels].map((c) => c?.close()));
  for (const s of [server, ...extraServers]) {
    s?.closeAllConnections();
    await new Promise((r) => s?.close(r));
  }
  background?.close();
  await receiver?.stop();
  await database?.drop();
});

let counter = 0;
function tradeNo(): string {
  counter += 1;
  return `T${Date.now()}${String(counter).padStart(4, '0')}${randomBytes(2).toString('hex').toUpperCase()}`;
}

function orderInput(overrides: Partial<CreatePaymentInput> = {}): CreatePaymentInput {
  const no = overrides.tradeNo ?? tradeNo();
  return {
    tradeNo: no,
    amount: 1234,
    payMethod: 'qr_code',
    subject: 'Sandbox test order',
    expireAt: new Date(Date.now() + 30 * 60_000),
    callbackUrl: receiver.url(no),
    profitSharing: false,
    ...overrides,
  };
}

function payUrlOf(credential: Record<string, unknown>): string {
  const url = credential.pay_url;
  if (typeof url !== 'string') throw new Error('pay_credential has no pay_url');
  return url;
}

async function buyer(payUrl: string, result: 'success' | 'fail') {
  const res = await fetch(payUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Creates an order and has the buyer pay it; returns what is needed to go on. */
async function paidOrder(overrides: Partial<CreatePaymentInput> = {}) {
  const input = orderInput(overrides);
  const created = await channel.payments.create(CNY, input);
  const paid = await buyer(payUrlOf(created.payCredential), 'success');
  expect(paid).toEqual({ status: 200, body: { trade_no: input.tradeNo, status: 'paid' } });
  return { input, created };
}

describe('orders', () => {
  test('when the same order is created twice, then both answers name one order and its credential', async () => {
    const input = orderInput();
    const first = await channel.payments.create(CNY, input);
    const second = await channel.payments.create(CNY, input);
    expect(first.channelTradeNo).toMatch(/^SBXT[A-Z2-7]{20}$/);
    expect(second).toEqual(first);
    expect(payUrlOf(first.payCredential)).toBe(`${origin}/sandbox/pay/${input.tradeNo}`);
    expect(typeof first.payCredential.qr_code).toBe('string');
    const [rows] = await database.db.sequelize.query(
      'SELECT count(*)::int AS n FROM sandbox_orders WHERE trade_no = :tradeNo',
      { replacements: { tradeNo: input.tradeNo } },
    );
    expect(rows).toEqual([{ n: 1 }]);
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toEqual({ status: 'pending' });
  });

  test('when a trade_no is reused with another amount, then the sandbox refuses it', async () => {
    const input = orderInput();
    await channel.payments.create(CNY, input);
    const err = await channelError(channel.payments.create(CNY, { ...input, amount: 999 }));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toMatch(/already used with different parameters/);
  });

  test('when extra.sandbox.fail_create is set, then the create is refused with the sandbox text and nothing exists', async () => {
    const input = orderInput({ extra: { sandbox: { fail_create: true } } });
    const err = await channelError(channel.payments.create(CNY, input));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toBe('the sandbox refused the order (extra.sandbox.fail_create)');
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toEqual({ status: 'not_found' });
  });

  test('when extra.sandbox has an unknown fault, then the create is refused naming it', async () => {
    const err = await channelError(
      channel.payments.create(CNY, orderInput({ extra: { sandbox: { explode: true } } })),
    );
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toMatch(/explode/);
  });

  test('when nothing listens at the base URL, then the call fails as unreachable', async () => {
    const dead = otherChannel({ baseUrl: `http://127.0.0.1:${await freePort()}/sandbox` });
    const err = await channelError(dead.payments.create(CNY, orderInput()));
    expect(err.kind).toBe<ChannelErrorKind>('unreachable');
  });

  test('when the sandbox answers later than timeoutMs, then the call fails as timeout, hanging up before the answer, and the order exists anyway', async () => {
    const impatient = otherChannel({ timeoutMs: 300 });
    const input = orderInput({ extra: { sandbox: { latency_ms: 1_500 } } });
    const earlier = hungUp.length;
    const err = await channelError(impatient.payments.create(CNY, input));
    expect(err.kind).toBe<ChannelErrorKind>('timeout');
    // The order of events, not their times: the caller gave up while the answer was held back.
    await waitFor('the hang-up', () => hungUp.slice(earlier).includes('POST /sandbox/v1/orders'));
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toEqual({ status: 'pending' });
  });

  test('when the request is signed with another secret, then the sandbox refuses it', async () => {
    const impostor = otherChannel({ secret: 'not-the-sandbox-secret' });
    const err = await channelError(impostor.payments.create(CNY, orderInput()));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toBe('Sandbox-Signature does not match');
  });

  test('when a /v1 request carries no signature, then it gets 401 JSON', async () => {
    const res = await fetch(`${origin}/sandbox/v1/orders/ANY`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'missing Sandbox-Signature', code: 'unauthorized' });
  });

  test('when the buyer opens the pay_url, then the checkout page shows subject, amount in yuan, Pay and Fail', async () => {
    const input = orderInput({ subject: 'Tea <b>& cake</b>', amount: 1205 });
    const { payCredential } = await channel.payments.create(CNY, input);
    const res = await fetch(payUrlOf(payCredential));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('Tea &#60;b&#62;&#38; cake&#60;/b&#62;');
    expect(html).not.toContain('<b>& cake</b>');
    expect(html).toContain('¥12.05');
    expect(html).toMatch(/<button[^>]*data-result="success"[^>]*>Pay<\/button>/);
    expect(html).toMatch(/<button[^>]*data-result="fail"[^>]*>Fail<\/button>/);
    expect(html).toContain('fetch(window.location.pathname');
  });

  test('when the buyer pays, then query says paid and one signed callback arrives that parseCallback accepts', async () => {
    const { input, created } = await paidOrder();
    const state = await channel.payments.query({}, input.tradeNo);
    expect(state).toEqual({
      status: 'paid',
      channelTradeNo: created.channelTradeNo,
      paidAt: expect.any(Date),
      amount: 1234,
    });

    await background.idle(input.tradeNo);
    // Sent at once: nothing was scheduled for later.
    expect(background.delaysFor(input.tradeNo)).toEqual([]);
    expect(receiver.for(input.tradeNo)).toHaveLength(1);
    const [callback] = receiver.for(input.tradeNo);
    expect(callback!.signatureValid).toBe(true);
    expect(callback!.headers['content-type']).toBe('application/json');
    expect(callback!.body).toEqual({
      event_id: `evt_${created.channelTradeNo}_paid`,
      type: 'payment.paid',
      trade_no: input.tradeNo,
      channel_trade_no: created.channelTradeNo,
      amount: 1234,
      currency: 'CNY',
      paid_at: state.status === 'paid' ? state.paidAt.toISOString() : 'unexpected',
    });

    const parsed = await parseCallback(channel, callback!.raw, callback!.headers);
    expect(parsed).toEqual({
      ok: true,
      ack: 'success',
      event: {
        kind: 'payment',
        eventId: `evt_${created.channelTradeNo}_paid`,
        tradeNo: input.tradeNo,
        status: 'paid',
        channelTradeNo: created.channelTradeNo,
        amount: 1234,
        currency: 'CNY',
        paidAt: state.status === 'paid' ? state.paidAt : null,
      },
    });
  });

  test('when the buyer pays twice, then the second answer is paid and no second callback is sent', async () => {
    const { input, created } = await paidOrder();
    await expect(buyer(payUrlOf(created.payCredential), 'success')).resolves.toEqual({
      status: 200,
      body: { trade_no: input.tradeNo, status: 'paid' },
    });
    await background.idle(input.tradeNo);
    expect(receiver.for(input.tradeNo)).toHaveLength(1);
  });

  test('when the callback is steered to drop, then none arrives but query says paid', async () => {
    const { input } = await paidOrder({ extra: { sandbox: { callback: 'drop' } } });
    await background.idle(input.tradeNo);
    expect(receiver.for(input.tradeNo)).toHaveLength(0);
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toMatchObject({ status: 'paid' });
  });

  test('when the callback is steered to duplicate, then two identical callbacks arrive with one event_id', async () => {
    const { input } = await paidOrder({ extra: { sandbox: { callback: 'duplicate' } } });
    await background.idle(input.tradeNo);
    expect(receiver.for(input.tradeNo)).toHaveLength(2);
    const [a, b] = receiver.for(input.tradeNo);
    expect(a!.raw.equals(b!.raw)).toBe(true);
    expect(a!.signatureValid && b!.signatureValid).toBe(true);
    const [ea, eb] = [
      await parseCallback(channel, a!.raw, a!.headers),
      await parseCallback(channel, b!.raw, b!.headers),
    ];
    expect(ea.ok && eb.ok && ea.event.eventId === eb.event.eventId).toBe(true);
  });

  test('when the callback is steered to delay, then it is scheduled after the delay and then arrives', async () => {
    const { input } = await paidOrder({ extra: { sandbox: { callback: 'delay' } } });
    expect(background.delaysFor(input.tradeNo)).toEqual([CALLBACK_DELAY_MS]);
    await background.idle(input.tradeNo);
    expect(receiver.for(input.tradeNo)).toHaveLength(1);
    expect(receiver.for(input.tradeNo)[0]!.signatureValid).toBe(true);
  });

  test('when the buyer chooses Fail, then the order stays pending, nothing is sent, and paying later still works', async () => {
    const input = orderInput();
    const { payCredential } = await channel.payments.create(CNY, input);
    await expect(buyer(payUrlOf(payCredential), 'fail')).resolves.toEqual({
      status: 200,
      body: { trade_no: input.tradeNo, status: 'pending' },
    });
    await background.idle(input.tradeNo);
    expect(receiver.for(input.tradeNo)).toHaveLength(0);
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toEqual({ status: 'pending' });
    await expect(buyer(payUrlOf(payCredential), 'success')).resolves.toMatchObject({
      body: { status: 'paid' },
    });
  });

  test('when the buyer sends an unknown result, then 400 and the order stays pending', async () => {
    const input = orderInput();
    const { payCredential } = await channel.payments.create(CNY, input);
    const res = await fetch(payUrlOf(payCredential), { method: 'POST', body: '{"result":"maybe"}' });
    expect(res.status).toBe(400);
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toEqual({ status: 'pending' });
  });

  test('when a pending order is closed, then it is closed and the buyer can no longer pay (409)', async () => {
    const input = orderInput();
    const { payCredential } = await channel.payments.create(CNY, input);
    await expect(channel.payments.close({}, input.tradeNo)).resolves.toEqual({ status: 'closed' });
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toEqual({ status: 'closed' });
    await expect(channel.payments.close({}, input.tradeNo)).resolves.toEqual({ status: 'closed' });
    const paid = await buyer(payUrlOf(payCredential), 'success');
    expect(paid.status).toBe(409);
    expect(paid.body.error).toMatch(/closed/);
  });

  test('when a paid order is closed, then the answer is paid and it stays paid', async () => {
    const { input, created } = await paidOrder();
    await expect(channel.payments.close({}, input.tradeNo)).resolves.toMatchObject({
      status: 'paid',
      channelTradeNo: created.channelTradeNo,
      amount: 1234,
    });
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toMatchObject({ status: 'paid' });
  });

  test('when a pending order passes its expire_at, then it reads closed and cannot be paid', async () => {
    const input = orderInput({ expireAt: new Date(Date.now() - 1_000) });
    const { payCredential } = await channel.payments.create(CNY, input);
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toEqual({ status: 'closed' });
    expect((await buyer(payUrlOf(payCredential), 'success')).status).toBe(409);
  });

  test('when an unknown order is queried or closed, then the state is not_found', async () => {
    await expect(channel.payments.query({}, 'NOSUCHORDER')).resolves.toEqual({ status: 'not_found' });
    await expect(channel.payments.close({}, 'NOSUCHORDER')).resolves.toEqual({ status: 'not_found' });
  });
});

describe('refunds', () => {
  function refundInput(
    tradeNoValue: string,
    amount: number,
    extra: { reason?: string; refundNo?: string } = {},
  ) {
    const refundNo = extra.refundNo ?? `R${tradeNo()}`;
    return {
      tradeNo: tradeNoValue,
      refundNo,
      amount,
      totalAmount: 1234,
      callbackUrl: receiver.url(refundNo),
      ...(extra.reason === undefined ? {} : { reason: extra.reason }),
    };
  }

  test('when a paid order is refunded, then it is processing, then success with a signed callback', async () => {
    const { input } = await paidOrder();
    const refund = refundInput(input.tradeNo, 500, { reason: 'customer asked' });
    const accepted = await channel.refunds.refund({}, refund);
    expect(accepted).toEqual({ status: 'processing', channelRefundNo: expect.stringMatching(/^SBXR/) });
    await expect(channel.refunds.query({}, refund)).resolves.toEqual(accepted);

    const [callback] = await waitFor('the refund callback', () => {
      const got = receiver.for(refund.refundNo);
      return got.length > 0 && got;
    });
    expect(callback!.signatureValid).toBe(true);
    const parsed = await parseCallback(channel, callback!.raw, callback!.headers);
    expect(parsed).toEqual({
      ok: true,
      ack: 'success',
      event: {
        kind: 'refund',
        eventId: expect.any(String),
        tradeNo: input.tradeNo,
        refundNo: refund.refundNo,
        status: 'success',
        channelRefundNo: accepted.status === 'processing' ? accepted.channelRefundNo : null,
        amount: 500,
        refundedAt: expect.any(Date),
      },
    });
    await expect(channel.refunds.query({}, refund)).resolves.toEqual({
      status: 'success',
      channelRefundNo: expect.stringMatching(/^SBXR/),
      refundedAt: expect.any(Date),
    });
    await background.idle(input.tradeNo);
    expect(receiver.for(refund.refundNo)).toHaveLength(1);
  });

  test('when the same refund_no is sent again, then the same refund is answered and nothing more is taken', async () => {
    const { input } = await paidOrder();
    const refund = refundInput(input.tradeNo, 1_000);
    const first = await channel.refunds.refund({}, refund);
    const again = await channel.refunds.refund({}, refund);
    expect(again.status === 'not_found' ? null : again.channelRefundNo).toBe(
      first.status === 'not_found' ? 'unexpected' : first.channelRefundNo,
    );
    // 234 is left only if the repeat took nothing.
    await expect(channel.refunds.refund({}, refundInput(input.tradeNo, 234))).resolves.toMatchObject({
      status: 'processing',
    });
  });

  test('when the reason contains [sandbox:fail], then the refund fails with a callback and its amount is released', async () => {
    const { input } = await paidOrder();
    const refund = refundInput(input.tradeNo, 1234, { reason: 'test [sandbox:fail]' });
    await expect(channel.refunds.refund({}, refund)).resolves.toMatchObject({ status: 'processing' });
    const [callback] = await waitFor('the refund callback', () => {
      const got = receiver.for(refund.refundNo);
      return got.length > 0 && got;
    });
    expect(callback!.body).toMatchObject({
      type: 'refund.failed',
      refund_no: refund.refundNo,
      refunded_at: null,
    });
    const parsed = await parseCallback(channel, callback!.raw, callback!.headers);
    expect(parsed.ok && parsed.event.kind === 'refund' && parsed.event.status).toBe('failed');
    await expect(channel.refunds.query({}, refund)).resolves.toEqual({
      status: 'failed',
      channelRefundNo: expect.any(String),
      reason: expect.stringContaining('[sandbox:fail]'),
    });
    await expect(channel.refunds.refund({}, refundInput(input.tradeNo, 1234))).resolves.toMatchObject({
      status: 'processing',
    });
  });

  test('when a refund exceeds what is left, then it is refused; exactly what is left is accepted', async () => {
    const { input } = await paidOrder();
    await channel.refunds.refund({}, refundInput(input.tradeNo, 1_000));
    const err = await channelError(channel.refunds.refund({}, refundInput(input.tradeNo, 235)));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toBe('refund amount 235 exceeds the 234 left to refund');
    await expect(channel.refunds.refund({}, refundInput(input.tradeNo, 234))).resolves.toMatchObject({
      status: 'processing',
    });
  });

  test('when concurrent refunds together exceed the order, then only as many as fit are accepted', async () => {
    const { input } = await paidOrder();
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => channel.refunds.refund({}, refundInput(input.tradeNo, 400))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused.map((r) => (r.reason as ChannelError).kind)).toEqual(['refused', 'refused', 'refused']);
  });

  test('when an unpaid order is refunded, then it is refused', async () => {
    const input = orderInput();
    await channel.payments.create(CNY, input);
    const err = await channelError(channel.refunds.refund({}, refundInput(input.tradeNo, 100)));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toMatch(/pending, not paid/);
  });

  test('when the reason contains [sandbox:abnormal], then the refund ends abnormal with a refund.abnormal callback, and its amount stays taken', async () => {
    const { input } = await paidOrder();
    const refund = refundInput(input.tradeNo, 1000, { reason: 'card closed [sandbox:abnormal]' });
    await channel.refunds.refund({}, refund);
    const [callback] = await waitFor('the refund callback', () => {
      const got = receiver.for(refund.refundNo);
      return got.length > 0 && got;
    });
    expect(callback!.body).toMatchObject({
      type: 'refund.abnormal',
      refund_no: refund.refundNo,
      refunded_at: null,
    });
    const parsed = await parseCallback(channel, callback!.raw, callback!.headers);
    expect(parsed.ok && parsed.event).toMatchObject({
      kind: 'refund',
      status: 'abnormal',
      amount: 1000,
      reason: expect.stringContaining('[sandbox:abnormal]'),
    });
    await expect(channel.refunds.query({}, refund)).resolves.toEqual({
      status: 'abnormal',
      channelRefundNo: expect.stringMatching(/^SBXR/),
      reason: expect.stringContaining('bank card'),
    });
    // The money left the order: only 234 can still be refunded.
    const err = await channelError(channel.refunds.refund({}, refundInput(input.tradeNo, 235)));
    expect(err.message).toBe('refund amount 235 exceeds the 234 left to refund');
  });

  test('when an abnormal refund is applied for with a bank card, then it is processing, then success with a refund.success callback; asking again is answered the same', async () => {
    const { input } = await paidOrder();
    const refund = refundInput(input.tradeNo, 500, { reason: '[sandbox:abnormal]' });
    const started = await channel.refunds.refund({}, refund);
    const channelRefundNo = started.status === 'processing' ? started.channelRefundNo! : '';
    // Abnormal once its callback was sent.
    await waitFor('the abnormal callback', () => receiver.for(refund.refundNo).length > 0);
    const card = {
      ...refund,
      channelRefundNo,
      method: 'user_bank_card' as const,
      bankType: 'ICBC_DEBIT',
      bankAccount: '6222021234567890123',
      realName: 'Li Si',
    };
    await expect(channel.refunds.applyAbnormal!({}, card)).resolves.toEqual({
      status: 'processing',
      channelRefundNo,
    });
    const callbacks = await waitFor('the success callback', () => {
      const got = receiver.for(refund.refundNo);
      return got.length > 1 && got;
    });
    expect(callbacks.map((c) => c.body.type)).toEqual(['refund.abnormal', 'refund.success']);
    await expect(channel.refunds.query({}, refund)).resolves.toMatchObject({ status: 'success' });
    await expect(channel.refunds.applyAbnormal!({}, card)).resolves.toMatchObject({ status: 'success' });
    // No card number or name is kept, nor logged.
    const [rows] = await database.db.sequelize.query(
      'SELECT abnormal_method FROM sandbox_refunds WHERE refund_no = :no',
      { replacements: { no: refund.refundNo } },
    );
    expect(rows).toEqual([{ abnormal_method: 'user_bank_card' }]);
    expect(logs.lines().join('\n')).not.toMatch(/6222021234567890123|Li Si/);
  });

  test('when a refund that is not abnormal is applied for, or a card lacks its holder, then the sandbox refuses', async () => {
    const { input } = await paidOrder();
    const refund = refundInput(input.tradeNo, 100);
    await channel.refunds.refund({}, refund);
    const notAbnormal = await channelError(
      channel.refunds.applyAbnormal!({}, { ...refund, channelRefundNo: 'x', method: 'merchant_bank_card' }),
    );
    expect(notAbnormal).toMatchObject({ kind: 'refused', message: expect.stringContaining('not abnormal') });
    const noName = await channelError(
      channel.refunds.applyAbnormal!(
        {},
        {
          ...refund,
          channelRefundNo: 'x',
          method: 'user_bank_card',
          bankType: 'ICBC_DEBIT',
          bankAccount: '6222',
        },
      ),
    );
    expect(noName).toMatchObject({ kind: 'refused', message: expect.stringContaining('real_name') });
  });

  test('when an unknown refund is queried, then the state is not_found', async () => {
    await expect(
      channel.refunds.query({}, { tradeNo: 'TNOSUCHORDER', refundNo: 'RNOSUCHREFUND' }),
    ).resolves.toEqual({ status: 'not_found' });
  });
});

describe('profit sharing', () => {
  test('when a paid profit-sharing order is shared, then it is finished, once per share_no', async () => {
    const { input } = await paidOrder({ profitSharing: true });
    const share = {
      tradeNo: input.tradeNo,
      shareNo: `S${tradeNo()}`,
      receivers: [
        { type: 'merchant', account: 'acct-1', name: 'First', amount: 200 },
        { type: 'merchant', account: 'acct-2', amount: 100 },
      ],
    };
    await expect(channel.profitSharing.share({ channelTradeNo: null }, share)).resolves.toEqual({
      status: 'finished',
    });
    await expect(channel.profitSharing.share({ channelTradeNo: null }, share)).resolves.toEqual({
      status: 'finished',
    });
    const [rows] = await database.db.sequelize.query(
      'SELECT amount::int AS amount FROM sandbox_profit_shares WHERE trade_no = :tradeNo',
      { replacements: { tradeNo: input.tradeNo } },
    );
    expect(rows).toEqual([{ amount: 300 }]);
    const err = await channelError(
      channel.profitSharing.share(
        { channelTradeNo: null },
        {
          ...share,
          shareNo: `S${tradeNo()}`,
          receivers: [{ type: 'm', account: 'a', amount: 935 }],
        },
      ),
    );
    expect(err.kind).toBe<ChannelErrorKind>('refused');
  });

  test('when the order was created without profit sharing, then a share is refused', async () => {
    const { input } = await paidOrder();
    const err = await channelError(
      channel.profitSharing.share(
        { channelTradeNo: null },
        {
          tradeNo: input.tradeNo,
          shareNo: `S${tradeNo()}`,
          receivers: [{ type: 'merchant', account: 'acct-1', amount: 1 }],
        },
      ),
    );
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toMatch(/profit_sharing/);
  });
});

describe('share returns and unfreezes', () => {
  const merchantReceiver = { type: 'merchant', account: 'acct-m' };
  const personalReceiver = { type: 'PERSONAL_OPENID', account: 'oPerson' };

  /** A paid profit-sharing order of 1234 whose share gave the merchant 200 and the person 100. */
  async function sharedOrder() {
    const { input } = await paidOrder({ profitSharing: true });
    const shareNo = `S${tradeNo()}`;
    await channel.profitSharing.share(
      { channelTradeNo: null },
      {
        tradeNo: input.tradeNo,
        shareNo,
        receivers: [
          { ...merchantReceiver, amount: 200 },
          { ...personalReceiver, amount: 100 },
        ],
      },
    );
    return { tradeNo: input.tradeNo, shareNo };
  }

  const returnsOf = async (shareNo: string) =>
    (
      await database.db.sequelize.query(
        'SELECT return_no, receiver_account, amount::int AS amount FROM sandbox_share_returns WHERE share_no = :shareNo ORDER BY created_at',
        { replacements: { shareNo } },
      )
    )[0];

  test('when asked which receivers can give a share back, then a person’s wallet cannot, as at WeChat Pay', () => {
    const ps = channel.profitSharing;
    expect(ps.returns).toBe('separate');
    expect(ps.returnable!(merchantReceiver)).toBe(true);
    expect(ps.returnable!(personalReceiver)).toBe(false);
    expect(ps.returnable!({ type: 'personal_sub_openid', account: 'o' })).toBe(false);
  });

  test('when part of a share is returned, then it succeeds at once, once per return_no, and never beyond what the receiver got', async () => {
    const { tradeNo: no, shareNo } = await sharedOrder();
    const ps = channel.profitSharing;
    const input = {
      tradeNo: no,
      shareNo,
      returnNo: `B${tradeNo()}`,
      receiver: merchantReceiver,
      amount: 150,
      description: 'refund',
    };
    const first = await ps.returnShare!({ channelTradeNo: null }, input);
    expect(first).toEqual({ status: 'success', channelReturnNo: expect.stringMatching(/^SBXB/) });
    await expect(ps.returnShare!({ channelTradeNo: null }, input)).resolves.toEqual(first);
    await expect(ps.queryReturn!({ channelTradeNo: null }, input)).resolves.toEqual(first);
    await expect(
      ps.returnShare!({ channelTradeNo: null }, { ...input, returnNo: `B${tradeNo()}`, amount: 51 }),
    ).resolves.toEqual({
      status: 'failed',
      reason: 'return of 51 exceeds the 50 of 200 acct-m has left to return',
    });
    await expect(
      ps.returnShare!({ channelTradeNo: null }, { ...input, returnNo: `B${tradeNo()}`, amount: 50 }),
    ).resolves.toMatchObject({ status: 'success' });
    expect((await returnsOf(shareNo)).map((r) => (r as { amount: number }).amount)).toEqual([150, 50]);
    await expect(
      ps.queryReturn!({ channelTradeNo: null }, { ...input, returnNo: 'BNOSUCHRETURN' }),
    ).resolves.toEqual({ status: 'not_found' });
  });

  test('when concurrent returns together exceed the receiver’s share, then only as many as fit succeed', async () => {
    const { tradeNo: no, shareNo } = await sharedOrder();
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        channel.profitSharing.returnShare!(
          { channelTradeNo: null },
          {
            tradeNo: no,
            shareNo,
            returnNo: `B${tradeNo()}`,
            receiver: merchantReceiver,
            amount: 60,
            description: 'r',
          },
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'success')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'failed')).toHaveLength(2);
    expect(await returnsOf(shareNo)).toHaveLength(3);
  });

  test('when a return is asked of a person’s wallet or of a receiver steered to refuse, then it fails and nothing is returned', async () => {
    const { tradeNo: no, shareNo } = await sharedOrder();
    const ask = (receiver: { type: string; account: string }) =>
      channel.profitSharing.returnShare!(
        { channelTradeNo: null },
        { tradeNo: no, shareNo, returnNo: `B${tradeNo()}`, receiver, amount: 10, description: 'r' },
      );
    await expect(ask(personalReceiver)).resolves.toEqual({
      status: 'failed',
      reason: expect.stringContaining('merchant receivers only'),
    });
    await expect(ask({ type: 'merchant', account: 'acct [sandbox:refuse-return]' })).resolves.toEqual({
      status: 'failed',
      reason: expect.stringContaining('[sandbox:refuse-return]'),
    });
    await expect(ask({ type: 'merchant', account: 'acct-never-shared' })).resolves.toMatchObject({
      status: 'failed',
    });
    expect(await returnsOf(shareNo)).toEqual([]);
  });

  test('when a frozen order is unfrozen, then it is finished once per order, and nothing can be shared after', async () => {
    const { input } = await paidOrder({ profitSharing: true });
    const unfreeze = { tradeNo: input.tradeNo, unfreezeNo: `U${tradeNo()}`, description: 'refunded in full' };
    const ps = channel.profitSharing;
    await expect(ps.unfreeze!({ channelTradeNo: null }, unfreeze)).resolves.toEqual({ status: 'finished' });
    await expect(ps.unfreeze!({ channelTradeNo: null }, unfreeze)).resolves.toEqual({ status: 'finished' });
    const other = await channelError(
      ps.unfreeze!({ channelTradeNo: null }, { ...unfreeze, unfreezeNo: `U${tradeNo()}` }),
    );
    expect(other.message).toMatch(/unfrozen already/);
    const [rows] = await database.db.sequelize.query(
      'SELECT unfreeze_no, description FROM sandbox_unfreezes WHERE trade_no = :tradeNo',
      { replacements: { tradeNo: input.tradeNo } },
    );
    expect(rows).toEqual([{ unfreeze_no: unfreeze.unfreezeNo, description: 'refunded in full' }]);
    const late = await channelError(
      ps.share(
        { channelTradeNo: null },
        { tradeNo: input.tradeNo, shareNo: `S${tradeNo()}`, receivers: [{ ...merchantReceiver, amount: 1 }] },
      ),
    );
    expect(late.message).toMatch(/unfrozen/);
  });

  test('when an order that froze nothing is unfrozen, then it is refused', async () => {
    const { input } = await paidOrder();
    const err = await channelError(
      channel.profitSharing.unfreeze!(
        { channelTradeNo: null },
        { tradeNo: input.tradeNo, unfreezeNo: `U${tradeNo()}`, description: 'x' },
      ),
    );
    expect(err).toMatchObject({ kind: 'refused', message: expect.stringMatching(/profit_sharing/) });
  });

  test('when an order was shared, then refunds are still taken up to its whole amount: the channel does not guard the share', async () => {
    const { tradeNo: no } = await sharedOrder();
    await expect(
      channel.refunds.refund(
        {},
        {
          tradeNo: no,
          refundNo: `R${tradeNo()}`,
          amount: 1234,
          totalAmount: 1234,
          callbackUrl: receiver.url('x'),
        },
      ),
    ).resolves.toMatchObject({ status: 'processing' });
  });
});

describe('onboarding', () => {
  const merchant = { merchantId: 'm-1', merchantName: 'Tea House', licenseNo: 'L1', bankAccount: null };

  test('when a file is uploaded, then a file_id is returned and its size and SHA-256 are recorded, not its content', async () => {
    const content = randomBytes(2_000);
    const { fileId } = await channel.onboarding.uploadFile(
      {},
      { fileName: 'license.png', mediaType: 'image/png', content },
    );
    expect(fileId).toMatch(/^sbx_file_/);
    const [rows] = await database.db.sequelize.query('SELECT * FROM sandbox_files WHERE file_id = :fileId', {
      replacements: { fileId },
    });
    expect(rows).toEqual([
      {
        file_id: fileId,
        file_name: 'license.png',
        media_type: 'image/png',
        size: 2_000,
        sha256: createHash('sha256').update(content).digest('hex'),
        created_at: expect.any(Date),
      },
    ]);
  });

  test('when a file larger than 1 MiB is uploaded, then it is accepted (the router reads its own body)', async () => {
    const content = randomBytes(3 * 1024 * 1024);
    await expect(
      channel.onboarding.uploadFile({}, { fileName: 'scan.pdf', mediaType: 'application/pdf', content }),
    ).resolves.toEqual({ fileId: expect.stringMatching(/^sbx_file_/) });
  });

  test('when a file has an unsupported media type, then the upload is refused', async () => {
    const err = await channelError(
      channel.onboarding.uploadFile(
        {},
        { fileName: 'a.gif', mediaType: 'image/gif', content: Buffer.from('GIF89a') },
      ),
    );
    expect(err.kind).toBe<ChannelErrorKind>('refused');
  });

  test('when an application is submitted, then it is submitted, then auditing, then finished with a sub_merchant_no', async () => {
    const applicationId = `app-${tradeNo()}`;
    const submitted = await channel.onboarding.submit(
      {},
      { applicationId, merchant, submitData: { note: 'x' } },
    );
    expect(submitted).toMatchObject({
      status: 'submitted',
      subMerchantNo: null,
      signUrl: null,
      rejectReason: null,
    });
    expect(submitted.channelApplicationNo).toMatch(/^SBXA/);
    // A repeat submits nothing and advances nothing.
    await expect(channel.onboarding.submit({}, { applicationId, merchant, submitData: {} })).resolves.toEqual(
      submitted,
    );

    await expect(channel.onboarding.query({}, applicationId)).resolves.toMatchObject({ status: 'auditing' });
    const finished = await channel.onboarding.query({}, applicationId);
    expect(finished).toMatchObject({
      status: 'finished',
      channelApplicationNo: submitted.channelApplicationNo,
      subMerchantNo: expect.stringMatching(/^SBXM/),
    });
    await expect(channel.onboarding.query({}, applicationId)).resolves.toEqual(finished);
  });

  test('when sandbox_outcome is reject, then the audit ends rejected with a reason', async () => {
    const applicationId = `app-${tradeNo()}`;
    await channel.onboarding.submit(
      {},
      { applicationId, merchant, submitData: { sandbox_outcome: 'reject' } },
    );
    await expect(channel.onboarding.query({}, applicationId)).resolves.toMatchObject({ status: 'auditing' });
    const rejected = await channel.onboarding.query({}, applicationId);
    expect(rejected).toMatchObject({ status: 'rejected', subMerchantNo: null });
    expect(rejected.rejectReason).toMatch(/reject/);
  });

  test('when sandbox_outcome is sign, then the audit passes to_be_signed with a sign_url, then finished', async () => {
    const applicationId = `app-${tradeNo()}`;
    await channel.onboarding.submit({}, { applicationId, merchant, submitData: { sandbox_outcome: 'sign' } });
    await expect(channel.onboarding.query({}, applicationId)).resolves.toMatchObject({ status: 'auditing' });
    const toSign = await channel.onboarding.query({}, applicationId);
    expect(toSign).toMatchObject({ status: 'to_be_signed', subMerchantNo: null });
    expect(toSign.signUrl).toBe(`${origin}/sandbox/sign/${toSign.channelApplicationNo}`);
    const page = await fetch(toSign.signUrl!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Tea House');
    await expect(channel.onboarding.query({}, applicationId)).resolves.toMatchObject({
      status: 'finished',
      subMerchantNo: expect.stringMatching(/^SBXM/),
    });
  });

  test('when an unknown application is queried, then it is refused', async () => {
    const err = await channelError(channel.onboarding.query({}, 'no-such-application'));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
  });
});

describe('parseCallback', () => {
  async function realCallback() {
    const { input } = await paidOrder();
    const [callback] = await waitFor('the payment callback', () => {
      const got = receiver.for(input.tradeNo);
      return got.length > 0 && got;
    });
    return callback!;
  }

  test('when a callback body is tampered with, then it is refused', async () => {
    const callback = await realCallback();
    const tampered = Buffer.from(callback.raw.toString('utf8').replace('"amount":1234', '"amount":1'));
    expect(tampered.equals(callback.raw)).toBe(false);
    expect(await parseCallback(channel, tampered, callback.headers)).toEqual({
      ok: false,
      reason: 'Sandbox-Signature does not match',
    });
  });

  test('when the channel holds another secret, then a genuine callback is refused', async () => {
    const callback = await realCallback();
    const other = otherChannel({ secret: 'another-secret' });
    expect(await parseCallback(other, callback.raw, callback.headers)).toMatchObject({ ok: false });
  });

  test('when the signature is more than 300 s old, then the callback is refused as stale', async () => {
    const callback = await realCallback();
    const stale = signSandboxPayload(SECRET, callback.raw, Math.floor(Date.now() / 1000) - 301);
    expect(await parseCallback(channel, callback.raw, { 'sandbox-signature': stale })).toEqual({
      ok: false,
      reason: 'Sandbox-Signature timestamp outside the tolerance',
    });
  });

  test('when the header is missing, then the callback is refused', async () => {
    expect(await parseCallback(channel, Buffer.from('{}'), {})).toEqual({
      ok: false,
      reason: 'missing Sandbox-Signature',
    });
  });

  test('when a correctly signed body is not a known event, then it is refused as unparseable', async () => {
    const raw = Buffer.from(JSON.stringify({ event_id: 'e', type: 'payment.lost' }));
    const result = await parseCallback(channel, raw, {
      'Sandbox-Signature': signSandboxPayload(SECRET, raw),
    });
    expect(result.ok).toBe(false);
  });
});

describe('mounted behind captureRawBody', () => {
  test('when the host app has already read the body, then signed calls still verify', async () => {
    const app = express();
    app.use(captureRawBody());
    const mounted = await listen(app);
    extraServers.push(mounted.server);
    app.use(
      '/sandbox',
      createSandboxRouter({
        db: database.db,
        secret: SECRET,
        publicBaseUrl: mounted.origin,
        refundDelayMs: REFUND_DELAY_MS,
        logger: logs.logger,
      }),
    );
    const behind = otherChannel({ baseUrl: `${mounted.origin}/sandbox` });
    const input = orderInput();
    const created = await behind.payments.create(CNY, input);
    expect(payUrlOf(created.payCredential)).toBe(`${mounted.origin}/sandbox/pay/${input.tradeNo}`);
    // Same database, so the order is visible through either server.
    await expect(channel.payments.query({}, input.tradeNo)).resolves.toEqual({ status: 'pending' });
  });
});
