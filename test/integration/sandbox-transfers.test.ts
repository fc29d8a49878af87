/**
 * The sandbox channel's transfers end to end: the simulator router on a real Postgres, driven only
 * through the SandboxChannel adapter over HTTP (and plain fetch where the payee's browser acts on
 * the confirmation page), with a callback receiver that checks Sandbox-Signature on its own and
 * hands each callback to the adapter's callbacks port as durapay's callback route does.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { QueryTypes } from 'sequelize';
import { createSandboxRouter } from '../../sandbox';
import { SandboxControls } from '../../sandbox/controls';
import { SandboxChannel } from '../../src/channels/sandbox';
import { signSandboxPayload } from '../../src/channels/sandbox/signature';
import { ChannelError, type ChannelErrorKind } from '../../src/channels/errors';
import type {
  CallbackRequest,
  ChannelEvent,
  KnownTransferState,
  TransferInput,
  TransferPayee,
} from '../../src/channels/ports';
import { RecordedBackground } from '../support/background';
import { captureLogger, createTestDatabase, type TestDatabase } from '../support/harness';
import { freePort } from '../support/ports';

jest.setTimeout(60_000);

const SECRET = `sbx_${randomBytes(16).toString('hex')}`;
const REFUND_DELAY_MS = 300;

interface Callback {
  key: string;
  headers: Record<string, string>;
  raw: Buffer;
  body: Record<string, unknown>;
  /** Checked by this receiver with its own HMAC, not the code under test. */
  signatureValid: boolean;
  /** When it arrived (epoch ms). */
  at: number;
}

/** durapay's callback endpoint, played by the test: records every callback and answers "success". */
class CallbackReceiver {
  readonly received: Callback[] = [];
  private server?: http.Server;
  private origin = '';

  url(key: string): string {
    return `${this.origin}/cb/${key}`;
  }

  for(key: string): Callback[] {
    return this.received.filter((c) => c.key === key);
  }

  private verify(header: string | undefined, raw: Buffer): boolean {
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
    if (!match) return false;
    const [, t, v1] = match;
    if (Math.abs(Date.now() / 1000 - Number(t)) > 300) return false;
    const expected = createHmac('sha256', SECRET).update(`${t}.`).update(raw).digest();
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
          key: (req.url ?? '').replace(/^\/cb\//, ''),
          headers,
          raw,
          body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>,
          signatureValid: this.verify(headers['sandbox-signature'], raw),
          at: Date.now(),
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

const logs = captureLogger();
let logsSeen = 0;

/** One simulator process: the router on its own port, over a database, with its own background. */
class Simulator {
  readonly background = new RecordedBackground((err) =>
    logs.logger.error('sandbox task failed', { error: String(err) }),
  );
  readonly controls = new SandboxControls();
  private server?: http.Server;

  constructor(
    readonly db: TestDatabase,
    readonly port: number,
    private readonly confirmWindowMs?: number,
    /** How long a transfer takes to settle (REFUND_DELAY_MS unless given). */
    private readonly settleMs = REFUND_DELAY_MS,
  ) {}

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const app = express();
    app.use(
      '/sandbox',
      createSandboxRouter({
        db: this.db.db,
        secret: SECRET,
        publicBaseUrl: this.origin,
        refundDelayMs: this.settleMs,
        logger: logs.logger,
        background: this.background,
        controls: this.controls,
        ...(this.confirmWindowMs === undefined ? {} : { transferConfirmWindowMs: this.confirmWindowMs }),
      }),
    );
    this.server = await new Promise<http.Server>((resolve) => {
      const s = app.listen(this.port, '127.0.0.1', () => resolve(s));
    });
    return this;
  }

  /** As a process that stops: what was due later is dropped, the connections are closed. */
  async stop(): Promise<void> {
    this.background.close();
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}

let database: TestDatabase;
let receiver: CallbackReceiver;
let sim: Simulator;
let channel: SandboxChannel;
const others: { channels: SandboxChannel[]; sims: Simulator[]; dbs: TestDatabase[] } = {
  channels: [],
  sims: [],
  dbs: [],
};

function adapterFor(s: Simulator, timeoutMs = 3_000): SandboxChannel {
  const c = new SandboxChannel({ baseUrl: `${s.origin}/sandbox`, secret: SECRET, timeoutMs });
  others.channels.push(c);
  return c;
}

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await new CallbackReceiver().start();
  sim = await new Simulator(database, await freePort()).start();
  channel = new SandboxChannel({ baseUrl: `${sim.origin}/sandbox`, secret: SECRET, timeoutMs: 3_000 });
});

// A refusal is an answer, not a fault: nothing the tests do may make the simulator log an error.
afterEach(() => {
  const lines = logs.lines();
  const fresh = lines.slice(logsSeen);
  logsSeen = lines.length;
  expect(fresh.filter((line) => (JSON.parse(line) as { level: string }).level === 'error')).toEqual([]);
});

afterAll(async () => {
  await Promise.all([channel, ...others.channels].map((c) => c?.close()));
  for (const s of [sim, ...others.sims]) await s?.stop();
  await receiver?.stop();
  for (const db of [database, ...others.dbs]) await db?.drop();
});

let counter = 0;
function transferNo(): string {
  counter += 1;
  return `TF${Date.now()}${String(counter).padStart(4, '0')}${randomBytes(2).toString('hex').toUpperCase()}`;
}

const WALLET: TransferPayee = { type: 'alipay_user_id', account: '2088000000000001', name: 'Li Lei' };
const WECHAT: TransferPayee = { type: 'openid', account: 'o-sandbox-payee-0001' };

function transferInput(overrides: Partial<TransferInput> = {}): TransferInput {
  const no = overrides.transferNo ?? transferNo();
  return {
    transferNo: no,
    amount: 1_234,
    payee: WALLET,
    remark: 'Sandbox test payout',
    callbackUrl: receiver.url(no),
    ...overrides,
  };
}

const CTX = { subMerchantNo: 'SBXM-TRANSFERS' };

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const callbackOf = (no: string) => waitFor(`the callback of ${no}`, () => receiver.for(no)[0]);

async function channelError(promise: Promise<unknown>): Promise<ChannelError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ChannelError) return err;
    throw err;
  }
  throw new Error('expected the channel call to fail');
}

/** The adapter's callback steps as durapay's callback route runs them: verify, decode, identify. */
async function receivedByAdapter(c: Callback, ch: SandboxChannel = channel): Promise<ChannelEvent> {
  const request: CallbackRequest = { rawBody: c.raw, headers: c.headers };
  await expect(ch.callbacks.verify(request)).resolves.toEqual({ ok: true });
  return ch.callbacks.decode(request);
}

/** The payee on the confirmation page that package_info leads to. */
async function payee(packageInfo: string, result: 'confirm' | 'expire') {
  const res = await fetch(packageInfo, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function packageInfoOf(state: KnownTransferState): string {
  if (state.status !== 'wait_user_confirm') throw new Error(`transfer is ${state.status}, not waiting`);
  return state.packageInfo;
}

async function countRows(db: TestDatabase, no: string): Promise<{ n: number; requests: number | null }> {
  const [row] = await db.db.sequelize.query<{ n: number; requests: number | null }>(
    `SELECT count(*)::int AS n, max(create_requests)::int AS requests
       FROM sandbox_transfers WHERE transfer_no = :no`,
    { replacements: { no }, type: QueryTypes.SELECT },
  );
  return row!;
}

describe('transfers to a wallet that needs no confirmation', () => {
  test('when a transfer is created, then it is processing, succeeds after the refund delay and posts one signed callback the adapter decodes', async () => {
    const input = transferInput();
    const sent = Date.now();
    const created = await channel.transfers.create(CTX, input);
    expect(created).toEqual({
      status: 'processing',
      channelTransferNo: expect.stringMatching(/^SBXF[A-Z2-7]{20}$/),
    });
    expect(sim.background.delaysFor(input.transferNo)).toHaveLength(1);
    await expect(sim.controls.transferAccount(input.transferNo)).resolves.toBe(CTX.subMerchantNo);

    const callback = await callbackOf(input.transferNo);
    // Settled the refund delay after the create was sent, not before.
    expect(callback.at - sent).toBeGreaterThanOrEqual(REFUND_DELAY_MS);
    expect(callback.signatureValid).toBe(true);
    expect(callback.body).toMatchObject({
      type: 'transfer.success',
      status: 'success',
      transfer_no: input.transferNo,
      amount: 1_234,
      sub_merchant_no: CTX.subMerchantNo,
    });
    const event = await receivedByAdapter(callback);
    expect(event).toEqual({
      kind: 'transfer',
      eventId: `evt_${created.channelTransferNo}_success`,
      transferNo: input.transferNo,
      amount: 1_234,
      subMerchantNo: CTX.subMerchantNo,
      state: {
        status: 'success',
        channelTransferNo: created.channelTransferNo,
        finishedAt: expect.any(Date),
      },
    });
    expect(channel.callbacks.identify(event)).toEqual({
      eventId: event.eventId,
      subject: { kind: 'transfer_no', transferNo: input.transferNo },
    });
    await expect(channel.transfers.query(CTX, input.transferNo)).resolves.toEqual(
      event.kind === 'transfer' ? event.state : undefined,
    );
    await sim.background.idle(input.transferNo);
    expect(receiver.for(input.transferNo)).toHaveLength(1);
  });

  test('when a callback is altered or signed with another secret, then the adapter refuses it', async () => {
    const input = transferInput();
    await channel.transfers.create({}, input);
    const callback = await callbackOf(input.transferNo);
    const tampered = Buffer.from(callback.raw.toString('utf8').replace('"amount":1234', '"amount":9999'));
    await expect(channel.callbacks.verify({ rawBody: tampered, headers: callback.headers })).resolves.toEqual(
      {
        ok: false,
        reason: 'Sandbox-Signature does not match',
      },
    );
    const forged = { 'sandbox-signature': signSandboxPayload('not-the-secret', callback.raw) };
    await expect(channel.callbacks.verify({ rawBody: callback.raw, headers: forged })).resolves.toMatchObject(
      {
        ok: false,
      },
    );
    // Verified, but saying two things at once: undecodable.
    const mixed = Buffer.from(JSON.stringify({ ...callback.body, type: 'transfer.failed' }));
    await expect(channel.callbacks.decode({ rawBody: mixed, headers: {} })).rejects.toMatchObject({
      kind: 'invalid_response',
    });
  });

  test('when the remark holds [transfer:fail], then it is processing, then failed with a reason, and the callback says so', async () => {
    const input = transferInput({ remark: 'payout [transfer:fail]' });
    await expect(channel.transfers.create({}, input)).resolves.toMatchObject({ status: 'processing' });
    const event = await receivedByAdapter(await callbackOf(input.transferNo));
    expect(event).toMatchObject({
      kind: 'transfer',
      state: { status: 'failed', reason: expect.stringContaining('[transfer:fail]') },
    });
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('cannot receive'),
    });
  });

  test('when the remark holds [transfer:refuse], then the create is refused and nothing exists', async () => {
    const input = transferInput({ remark: 'payout [transfer:refuse]' });
    const err = await channelError(channel.transfers.create({}, input));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toBe('the sandbox refused the transfer ([transfer:refuse] in remark)');
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toEqual({ status: 'not_found' });
    expect(sim.controls.transferCreates(input.transferNo)).toBe(1);
    await expect(sim.controls.transferAccount(input.transferNo)).rejects.toThrow(/does not exist/);
  });

  test('when the remark holds [transfer:lost], then the create has no answer, yet the query finds the transfer and it succeeds', async () => {
    const input = transferInput({ remark: 'payout [transfer:lost]' });
    const err = await channelError(channel.transfers.create({}, input));
    expect(err.kind).toBe<ChannelErrorKind>('unreachable');
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({
      status: expect.stringMatching(/^(processing|success)$/),
    });
    // Sent again under the same number: still unanswered, still one transfer.
    expect((await channelError(channel.transfers.create({}, input))).kind).toBe<ChannelErrorKind>(
      'unreachable',
    );
    expect(sim.controls.transferCreates(input.transferNo)).toBe(2);
    expect(await countRows(database, input.transferNo)).toEqual({ n: 1, requests: 2 });
    await expect(receivedByAdapter(await callbackOf(input.transferNo))).resolves.toMatchObject({
      state: { status: 'success' },
    });
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({ status: 'success' });
  });

  test('when the remark holds [transfer:slow], then it stays processing for about 3 seconds, then succeeds', async () => {
    const input = transferInput({ remark: 'payout [transfer:slow]' });
    const sent = Date.now();
    await channel.transfers.create({}, input);
    await new Promise((r) => setTimeout(r, 1_500));
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({
      status: 'processing',
    });
    const callback = await callbackOf(input.transferNo);
    expect(callback.at - sent).toBeGreaterThanOrEqual(3_000);
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({ status: 'success' });
  });

  test('when the same transfer is created again, in turn and at once, then there is one transfer, one callback and every request is counted', async () => {
    const input = transferInput();
    const first = await channel.transfers.create({}, input);
    const again = await Promise.all(Array.from({ length: 5 }, () => channel.transfers.create({}, input)));
    for (const answer of again) expect(answer.channelTransferNo).toBe(first.channelTransferNo);
    expect(sim.controls.transferCreates(input.transferNo)).toBe(6);
    expect(await countRows(database, input.transferNo)).toEqual({ n: 1, requests: 6 });
    await callbackOf(input.transferNo);
    await sim.background.idle(input.transferNo);
    expect(receiver.for(input.transferNo)).toHaveLength(1);
    // Asked once more after it ended: the same transfer, as it is now.
    await expect(channel.transfers.create({}, input)).resolves.toMatchObject({
      status: 'success',
      channelTransferNo: first.channelTransferNo,
    });
  });

  test('when a transfer number is used again with another amount, then the create is refused', async () => {
    const input = transferInput();
    await channel.transfers.create({}, input);
    const err = await channelError(channel.transfers.create({}, { ...input, amount: 999 }));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toMatch(/already used with different parameters/);
    expect(await countRows(database, input.transferNo)).toMatchObject({ n: 1 });
  });

  test('when the transfer is unknown, then query and cancel say not_found', async () => {
    await expect(channel.transfers.query({}, 'TF-NEVER-MADE')).resolves.toEqual({ status: 'not_found' });
    await expect(channel.transfers.cancel!({}, 'TF-NEVER-MADE')).resolves.toEqual({ status: 'not_found' });
  });
});

describe('transfers to an openid, which the payee confirms', () => {
  test('when the payee confirms on the page package_info leads to, then it is processing, then success with its callback', async () => {
    const input = transferInput({ payee: WECHAT, amount: 500, remark: 'Prize <b>& more</b>' });
    const created = await channel.transfers.create({}, input);
    const packageInfo = packageInfoOf(created);
    expect(packageInfo).toBe(`${sim.origin}/sandbox/transfers/${input.transferNo}/confirm`);
    // Waiting for a person is not work left: idle() does not wait a day for it.
    await sim.background.idle(input.transferNo);

    const page = await fetch(packageInfo);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('>Confirm</button>');
    expect(html).toContain('>Let it expire</button>');
    expect(html).toContain('¥5.00');
    expect(html).toContain('Prize &#60;b&#62;&#38; more&#60;/b&#62;');

    await expect(payee(packageInfo, 'confirm')).resolves.toEqual({
      status: 200,
      body: { transfer_no: input.transferNo, status: 'processing' },
    });
    // Confirmed twice: answered the same way, nothing more happens.
    await expect(payee(packageInfo, 'confirm')).resolves.toMatchObject({ status: 200 });
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({
      status: 'processing',
    });
    const event = await receivedByAdapter(await callbackOf(input.transferNo));
    expect(event).toMatchObject({ kind: 'transfer', amount: 500, state: { status: 'success' } });
    // Once it is paid, letting it expire is too late.
    await expect(payee(packageInfo, 'expire')).resolves.toMatchObject({
      status: 409,
      body: { code: 'transfer_not_waiting' },
    });
    await sim.background.idle(input.transferNo);
    expect(receiver.for(input.transferNo)).toHaveLength(1);
  });

  test('when the payee lets it expire, then it fails as OVERDUE_CLOSE, as WeChat Pay closes it, and confirming is refused', async () => {
    const input = transferInput({ payee: WECHAT });
    const packageInfo = packageInfoOf(await channel.transfers.create({}, input));
    await expect(payee(packageInfo, 'expire')).resolves.toEqual({
      status: 200,
      body: { transfer_no: input.transferNo, status: 'failed' },
    });
    const event = await receivedByAdapter(await callbackOf(input.transferNo));
    expect(event).toMatchObject({
      kind: 'transfer',
      state: { status: 'failed', reason: expect.stringContaining('OVERDUE_CLOSE') },
    });
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('did not confirm'),
    });
    await expect(payee(packageInfo, 'confirm')).resolves.toMatchObject({
      status: 409,
      body: { code: 'transfer_not_waiting', error: expect.stringContaining('failed') },
    });
  });

  test('when the controls confirm or let a transfer expire, then they act as the payee', async () => {
    const confirmed = transferInput({ payee: WECHAT });
    const expired = transferInput({ payee: WECHAT });
    await channel.transfers.create({}, confirmed);
    await channel.transfers.create({}, expired);
    await expect(sim.controls.confirmTransfer(confirmed.transferNo)).resolves.toEqual({
      transfer_no: confirmed.transferNo,
      status: 'processing',
    });
    await expect(sim.controls.expireTransfer(expired.transferNo)).resolves.toMatchObject({
      status: 'failed',
    });
    await expect(sim.controls.expireTransfer(confirmed.transferNo)).rejects.toThrow(/does not wait/);
    await expect(receivedByAdapter(await callbackOf(confirmed.transferNo))).resolves.toMatchObject({
      state: { status: 'success' },
    });
  });

  test('when the confirmation window passes unanswered, then the transfer is closed as failed with its callback, unasked', async () => {
    const db = await createTestDatabase();
    others.dbs.push(db);
    const short = await new Simulator(db, await freePort(), 600).start();
    others.sims.push(short);
    const ch = adapterFor(short);
    const input = transferInput({ payee: WECHAT });
    const packageInfo = packageInfoOf(await ch.transfers.create({}, input));
    const event = await receivedByAdapter(await callbackOf(input.transferNo), ch);
    expect(event).toMatchObject({
      state: { status: 'failed', reason: expect.stringContaining('OVERDUE_CLOSE') },
    });
    await expect(payee(packageInfo, 'confirm')).resolves.toMatchObject({ status: 409 });
    await expect(ch.transfers.query({}, input.transferNo)).resolves.toMatchObject({ status: 'failed' });
  });
});

describe('cancelling a transfer', () => {
  test('when a transfer waits for its payee, then cancel makes it cancelled, with one callback', async () => {
    const input = transferInput({ payee: WECHAT });
    const packageInfo = packageInfoOf(await channel.transfers.create({}, input));
    const cancelled = await channel.transfers.cancel!({}, input.transferNo);
    expect(cancelled).toMatchObject({ status: 'cancelled', reason: 'cancelled by the merchant' });
    // Cancelled again: the same answer.
    await expect(channel.transfers.cancel!({}, input.transferNo)).resolves.toEqual(cancelled);
    await expect(payee(packageInfo, 'confirm')).resolves.toMatchObject({ status: 409 });
    await expect(receivedByAdapter(await callbackOf(input.transferNo))).resolves.toMatchObject({
      state: { status: 'cancelled', reason: 'cancelled by the merchant' },
    });
    await sim.background.idle(input.transferNo);
    expect(receiver.for(input.transferNo)).toHaveLength(1);
  });

  test('when a transfer is processing and its money has not left, then cancel makes it cancelled and it never succeeds', async () => {
    const input = transferInput({ remark: 'payout [transfer:slow]' });
    await channel.transfers.create({}, input);
    await expect(channel.transfers.cancel!({}, input.transferNo)).resolves.toMatchObject({
      status: 'cancelled',
    });
    await sim.background.idle(input.transferNo);
    expect(receiver.for(input.transferNo).map((c) => c.body.type)).toEqual(['transfer.cancelled']);
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({
      status: 'cancelled',
    });
  });

  test('when the transfer succeeded, then cancel is refused as too late and it stays paid', async () => {
    const input = transferInput();
    await channel.transfers.create({}, input);
    await callbackOf(input.transferNo);
    const err = await channelError(channel.transfers.cancel!({}, input.transferNo));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toBe(
      `transfer ${input.transferNo} cannot be cancelled: it is success, too late to cancel`,
    );
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({ status: 'success' });
  });

  test('when the payee confirmed and the money is on its way, then cancel is refused as too late', async () => {
    const input = transferInput({ payee: WECHAT, remark: 'payout [transfer:slow]' });
    await payee(packageInfoOf(await channel.transfers.create({}, input)), 'confirm');
    const err = await channelError(channel.transfers.cancel!({}, input.transferNo));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toMatch(/payee confirmed it .* too late to cancel/);
    await expect(channel.transfers.query({}, input.transferNo)).resolves.toMatchObject({
      status: 'processing',
    });
  });
});

describe('the simulator restarting', () => {
  test('when the simulator stops before transfers settle, then after a restart they settle, post their callbacks and still take the payee', async () => {
    const db = await createTestDatabase();
    others.dbs.push(db);
    const port = await freePort();
    // The first settles in a minute, so that however slow the machine it stops before it does;
    // the settlement then falls due while nothing runs.
    const first = await new Simulator(db, port, undefined, 60_000).start();
    const ch = adapterFor(first);
    const paid = transferInput();
    const waiting = transferInput({ payee: WECHAT });
    await ch.transfers.create({}, paid);
    const packageInfo = packageInfoOf(await ch.transfers.create({}, waiting));
    await first.stop();
    await db.db.sequelize.query(
      "UPDATE sandbox_transfers SET settle_at = now() - interval '1 second' WHERE transfer_no = :t",
      { replacements: { t: paid.transferNo } },
    );
    await new Promise((r) => setTimeout(r, REFUND_DELAY_MS + 200));
    expect(receiver.for(paid.transferNo)).toEqual([]);

    const second = await new Simulator(db, port).start();
    others.sims.push(second);
    await expect(receivedByAdapter(await callbackOf(paid.transferNo), ch)).resolves.toMatchObject({
      state: { status: 'success' },
    });
    await expect(ch.transfers.query({}, paid.transferNo)).resolves.toMatchObject({ status: 'success' });
    await expect(ch.transfers.query({}, waiting.transferNo)).resolves.toMatchObject({
      status: 'wait_user_confirm',
      packageInfo,
    });
    await expect(payee(packageInfo, 'confirm')).resolves.toMatchObject({ body: { status: 'processing' } });
    await expect(receivedByAdapter(await callbackOf(waiting.transferNo), ch)).resolves.toMatchObject({
      state: { status: 'success' },
    });
  });
});

describe('what the adapter says the simulator refuses', () => {
  test('when a transfer is asked for that the simulator would refuse, then problemWith names the field, and the simulator does refuse it', async () => {
    const { transfers } = channel;
    const ok = { amount: 100, payee: WALLET, remark: 'ok' };
    expect(transfers.problemWith!(ok)).toBeUndefined();
    expect(transfers.minAmount).toBe(1);
    expect(transfers.payeeTypes).toEqual(['openid', 'alipay_user_id', 'alipay_logon_id']);
    const cases: [Omit<TransferInput, 'transferNo' | 'callbackUrl'>, RegExp][] = [
      [{ ...ok, amount: 0 }, /^amount: /],
      [{ ...ok, amount: 10 ** 12 + 1 }, /^amount: must be at most/],
      [{ ...ok, remark: '' }, /^remark: is required/],
      [{ ...ok, remark: 'x'.repeat(257) }, /^remark: must be at most 256/],
      [{ ...ok, payee: { ...WALLET, account: 'a'.repeat(129) } }, /^payee\.account: /],
      [{ ...ok, payee: { ...WALLET, name: 'Li\u0000Lei' } }, /^payee\.name: must not contain U\+0000/],
      [{ ...ok, payee: { type: 'bank_card' as TransferPayee['type'], account: '6222' } }, /^payee\.type: /],
    ];
    for (const [input, problem] of cases) {
      expect(transfers.problemWith!(input)).toMatch(problem);
      const err = await channelError(transfers.create({}, transferInput(input)));
      expect(err.kind).toBe<ChannelErrorKind>('refused');
    }
    // At the limits, accepted.
    const longest = { ...ok, remark: 'x'.repeat(256), payee: { ...WALLET, account: 'a'.repeat(128) } };
    expect(transfers.problemWith!(longest)).toBeUndefined();
    await expect(transfers.create({}, transferInput(longest))).resolves.toMatchObject({
      status: 'processing',
    });
  });

  test('when a /v1/transfers request is unsigned, then the simulator answers 401', async () => {
    const res = await fetch(`${sim.origin}/sandbox/v1/transfers/ANY`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'missing Sandbox-Signature', code: 'unauthorized' });
  });
});
