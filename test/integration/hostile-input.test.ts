/**
 * Requests a hostile client sends, each answered in the envelope with the status SPEC gives
 * (never a 500 for the client's own fault), and routing and authorization agreeing on every path.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import { QueryTypes } from 'sequelize';
import { signSandboxPayload } from '../../src/channels/sandbox/signature';
import { connectDatabase } from '../../src/platform/db';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { signRequest } from '../../src/platform/crypto/http-signature';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { UPLOAD_TEMP_PREFIX } from '../../src/platform/http/multipart';
import { serveApi, startTestStack, uniqueName, type ExtraApi, type TestStack } from '../support/harness';
import { envelope, type Envelope } from '../support/http';
import { multipart, type Part } from '../support/multipart';
import { freePort } from '../support/ports';
import { signedFetch } from '../support/signing';

jest.setTimeout(120_000);

let stack: TestStack;
let both: AppCredentials;
let paymentsOnly: AppCredentials;
let merchantsOnly: AppCredentials;

beforeAll(async () => {
  stack = await startTestStack();
  both = await stack.createApp(['payments', 'merchants'], 'both');
  paymentsOnly = await stack.createApp(['payments'], 'payments-only');
  merchantsOnly = await stack.createApp(['merchants'], 'merchants-only');
});
afterAll(async () => {
  await stack?.stop();
});

interface Answer<T = Record<string, unknown>> extends Envelope<T> {
  status: number;
}

async function answer<T = Record<string, unknown>>(res: Response): Promise<Answer<T>> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await envelope<T>(res);
  expect(body.request_id).toBe(res.headers.get('x-request-id'));
  return { status: res.status, ...body };
}

const call = (creds: AppCredentials, method: string, target: string, json?: unknown) =>
  signedFetch(stack.baseUrl, creds, method, target, json === undefined ? {} : { json });

/** A signed request whose body is sent exactly as given (JSON that JSON.stringify cannot make). */
const callRaw = (creds: AppCredentials, method: string, target: string, body: string) =>
  signedFetch(stack.baseUrl, creds, method, target, { body });

function order(overrides: Record<string, unknown> = {}) {
  return {
    merchant_order_no: `H-${randomUUID()}`,
    pay_method: 'qr_code',
    amount: 100,
    subject: 'Tea',
    notify_url: 'http://127.0.0.1:9/hook',
    ...overrides,
  };
}

async function count(sql: string, replacements: Record<string, unknown> = {}): Promise<number> {
  const rows = await stack.database.db.sequelize.query<{ n: string }>(sql, {
    replacements,
    type: QueryTypes.SELECT,
  });
  return Number(rows[0]!.n);
}

/** The API runs in this process: the upload temp files it has now. */
const uploadTempFiles = () => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(UPLOAD_TEMP_PREFIX));

/** An upload, answered however it is; whatever the answer, it leaves no temp file behind. */
async function upload(creds: AppCredentials, parts: Part[]): Promise<Answer<{ file_id: string }>> {
  const { body, contentType } = multipart(parts);
  const target = '/api/v1/merchant/upload-file';
  const signed = signRequest({ method: 'POST', target, body, keyId: creds.app_id, secret: creds.secret });
  const before = new Set(uploadTempFiles());
  const res = await answer<{ file_id: string }>(
    await fetch(`${stack.baseUrl}${target}`, {
      method: 'POST',
      headers: { ...signed, 'content-type': contentType },
      body,
    }),
  );
  expect(uploadTempFiles().filter((f) => !before.has(f))).toEqual([]);
  return res;
}

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(256)]);
const pngParts = (): Part[] => [
  { name: 'file_media_type', value: 'image/png' },
  { name: 'file', filename: 'id.png', contentType: 'image/png', content: PNG },
];

/** Every route an app calls, with a body that would pass validation, and the scope it needs. */
const APP_ROUTES: { method: string; path: string; scope: 'payments' | 'merchants'; json?: unknown }[] = [
  { method: 'POST', path: '/api/v1/pay/unified-order', scope: 'payments', json: order() },
  { method: 'GET', path: '/api/v1/pay/query/P1', scope: 'payments' },
  { method: 'POST', path: '/api/v1/pay/close', scope: 'payments', json: { trade_no: 'P1' } },
  {
    method: 'POST',
    path: '/api/v1/pay/refund',
    scope: 'payments',
    json: { trade_no: 'P1', refund_amount: 1 },
  },
  { method: 'GET', path: '/api/v1/pay/refund/query/R1', scope: 'payments' },
  { method: 'GET', path: '/api/v1/notifications', scope: 'payments' },
  { method: 'POST', path: '/api/v1/notifications/ntf_x/resend', scope: 'payments' },
  {
    method: 'POST',
    path: '/api/v1/merchant',
    scope: 'merchants',
    json: { merchant_id: 'x', merchant_name: 'X' },
  },
  { method: 'GET', path: '/api/v1/merchant', scope: 'merchants' },
  { method: 'GET', path: '/api/v1/merchant/m1', scope: 'merchants' },
  { method: 'POST', path: '/api/v1/merchant/upload-file', scope: 'merchants' },
  {
    method: 'POST',
    path: '/api/v1/merchant/m1/apply',
    scope: 'merchants',
    json: { channel_code: 'sandbox' },
  },
  { method: 'GET', path: '/api/v1/merchant/m1/audit', scope: 'merchants' },
];

/** The path with one fixed segment (never a path value) changed in letter case, in every way. */
function caseVariants(path: string): string[] {
  const segments = path.split('/');
  const variants = new Set<string>([path.toUpperCase()]);
  segments.forEach((segment, i) => {
    if (segment === '' || /^(P1|R1|m1|ntf_x|sandbox)$/.test(segment)) return;
    for (const changed of [segment.toUpperCase(), segment[0]!.toUpperCase() + segment.slice(1)]) {
      if (changed === segment) continue;
      variants.add(segments.map((s, j) => (j === i ? changed : s)).join('/'));
    }
  });
  return [...variants];
}

describe('one canonical form of paths (SPEC §1)', () => {
  test('when any fixed segment of any route changes its letter case, then 404 not_found, even for an app holding every scope', async () => {
    const targets = [
      ...APP_ROUTES.flatMap((r) => caseVariants(r.path).map((path) => ({ ...r, path }))),
      ...caseVariants('/healthz').map((path) => ({ method: 'GET', path, json: undefined })),
      ...caseVariants('/api/v1/notify/payment/sandbox').map((path) => ({ method: 'POST', path, json: {} })),
    ];
    expect(targets.length).toBeGreaterThan(50);
    for (const t of targets) {
      const res = await answer(await call(both, t.method, t.path, t.json));
      expect({ path: t.path, status: res.status, code: res.code }).toEqual({
        path: t.path,
        status: 404,
        code: 'not_found',
      });
    }
  });

  test('when an app without the payments scope creates an order on a path in another case, then it is refused and no order exists', async () => {
    const body = order();
    for (const [path, status, code] of [
      ['/API/V1/PAY/unified-order', 404, 'not_found'],
      ['/api/v1/PAY/unified-order', 404, 'not_found'],
      // Under the payments prefix as written: authorization needs the scope before routing says 404.
      ['/api/v1/pay/Unified-Order', 403, 'permission_denied'],
    ] as const) {
      const res = await answer(await call(merchantsOnly, 'POST', path, body));
      expect({ path, status: res.status, code: res.code }).toEqual({ path, status, code });
    }
    expect(
      await count('SELECT count(*) AS n FROM orders WHERE merchant_order_no = :m', {
        m: body.merchant_order_no,
      }),
    ).toBe(0);
  });

  test('when an app lacks a route scope, then every route of that scope answers 403 permission_denied', async () => {
    for (const r of APP_ROUTES) {
      const creds = r.scope === 'payments' ? merchantsOnly : paymentsOnly;
      const res = await answer(await call(creds, r.method, r.path, r.json));
      expect({ path: r.path, status: res.status, code: res.code }).toEqual({
        path: r.path,
        status: 403,
        code: 'permission_denied',
      });
    }
  });

  test.each(['/api/v1/pay/unified-order', '/healthz', '/api/v1/notify/payment/sandbox'])(
    'when OPTIONS %s is asked, then 404 not_found in the envelope, not a plain-text list of methods',
    async (path) => {
      const res = await answer(await fetch(`${stack.baseUrl}${path}`, { method: 'OPTIONS' }));
      expect(res).toMatchObject({ status: 404, code: 'not_found', message: `no route for OPTIONS ${path}` });
    },
  );

  test('when an unsigned request names a route in another case, then 404, not 401: authorization runs only where routing does', async () => {
    const res = await answer(await fetch(`${stack.baseUrl}/API/V1/MERCHANT`));
    expect(res).toMatchObject({ status: 404, code: 'not_found' });
  });
});

const BAD_ESCAPES = ['%zz', '%', '%%', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%FF%FE'];

describe('path values that are not percent-encoded UTF-8', () => {
  const routes: [string, (v: string) => string, unknown?][] = [
    ['GET', (v) => `/api/v1/pay/query/${v}`],
    ['GET', (v) => `/api/v1/pay/refund/query/${v}`],
    ['GET', (v) => `/api/v1/merchant/${v}`],
    ['POST', (v) => `/api/v1/merchant/${v}/apply`, { channel_code: 'sandbox' }],
    ['GET', (v) => `/api/v1/merchant/${v}/audit`],
    ['POST', (v) => `/api/v1/notifications/${v}/resend`],
  ];

  test.each(BAD_ESCAPES)(
    'when a path value is %s, then every route answers 400 invalid_param',
    async (bad) => {
      for (const [method, path, json] of routes) {
        const res = await answer(await call(both, method, path(bad), json));
        expect({ path: path(bad), status: res.status, code: res.code, message: res.message }).toEqual({
          path: path(bad),
          status: 400,
          code: 'invalid_param',
          message: 'a path value is not valid percent-encoded UTF-8',
        });
      }
    },
  );

  test.each(BAD_ESCAPES)('when the callback channel code is %s, then 200 text/plain fail', async (bad) => {
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/${bad}`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('fail');
  });

  test('when a path value is %00, then 400 invalid_param names it', async () => {
    expect(await answer(await call(both, 'GET', '/api/v1/pay/query/%00'))).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: '"trade_no" must not contain U+0000',
    });
    expect(await answer(await call(both, 'GET', '/api/v1/merchant/a%00b'))).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: '"merchant_id" must not contain U+0000',
    });
  });
});

describe('Content-Encoding', () => {
  test.each(['gzip', 'deflate', 'br', 'GZIP', 'identity, gzip'])(
    'when an unsigned body comes with Content-Encoding %s, then 400 invalid_param says what is accepted',
    async (encoding) => {
      const res = await answer(
        await fetch(`${stack.baseUrl}/healthz`, {
          method: 'POST',
          headers: { 'content-encoding': encoding, 'content-type': 'application/json' },
          body: '{}',
        }),
      );
      expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
      expect(res.message).toMatch(/^Content-Encoding .* is not accepted: send the body uncompressed$/);
    },
  );

  test('when a signed create comes gzip-encoded, then 400 invalid_param and no order', async () => {
    const body = order();
    const res = await answer(
      await signedFetch(stack.baseUrl, both, 'POST', '/api/v1/pay/unified-order', {
        json: body,
        headers: { 'content-encoding': 'gzip' },
      }),
    );
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(
      await count('SELECT count(*) AS n FROM orders WHERE merchant_order_no = :m', {
        m: body.merchant_order_no,
      }),
    ).toBe(0);
  });

  test('when a body says Content-Encoding identity, then it is read as any other', async () => {
    const res = await answer(
      await signedFetch(stack.baseUrl, both, 'POST', '/api/v1/pay/unified-order', {
        json: order(),
        headers: { 'content-encoding': 'identity' },
      }),
    );
    expect(res).toMatchObject({ status: 200, code: 'success' });
  });

  test('when a GET without a body carries Content-Encoding, then it is answered as usual', async () => {
    const res = await answer(
      await fetch(`${stack.baseUrl}/healthz`, { headers: { 'content-encoding': 'gzip' } }),
    );
    expect(res).toMatchObject({ status: 200, code: 'success' });
  });

  test('when an upload comes gzip-encoded, then 400 invalid_param and nothing reaches the channel', async () => {
    const before = await count('SELECT count(*) AS n FROM sandbox_files');
    const { body, contentType } = multipart(pngParts());
    const target = '/api/v1/merchant/upload-file';
    const signed = signRequest({ method: 'POST', target, body, keyId: both.app_id, secret: both.secret });
    const res = await answer(
      await fetch(`${stack.baseUrl}${target}`, {
        method: 'POST',
        headers: { ...signed, 'content-type': contentType, 'content-encoding': 'gzip' },
        body,
      }),
    );
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(await count('SELECT count(*) AS n FROM sandbox_files')).toBe(before);
  });

  test('when a callback comes with Content-Encoding gzip, then 200 fail', async () => {
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, {
      method: 'POST',
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
      body: '{}',
    });
    expect([res.status, await res.text()]).toEqual([200, 'fail']);
  });
});

describe('callbacks answer fail to everything wrong (SPEC §4)', () => {
  test('when the channel code is longer than any channel code, then 200 fail and nothing is recorded', async () => {
    const code = 'a'.repeat(33);
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/${code}`, { method: 'POST', body: '{}' });
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([
      200,
      'text/plain; charset=utf-8',
      'fail',
    ]);
  });

  test('when the body is larger than 1 MiB, then 200 fail', async () => {
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }),
    });
    expect([res.status, await res.text()]).toEqual([200, 'fail']);
  });

  test('when the body holds NUL bytes, then 200 fail and the callback is still recorded', async () => {
    const marker = randomUUID();
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, {
      method: 'POST',
      body: Buffer.concat([Buffer.from(`{"m":"${marker}"`), Buffer.from([0, 0]), Buffer.from('}')]),
    });
    expect([res.status, await res.text()]).toEqual([200, 'fail']);
    expect(
      await count(
        "SELECT count(*) AS n FROM channel_callbacks WHERE raw_body LIKE :m AND outcome = 'rejected'",
        {
          m: `%${marker}%`,
        },
      ),
    ).toBe(1);
  });

  test('when the database does not answer, then a valid callback is answered fail, never acknowledged', async () => {
    // A valid, signed payment callback for a real pending order…
    const created = await answer<{ trade_no: string }>(
      await call(
        both,
        'POST',
        '/api/v1/pay/unified-order',
        order({ extra: { sandbox: { callback: 'drop' } } }),
      ),
    );
    const body = JSON.stringify({
      event_id: randomUUID(),
      type: 'payment.paid',
      trade_no: created.data!.trade_no,
      channel_trade_no: 'SBX-outage',
      amount: 100,
      currency: 'CNY',
      paid_at: new Date().toISOString(),
    });
    const send = (base: string) =>
      fetch(`${base}/api/v1/notify/payment/sandbox`, {
        method: 'POST',
        body,
        headers: { 'sandbox-signature': signSandboxPayload(stack.sandboxSecret, body) },
      });
    // …sent to an API whose database is gone (nothing listens on its port).
    const down = connectDatabase(`postgres://postgres@127.0.0.1:${await freePort()}/none`, {
      acquireTimeoutMs: 1_000,
    });
    const api = await serveApi(stack, { db: down });
    try {
      const res = await send(api.baseUrl);
      expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([
        200,
        'text/plain; charset=utf-8',
        'fail',
      ]);
      // Any other request says what happened, in the envelope, without the driver's words.
      const query = await answer(
        await signedFetch(api.baseUrl, both, 'GET', `/api/v1/pay/query/${created.data!.trade_no}`),
      );
      expect(query).toMatchObject({
        status: 500,
        code: 'internal_system',
        message: 'the database is not reachable right now; send the request again',
      });
      expect(
        await count("SELECT count(*) AS n FROM orders WHERE trade_no = :t AND status = 'pending'", {
          t: created.data!.trade_no,
        }),
      ).toBe(1);
    } finally {
      await api.close();
      await down.close();
    }
    // The same callback, once the database answers, is acknowledged: it was valid all along.
    expect(await (await send(stack.baseUrl)).text()).toBe('success');
  });

  test('when no channel code is given, then 200 fail', async () => {
    for (const path of ['/api/v1/notify/payment', '/api/v1/notify/payment/']) {
      const res = await fetch(`${stack.baseUrl}${path}`, { method: 'POST', body: '{}' });
      expect([path, res.status, await res.text()]).toEqual([path, 200, 'fail']);
    }
  });
});

/** `{"a": … {} … }` nested `levels` objects deep, as JSON text. */
const nested = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);

describe('free-form objects are bounded (SPEC §1)', () => {
  test('when extra nests 4 500 levels, then 400 invalid_param names it', async () => {
    const body = JSON.stringify(order()).replace(/}$/, `,"extra":${nested(4500)}}`);
    const res = await answer(await callRaw(both, 'POST', '/api/v1/pay/unified-order', body));
    expect(res).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: '"extra" must nest at most 16 levels of objects and arrays',
    });
  });

  test('when extra nests 16 levels, then the order is created; at 17, 400', async () => {
    const ok = JSON.stringify(order()).replace(/}$/, `,"extra":${nested(16)}}`);
    expect(await answer(await callRaw(both, 'POST', '/api/v1/pay/unified-order', ok))).toMatchObject({
      status: 200,
      code: 'success',
    });
    const deep = JSON.stringify(order()).replace(/}$/, `,"extra":{"list":[${nested(16)}]}}`);
    expect(await answer(await callRaw(both, 'POST', '/api/v1/pay/unified-order', deep))).toMatchObject({
      status: 400,
      code: 'invalid_param',
    });
  });

  test('when extra is larger than 8 KiB as JSON, then 400 invalid_param', async () => {
    const res = await answer(
      await call(both, 'POST', '/api/v1/pay/unified-order', order({ extra: { note: 'x'.repeat(8 * 1024) } })),
    );
    expect(res).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: '"extra" must be at most 8 KiB as JSON',
    });
  });

  test('when submit_data nests too deep or is larger than 64 KiB, then 400 invalid_param', async () => {
    const deep = `{"channel_code":"sandbox","submit_data":${nested(4500)}}`;
    expect(await answer(await callRaw(both, 'POST', '/api/v1/merchant/m1/apply', deep))).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: '"submit_data" must nest at most 16 levels of objects and arrays',
    });
    const big = { channel_code: 'sandbox', submit_data: { note: 'x'.repeat(64 * 1024) } };
    expect(await answer(await call(both, 'POST', '/api/v1/merchant/m1/apply', big))).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: '"submit_data" must be at most 64 KiB as JSON',
    });
  });
});

describe('U+0000 in any text (SPEC §1)', () => {
  test.each([
    ['extra.openid', { extra: { openid: '\u0000' } }],
    ['subject', { subject: 'Tea\u0000' }],
    ['extra.list[1]', { extra: { list: ['a', 'b\u0000'] } }],
  ])(
    'when %s holds U+0000, then 400 invalid_param names it and no order exists',
    async (field, overrides) => {
      const body = order(overrides);
      const res = await answer(await call(both, 'POST', '/api/v1/pay/unified-order', body));
      expect(res).toMatchObject({
        status: 400,
        code: 'invalid_param',
        message: `"${field}" must not contain U+0000`,
      });
      expect(
        await count('SELECT count(*) AS n FROM orders WHERE merchant_order_no = :m', {
          m: body.merchant_order_no,
        }),
      ).toBe(0);
    },
  );

  test('when a merchant name holds U+0000, then 400 invalid_param and nothing is stored', async () => {
    const id = `m-${randomUUID()}`;
    const res = await answer(
      await call(both, 'POST', '/api/v1/merchant', { merchant_id: id, merchant_name: 'Tea\u0000House' }),
    );
    expect(res).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: '"merchant_name" must not contain U+0000',
    });
    expect(await count('SELECT count(*) AS n FROM merchants WHERE merchant_id = :id', { id })).toBe(0);
  });

  test('when a query value holds U+0000, then 400 invalid_param', async () => {
    for (const target of ['/api/v1/merchant?status=a%00', '/api/v1/notifications?trade_no=P%00']) {
      const res = await answer(await call(both, 'GET', target));
      expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
    }
  });

  test('when a text part of an upload holds U+0000, then 400 invalid_param', async () => {
    const res = await upload(both, [{ name: 'channel_code', value: 'sand\u0000box' }, ...pngParts()]);
    expect(res).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: 'form part "channel_code" must not contain U+0000',
    });
  });
});

describe('repeated query keys (SPEC §5.3)', () => {
  test.each(['/api/v1/merchant', '/api/v1/notifications'])(
    'when %s gets limit and offset twice, then each reads as 0',
    async (path) => {
      const res = await answer<{ list: unknown[]; limit: number; offset: number }>(
        await call(both, 'GET', `${path}?limit=1&limit=2&offset=3&offset=4`),
      );
      expect(res).toMatchObject({ status: 200, code: 'success', data: { list: [], limit: 0, offset: 0 } });
    },
  );
});

describe('__proto__ is an unknown field like any other', () => {
  test('when a create body has a top-level __proto__ key, then 400 invalid_param names it', async () => {
    const body = JSON.stringify(order()).replace(/}$/, ',"__proto__":{"amount":1}}');
    expect(await answer(await callRaw(both, 'POST', '/api/v1/pay/unified-order', body))).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: '"__proto__" is not allowed',
    });
  });

  test('when extra or a merchant body holds a __proto__ key, then 400 invalid_param', async () => {
    const inExtra = JSON.stringify(order()).replace(/}$/, ',"extra":{"__proto__":{"polluted":true}}}');
    expect(await answer(await callRaw(both, 'POST', '/api/v1/pay/unified-order', inExtra))).toMatchObject({
      status: 400,
      message: '"extra.__proto__" is not allowed',
    });
    const merchant = `{"merchant_id":"m-${randomUUID()}","merchant_name":"X","__proto__":{}}`;
    expect(await answer(await callRaw(both, 'POST', '/api/v1/merchant', merchant))).toMatchObject({
      status: 400,
      message: '"__proto__" is not allowed',
    });
  });

  test('when an upload has a part named __proto__, then 400 invalid_param names it', async () => {
    const res = await upload(both, [{ name: '__proto__', value: 'x' }, ...pngParts()]);
    expect(res).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: 'unexpected form part "__proto__"',
    });
  });
});

describe('uploaded files belong to the app that uploaded them (SPEC §2, §5.6)', () => {
  async function merchantOf(creds: AppCredentials): Promise<string> {
    const id = `m-${randomUUID()}`;
    const res = await answer(
      await call(creds, 'POST', '/api/v1/merchant', { merchant_id: id, merchant_name: 'Shop' }),
    );
    expect(res.code).toBe('success');
    return id;
  }

  test("when an app's application names another app's file_id, then 400 invalid_param and nothing is submitted", async () => {
    const owner = await stack.createApp(['merchants'], 'owner');
    const intruder = await stack.createApp(['merchants'], 'intruder');
    const uploaded = await upload(owner, pngParts());
    expect(uploaded.code).toBe('success');
    const fileId = uploaded.data!.file_id;
    const merchantId = await merchantOf(intruder);
    const before = await count('SELECT count(*) AS n FROM sandbox_applications');
    const res = await answer(
      await call(intruder, 'POST', `/api/v1/merchant/${merchantId}/apply`, {
        channel_code: 'sandbox',
        submit_data: { documents: { id_card_front: fileId } },
      }),
    );
    expect(res).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: `"submit_data.documents.id_card_front" names file_id ${fileId}, which this app has not uploaded to channel sandbox`,
    });
    expect(await count('SELECT count(*) AS n FROM sandbox_applications')).toBe(before);
    expect(await answer(await call(intruder, 'GET', `/api/v1/merchant/${merchantId}/audit`))).toMatchObject({
      status: 404,
      message: 'application not found',
    });

    // The owner may use its own file.
    const own = await merchantOf(owner);
    const ok = await answer(
      await call(owner, 'POST', `/api/v1/merchant/${own}/apply`, {
        channel_code: 'sandbox',
        submit_data: { documents: { id_card_front: fileId } },
      }),
    );
    expect(ok).toMatchObject({ status: 200, code: 'success' });
  });

  test('when an application names a file_id of the channel shape that nobody uploaded, then 400 invalid_param', async () => {
    const merchantId = await merchantOf(both);
    const fileId = `sbx_file_${'a'.repeat(24)}`;
    const res = await answer(
      await call(both, 'POST', `/api/v1/merchant/${merchantId}/apply`, {
        channel_code: 'sandbox',
        submit_data: { license: [fileId] },
      }),
    );
    expect(res).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(res.message).toContain('"submit_data.license[0]"');
  });
});

describe('uploads to a channel that cannot take them (SPEC §5.5)', () => {
  test('when channel_code is longer than any channel code, then 400 invalid_param', async () => {
    const res = await upload(both, [{ name: 'channel_code', value: 'c'.repeat(33) }, ...pngParts()]);
    expect(res).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: 'channel_code must be at most 32 characters',
    });
  });
});

/** Sends bytes on a raw connection and reads the whole answer (Node's parser sees them as sent). */
function rawExchange(
  port: number,
  request: Buffer | string,
): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
    socket.write(request);
  });
}

describe("requests Node's HTTP parser refuses get the envelope", () => {
  const port = () => Number(new URL(stack.baseUrl).port);

  test.each([
    [
      'headers over 16 KiB',
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
      431,
    ],
    ['a URL over 16 KiB', `GET /healthz?${'q'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
    [
      'a raw non-ASCII byte in the path',
      Buffer.concat([
        Buffer.from('GET /api/v1/pay/query/'),
        Buffer.from([0xff]),
        Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
      400,
    ],
    [
      'Content-Length with Transfer-Encoding',
      'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
    ],
  ])('when a request has %s, then it is answered in the envelope', async (_label, request, status) => {
    const res = await rawExchange(port(), request);
    expect(res.status).toBe(status);
    expect(res.headers).toMatch(/content-type: application\/json/i);
    const body = JSON.parse(res.body) as Envelope;
    expect(body).toMatchObject({ code: 'invalid_param', data: null, request_id: expect.any(String) });
    expect(body.message.length).toBeGreaterThan(0);
  });
});

describe('a create whose outcome the deadline left unknown', () => {
  let api: ExtraApi;
  const taskQueue = uniqueName('no-worker');

  // The same API, on a task queue no worker polls: as if every worker were down.
  beforeAll(async () => {
    api = await serveApi(stack, { taskQueue, requestTimeoutMs: 1_500 });
  });
  afterAll(async () => {
    await api?.close();
  });

  test('when no worker takes the order in time, then 502 channel_timeout says the outcome is unknown and to send it again', async () => {
    const body = order();
    const res = await answer(
      await signedFetch(api.baseUrl, both, 'POST', '/api/v1/pay/unified-order', { json: body }),
    );
    expect(res).toMatchObject({ status: 502, code: 'channel_timeout' });
    expect(res.message).toMatch(/^the outcome is not known yet/);
    expect(res.message).toContain('send the same request again');
    await stack.client.workflow
      .getHandle(orderWorkflowId(both.app_id, body.merchant_order_no))
      .terminate('test over')
      .catch(() => undefined);
  });
});
