/**
 * The callback endpoint is open to anyone (SPEC §4, §9): what it costs durapay is bounded. A
 * channel durapay does not have leaves nothing behind; a source whose callbacks keep failing
 * verification is refused, unread, once past its limit, while a channel's valid callbacks never
 * use it up; WeChat Pay and Alipay bodies larger than 64 KiB (others: 1 MiB) are refused, not
 * stored, and read no further than the limit. Effects are counted in `channel_callbacks`.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { signSandboxPayload } from '../../src/channels/sandbox/signature';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';

jest.setTimeout(120_000);

/** The limit of these tests, per second per source; every callback here comes from 127.0.0.1. */
const LIMIT = 20;
/** The clock the limit refills by: it moves only when a test moves it. */
let now = Date.now();

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({
    wechatpay: {},
    alipay: {},
    callbackRateLimit: { perSecond: LIMIT, now: () => now },
  });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});
// An hour later: whatever an earlier test used of the limit has come back.
beforeEach(() => {
  now += 3_600_000;
});

const notify = (channel: string) => `${stack.baseUrl}/api/v1/notify/payment/${channel}`;

/** A sandbox callback with a signature that does not verify, marked so that its row can be found. */
const forged = (marker: string) =>
  fetch(notify('sandbox'), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'sandbox-signature': `t=${Math.floor(Date.now() / 1000)},v1=00`,
    },
    body: JSON.stringify({
      event_id: randomUUID(),
      type: 'payment.paid',
      marker,
    }),
  });

async function rowsMarked(marker: string): Promise<number> {
  const [row] = await stack.database.db.sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM channel_callbacks WHERE raw_body LIKE :like',
    { replacements: { like: `%${marker}%` }, type: QueryTypes.SELECT },
  );
  return Number(row!.n);
}

async function allRows(): Promise<number> {
  const [row] = await stack.database.db.sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM channel_callbacks',
    { type: QueryTypes.SELECT },
  );
  return Number(row!.n);
}

async function answerOf(res: Response): Promise<[number, string]> {
  return [res.status, await res.text()];
}

async function scrapeCallbacks(channel: string, outcome: string): Promise<number> {
  const text = await (await fetch(`${stack.baseUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('durapay_channel_callbacks_total{') &&
        l.includes(`channel="${channel}"`) &&
        l.includes(`outcome="${outcome}"`),
    );
  return line ? Number(line.split(' ').pop()) : 0;
}

/** A body of this size, larger than any limit: far more than the kernel buffers between us and the API. */
const HUGE = 64 * 1024 * 1024;

/**
 * Posts a body of HUGE bytes, declared in Content-Length or chunked, writing only as fast as the
 * API reads, and stops writing when the API has answered or closed the connection. `sentWhole`
 * says whether the API let the whole body through: an API that reads no further than a limit
 * closes the connection long before.
 */
function postHuge(
  channel: string,
  how: 'content-length' | 'chunked',
): Promise<{ answer?: [number, string]; sentWhole: boolean }> {
  return new Promise((resolve) => {
    const req = http.request(notify(channel), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(how === 'content-length' ? { 'content-length': String(HUGE) } : {}),
      },
    });
    let sent = 0;
    let answer: [number, string] | undefined;
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => (answer = [res.statusCode ?? 0, body]));
      res.on('error', () => undefined);
    });
    // EPIPE or ECONNRESET when the API closes while the body is still being written.
    req.on('error', () => undefined);
    req.on('close', () => resolve({ answer, sentWhole: sent >= HUGE }));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (!req.destroyed && answer === undefined && sent < HUGE) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!req.destroyed) req.end();
    };
    pump();
  });
}

describe('callbacks for channels durapay does not have', () => {
  test.each(['nopay', 'wechat', 'a'.repeat(32)])(
    'when a callback names the channel %s, then 200 fail and nothing is stored',
    async (code) => {
      const marker = randomUUID();
      const res = await fetch(notify(code), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ marker, pad: 'x'.repeat(512 * 1024) }),
      });
      expect(await answerOf(res)).toEqual([200, 'fail']);
      expect(await rowsMarked(marker)).toBe(0);
      expect(await scrapeCallbacks('unknown', 'unknown_channel')).toBeGreaterThan(0);
    },
  );
});

describe('the limit on callbacks that fail verification, per source address', () => {
  test('when a source sends three times its limit of valid callbacks at once, then every one is taken and none uses the limit up', async () => {
    const order = await pay.paidOrder();
    const channelTradeNo = (await pay.query(order.trade_no)).channel_trade_no as string;
    // The channel's payment callback, sent again and again, as channels do.
    const body = JSON.stringify({
      event_id: randomUUID(),
      type: 'payment.paid',
      trade_no: order.trade_no,
      channel_trade_no: channelTradeNo,
      amount: 100,
      currency: 'CNY',
      paid_at: new Date().toISOString(),
    });
    const genuine = () =>
      fetch(notify('sandbox'), {
        method: 'POST',
        headers: {
          'sandbox-signature': signSandboxPayload(stack.sandboxSecret, body),
        },
        body,
      });
    const answers = await Promise.all(
      Array.from({ length: 3 * LIMIT }, async () => answerOf(await genuine())),
    );
    expect(answers).toEqual(Array.from({ length: 3 * LIMIT }, () => [200, 'success']));
    const [stored] = await stack.database.db.sequelize.query<{ n: string }>(
      "SELECT count(*) AS n FROM channel_callbacks WHERE raw_body = :body AND outcome = 'delivered'",
      { replacements: { body }, type: QueryTypes.SELECT },
    );
    expect(Number(stored!.n)).toBe(3 * LIMIT);

    // The whole limit is still there for callbacks that fail verification: LIMIT of them are heard.
    const marker = randomUUID();
    for (let i = 0; i < LIMIT; i++) expect(await answerOf(await forged(marker))).toEqual([200, 'fail']);
    expect(await rowsMarked(marker)).toBe(LIMIT);
  });

  test('when a source passes its limit of callbacks that fail verification, then the next are answered fail unstored until a second has passed', async () => {
    const refusedBefore = await scrapeCallbacks('sandbox', 'rate_limited');
    const heard = randomUUID();
    for (let i = 0; i < LIMIT; i++) expect(await answerOf(await forged(heard))).toEqual([200, 'fail']);
    expect(await rowsMarked(heard)).toBe(LIMIT);

    const refused = randomUUID();
    for (let i = 0; i < 5; i++) expect(await answerOf(await forged(refused))).toEqual([200, 'fail']);
    expect(await rowsMarked(refused)).toBe(0);
    expect(await scrapeCallbacks('sandbox', 'rate_limited')).toBe(refusedBefore + 5);

    // A second later the source has its limit again: a second's worth, no more.
    now += 1_000;
    const later = randomUUID();
    for (let i = 0; i < LIMIT + 3; i++) expect(await answerOf(await forged(later))).toEqual([200, 'fail']);
    expect(await rowsMarked(later)).toBe(LIMIT);
  });

  test('when a source past its limit sends a large body, then it is answered fail before the body is read', async () => {
    const marker = randomUUID();
    for (let i = 0; i < LIMIT; i++) await forged(marker);
    expect(await rowsMarked(marker)).toBe(LIMIT);
    const before = await scrapeCallbacks('sandbox', 'rate_limited');
    const rows = await allRows();
    const sent = await postHuge('sandbox', 'chunked');
    expect(sent).toEqual({ answer: [200, 'fail'], sentWhole: false });
    expect(await allRows()).toBe(rows);
    expect(await scrapeCallbacks('sandbox', 'rate_limited')).toBe(before + 1);
  });
});

describe('callback bodies are bounded by their channel', () => {
  const KIB_64 = 64 * 1024;
  const MIB = 1024 * 1024;

  /** A forged callback body of exactly `size` bytes, marked. */
  const bodyOf = (marker: string, size: number) => {
    const start = `{"marker":"${marker}","pad":"`;
    return `${start}${'x'.repeat(size - start.length - 2)}"}`;
  };
  const post = (channel: string, body: string) =>
    fetch(notify(channel), {
      method: 'POST',
      headers: {
        'content-type': channel === 'alipay' ? 'application/x-www-form-urlencoded' : 'application/json',
      },
      body,
    });

  test.each([
    ['wechatpay', KIB_64],
    ['alipay', KIB_64],
    ['sandbox', MIB],
  ])(
    'when a callback to %s is one byte larger than its limit of %d bytes, then 200 fail and nothing is stored; at the limit it is stored',
    async (channel, limit) => {
      const over = randomUUID();
      expect(await answerOf(await post(channel, bodyOf(over, limit + 1)))).toEqual([200, 'fail']);
      expect(await rowsMarked(over)).toBe(0);
      // At the limit the callback is read and checked: it fails verification and is kept as evidence.
      const at = randomUUID();
      expect(await answerOf(await post(channel, bodyOf(at, limit)))).toEqual([200, 'fail']);
      expect(await rowsMarked(at)).toBe(1);
    },
  );

  test.each([
    ['wechatpay', 'content-length'],
    ['wechatpay', 'chunked'],
    ['alipay', 'chunked'],
    ['sandbox', 'chunked'],
  ] as const)(
    'when a callback body to %s is far larger than its limit (%s), then 200 fail before the whole body is sent, nothing stored',
    async (channel, how) => {
      const before = await scrapeCallbacks(channel, 'too_large');
      const rows = await allRows();
      const sent = await postHuge(channel, how);
      expect(sent).toEqual({ answer: [200, 'fail'], sentWhole: false });
      expect(await allRows()).toBe(rows);
      expect(await scrapeCallbacks(channel, 'too_large')).toBe(before + 1);
    },
  );
});
