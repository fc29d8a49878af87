/**
 * Generated requests for every endpoint of the contract: valid ones, and every way a hostile
 * or careless client gets one wrong (types, boundaries, unicode, nesting, oversize, duplicate
 * keys, `__proto__`, odd paths and methods, multipart shapes, digests and signatures). Built on
 * fast-check arbitraries so that a seed gives the same cases again.
 *
 * Longer than 400 lines: every family of request is composed from the same small generators
 * (texts, numbers, bodies, headers, path values) and weighed against the others in fuzzCase;
 * split, those generators would be exported for this one reader.
 */
import fc from 'fast-check';
import { multipart, type Part } from '../../test/support/multipart';

/** How a request is authenticated when sent (the signature is made then: created, nonce). */
export type AuthMode =
  'signed' | 'unsigned' | 'wrong-digest' | 'wrong-secret' | 'unknown-app' | 'stale' | 'garbage-signature';

export interface FuzzCase {
  /** The part of the contract it aims at, for the report. */
  family: string;
  method: string;
  /** Path and query exactly as sent. */
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  auth: AuthMode;
  /** Bytes written verbatim on a connection of their own instead (what no HTTP client sends). */
  raw?: Buffer;
}

/** Ids of real objects on the stack, so that some requests reach the business logic behind the checks. */
export interface Fixtures {
  pendingTradeNo: string;
  paidTradeNo: string;
  refundNo: string;
  merchantId: string;
  fileId: string;
  notificationId: string;
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** Texts a careless or hostile client sends. */
const NASTY_TEXTS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uFEFF',
  '\uD800',
  '\u202Eevil',
  '😀'.repeat(40),
  'Ｐ２０２６',
  '%zz',
  '%00',
  '../../etc/passwd',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'null',
  'NaN',
  'x'.repeat(65),
  'x'.repeat(129),
  'x'.repeat(513),
  'y'.repeat(10_000),
];

export const text = (): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...NASTY_TEXTS), weight: 3 },
    { arbitrary: fc.string({ maxLength: 80 }), weight: 2 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 1 },
  );

const NASTY_NUMBERS = [
  0,
  -1,
  1,
  1.5,
  -0,
  1e12,
  1e12 + 1,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  1e21,
  1440,
  1441,
  99999999999999,
];

export const number = (): fc.Arbitrary<number> =>
  fc.oneof(
    fc.constantFrom(...NASTY_NUMBERS),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );

/**
 * Percent-encodes a text; a lone surrogate (which encodeURIComponent refuses) becomes the
 * escape a careless client would send for it, `%ED%A0%80`, itself not valid UTF-8.
 */
export function percentEncode(t: string): string {
  const lone = /([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/;
  return t
    .split(lone)
    .map((part, i) => (i % 2 === 1 ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

/** `{"a": … {} …}` nested `levels` deep. */
function nested(levels: number): unknown {
  let v: unknown = {};
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
}

/** Any JSON value, including deep, wide and odd ones. */
export const anyJson = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 4 },
    { arbitrary: text(), weight: 2 },
    { arbitrary: number(), weight: 2 },
    { arbitrary: fc.constantFrom(null, true, false, [], {}), weight: 1 },
    { arbitrary: fc.integer({ min: 15, max: 40 }).map(nested), weight: 1 },
    { arbitrary: fc.constant(nested(3000)), weight: 1 },
  );

/** A field's value: usually valid, otherwise anything. */
function field<T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: anyJson(), weight: 1 });
}

const MERCHANT_ORDER_NO = fc.stringMatching(/^[A-Za-z0-9_\-|*.@]{1,64}$/);

/** A value present about one time in `every` (an unknown field, extra headers). */
function rarely<T>(value: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: every - 1 }, { arbitrary: value, weight: 1 });
}

/** A create that passes validation: it reaches the order's workflow and the channel. */
function validCreate(f: Fixtures) {
  return fc.record(
    {
      merchant_order_no: MERCHANT_ORDER_NO,
      pay_method: fc.constantFrom('qr_code', 'jsapi', 'h5', 'web'),
      amount: fc.integer({ min: 1, max: 1_000_000 }),
      subject: fc
        .string({ unit: 'grapheme', minLength: 1, maxLength: 128 })
        .filter((t) => !t.includes('\u0000')),
      notify_url: fc.constant('http://127.0.0.1:9/hook'),
      expire_minutes: fc.integer({ min: 1, max: 1440 }),
      merchant_id: fc.constant(f.merchantId),
      extra: fc.dictionary(fc.stringMatching(/^[a-z_]{1,12}$/), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
    },
    { requiredKeys: ['merchant_order_no', 'pay_method', 'amount', 'subject', 'notify_url'] },
  );
}

/** A create with any field valid, wrong or absent, and now and then a field the contract lacks. */
function createBody(f: Fixtures) {
  return fc
    .tuple(
      fc.record(
        {
          merchant_order_no: field(MERCHANT_ORDER_NO),
          pay_method: field(fc.constantFrom('qr_code', 'jsapi', 'mini_program', 'app', 'h5', 'web', 'card')),
          amount: field(fc.integer({ min: 1, max: 1_000_000 })),
          subject: field(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 128 })),
          notify_url: field(
            fc.constantFrom('http://127.0.0.1:9/hook', 'https://shop.example/n', 'ftp://x/y'),
          ),
          channel_code: field(fc.constantFrom('sandbox', 'wechatpay', 'alipay', 'SANDBOX', 'nope')),
          expire_minutes: field(fc.integer({ min: 1, max: 1440 })),
          profit_sharing_amount: field(fc.integer({ min: 0, max: 100 })),
          merchant_id: field(fc.constantFrom(f.merchantId, 'nobody')),
          extra: field(
            fc.oneof(
              fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
              fc.constant({ sandbox: { fail_create: true } }),
              fc.constant({ sandbox: { callback: 'drop' } }),
              fc.constant({ openid: 'o'.repeat(9000) }),
            ),
          ),
        },
        { requiredKeys: [] },
      ),
      rarely(anyJson(), 8),
    )
    .map(([body, colour]) => (colour === undefined ? body : { ...body, colour }));
}

/** A JSON body, usually as JSON.stringify writes it, sometimes broken in the ways text can be. */
function bodyText(value: fc.Arbitrary<unknown>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { arbitrary: value.map(json), weight: 200 },
    {
      arbitrary: fc
        .tuple(value, fc.constantFrom('trunc', 'dupkey', 'proto', 'trailing', 'bom', 'latin1', 'nul'))
        .map(([v, how]) => {
          const s = JSON.stringify(v) ?? 'null';
          switch (how) {
            case 'trunc':
              return Buffer.from(s.slice(0, Math.max(1, s.length - 3)));
            case 'dupkey':
              return Buffer.from(s.replace(/^\{/, '{"amount":"1","amount":1,'));
            case 'proto':
              return Buffer.from(s.replace(/^\{/, '{"__proto__":{"admin":true},'));
            case 'trailing':
              return Buffer.from(`${s} garbage`);
            case 'bom':
              return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(s)]);
            case 'latin1':
              return Buffer.concat([
                Buffer.from(s.slice(0, -1)),
                Buffer.from([0xe9, 0xff]),
                Buffer.from(s.slice(-1)),
              ]);
            default:
              return Buffer.concat([Buffer.from(s), Buffer.from([0])]);
          }
        }),
      weight: 40,
    },
    { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)), weight: 20 },
    { arbitrary: fc.constant(Buffer.alloc(0)), weight: 20 },
    { arbitrary: fc.constant(Buffer.from(JSON.stringify({ pad: 'p'.repeat(1024 * 1024) }))), weight: 1 },
  );
}

const AUTH: fc.Arbitrary<AuthMode> = fc.oneof(
  { arbitrary: fc.constant('signed' as const), weight: 20 },
  {
    arbitrary: fc.constantFrom<AuthMode>(
      'unsigned',
      'wrong-digest',
      'wrong-secret',
      'unknown-app',
      'stale',
      'garbage-signature',
    ),
    weight: 3,
  },
);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/json; charset=latin1',
];

/** Headers a client may add: content types, encodings, request ids, junk. */
const extraHeaders: fc.Arbitrary<Record<string, string>> = fc
  .record(
    {
      'content-type': fc.constantFrom(...CONTENT_TYPES),
      'content-encoding': fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'x-unknown'),
      'x-request-id': fc.oneof(fc.stringMatching(/^[A-Za-z0-9._-]{1,140}$/), fc.string({ maxLength: 40 })),
      accept: fc.constantFrom('application/xml', '*/*', 'text/html'),
    },
    { requiredKeys: [] },
  )
  .map((h) =>
    Object.fromEntries(Object.entries(h).filter(([, v]) => /^[\t\x20-\x7e]*$/.test(v as string))),
  ) as fc.Arbitrary<Record<string, string>>;

/** A path value: a real id, a random text percent-encoded, or raw odd characters. */
function pathValue(real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...real), weight: 3 },
    { arbitrary: text().map(percentEncode), weight: 3 },
    {
      arbitrary: fc.constantFrom(
        '%zz',
        '%',
        '%%',
        '%E0%A4%A',
        '%C0%AF',
        '%ED%A0%80',
        '%FF%FE',
        '%00',
        '..',
        '.',
        '%2F',
      ),
      weight: 2,
    },
  );
}

function queryString(keys: string[]): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.constantFrom(...keys, 'colour', '__proto__', 'limit[x]'), text()), { maxLength: 4 })
    .map((pairs) =>
      pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${percentEncode(v)}`).join('&')}`,
    );
}

function request(
  family: string,
  method: fc.Arbitrary<string>,
  target: fc.Arbitrary<string>,
  body?: fc.Arbitrary<Buffer | undefined>,
): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      method,
      target,
      body: body ?? fc.constant(undefined),
      auth: AUTH,
      extra: rarely(extraHeaders, 5),
    })
    .map(({ method: m, target: t, body: b, auth, extra }) => ({
      family,
      method: m,
      target: t,
      auth,
      body: b,
      headers: { ...(b !== undefined ? { 'content-type': 'application/json' } : {}), ...extra },
    }));
}

const uploadCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    parts: fc.array(
      fc.oneof(
        fc.record({
          name: fc.constant('file_media_type'),
          value: fc.oneof(
            fc.constantFrom('image/png', 'image/jpeg', 'application/pdf', 'image/gif', ''),
            text(),
          ),
        }),
        fc.record({
          name: fc.constantFrom('channel_code', '__proto__', 'colour', 'file'),
          value: fc.oneof(fc.constantFrom('sandbox', 'nope', ''), text()),
        }),
        fc.record({
          name: fc.constantFrom('file', 'file', 'attachment'),
          filename: fc.oneof(
            fc.constantFrom('id.png', '../../etc/passwd', 'C:\\x\\y.png', '', 'a\u0000b.png', '😀.png'),
            fc.string({ maxLength: 300 }),
          ),
          contentType: fc.constantFrom('image/png', 'application/octet-stream', 'text/plain'),
          content: fc.oneof(
            {
              arbitrary: fc.uint8Array({ minLength: 1, maxLength: 4096 }).map((b) => Buffer.from(b)),
              weight: 80,
            },
            { arbitrary: fc.constant(Buffer.alloc(0)), weight: 10 },
            { arbitrary: fc.constant(Buffer.alloc(5 * 1024 * 1024 + 1, 1)), weight: 1 },
          ),
        }),
      ),
      { maxLength: 5 },
    ),
    shape: fc.constantFrom('ok', 'ok', 'ok', 'no-boundary', 'wrong-boundary', 'truncated', 'not-multipart'),
    auth: AUTH,
  })
  .map(({ parts, shape, auth }) => {
    const boundary = `fz${parts.length}x${shape.length}`;
    let { body } = multipart(parts as Part[], boundary);
    let contentType = `multipart/form-data; boundary=${boundary}`;
    if (shape === 'no-boundary') contentType = 'multipart/form-data';
    if (shape === 'wrong-boundary') contentType = 'multipart/form-data; boundary=other';
    if (shape === 'truncated') body = body.subarray(0, Math.floor(body.length / 2));
    if (shape === 'not-multipart') contentType = 'application/json';
    return {
      family: 'upload',
      method: 'POST',
      target: '/api/v1/merchant/upload-file',
      headers: { 'content-type': contentType },
      body,
      auth,
    };
  });

const ROUTE_SHAPES = [
  '/api/v1/pay/unified-order',
  '/api/v1/pay/query/P1',
  '/api/v1/pay/close',
  '/api/v1/pay/refund',
  '/api/v1/pay/refund/query/R1',
  '/api/v1/notifications',
  '/api/v1/merchant',
  '/api/v1/merchant/upload-file',
  '/api/v1/merchant/m1/apply',
  '/api/v1/notify/payment/sandbox',
  '/healthz',
  '/readyz',
];

/** Paths and methods no route has: case changes, dot segments, doubled slashes, long, encoded. */
const oddPathCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    base: fc.constantFrom(...ROUTE_SHAPES),
    how: fc.constantFrom(
      'upper',
      'capital',
      'double-slash',
      'dot',
      'dotdot',
      'trailing',
      'encoded',
      'long',
      'random',
    ),
    random: fc.array(text().map(percentEncode), { minLength: 1, maxLength: 5 }),
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'),
    auth: AUTH,
  })
  .map(({ base, how, random, method, auth }): FuzzCase => {
    const target = {
      upper: base.toUpperCase(),
      capital: base.replace(/\/([a-z])/g, (_m, c: string) => `/${c.toUpperCase()}`),
      'double-slash': base.replace('/v1/', '//v1//'),
      dot: base.replace('/v1/', '/v1/./'),
      dotdot: base.replace('/v1/', '/v1/x/../'),
      trailing: `${base}/`,
      encoded: base.replace(/a/g, '%61'),
      long: `${base}/${'seg/'.repeat(900)}`,
      random: `/${random.join('/')}`,
    }[how];
    return {
      family: 'odd-path',
      method,
      target,
      headers: (method === 'POST' || method === 'PUT'
        ? { 'content-type': 'application/json' }
        : {}) as Record<string, string>,
      body: method === 'POST' || method === 'PUT' ? Buffer.from('{}') : undefined,
      auth,
    };
  });

/** What HTTP clients never send, written on a socket as is. */
const RAW_REQUESTS: Buffer[] = [
  Buffer.from(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`),
  Buffer.from(`GET /healthz?${'q'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`),
  Buffer.concat([
    Buffer.from('GET /api/v1/pay/query/'),
    Buffer.from([0xff, 0xfe]),
    Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
  ]),
  Buffer.from(
    'POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  ),
  Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'),
  Buffer.from('GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n'),
  Buffer.from('G@T /healthz HTTP/1.1\r\nHost: x\r\n\r\n'),
  Buffer.from('GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n'),
  Buffer.from('POST /api/v1/pay/close HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'),
  Buffer.from(
    'POST /api/v1/pay/close HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
  ),
  Buffer.from('POST /api/v1/pay/close HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
  Buffer.from('GET /healthz HTTP/1.1\nHost: x\n\n'),
  Buffer.from('GET /healthz HTTP/1.0\r\n\r\n'),
  Buffer.from('GET /api/v1/pay/query/P1%0d%0aX:y HTTP/1.1\r\nHost: x\r\n\r\n'),
];

const rawCase: fc.Arbitrary<FuzzCase> = fc.constantFrom(...RAW_REQUESTS).map((raw) => ({
  family: 'raw-http',
  method: raw.subarray(0, raw.indexOf(0x20)).toString('latin1'),
  target: '(raw)',
  headers: {},
  auth: 'unsigned' as const,
  raw,
}));

const callbackCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    code: fc.oneof(
      { arbitrary: fc.constantFrom('sandbox', 'wechatpay', 'alipay', 'nope', 'x'.repeat(33)), weight: 4 },
      { arbitrary: pathValue(['sandbox']), weight: 1 },
    ),
    body: bodyText(
      fc.oneof(
        fc.record(
          {
            type: fc.constantFrom('payment.succeeded', 'refund.succeeded', 'x'),
            trade_no: fc.constantFrom('P1', 'P2026'),
            amount: number(),
          },
          { requiredKeys: [] },
        ),
        anyJson(),
      ),
    ),
    signature: fc.oneof(
      fc.constant(undefined),
      fc.constantFrom('t=1,v1=00', 't=abc', ''),
      fc.string({ maxLength: 40 }),
    ),
  })
  .map(({ code, body, signature }) => ({
    family: 'callback',
    method: 'POST',
    target: `/api/v1/notify/payment/${code}`,
    headers: {
      'content-type': 'application/json',
      ...(signature !== undefined && /^[\t\x20-\x7e]*$/.test(signature)
        ? { 'sandbox-signature': signature }
        : {}),
    },
    body,
    auth: 'unsigned' as const,
  }));

/** Every family of request, weighted by how much of the contract it covers. */
export function fuzzCase(f: Fixtures): fc.Arbitrary<FuzzCase> {
  const trade = pathValue([f.pendingTradeNo, f.paidTradeNo, 'P1']);
  const tradeField = field(fc.constantFrom(f.pendingTradeNo, f.paidTradeNo, 'P1'));
  const merchant = pathValue([f.merchantId, 'nobody']);
  return fc.oneof(
    {
      arbitrary: request(
        'create',
        fc.constant('POST'),
        fc.constant('/api/v1/pay/unified-order'),
        bodyText(createBody(f)),
      ),
      weight: 12,
    },
    {
      arbitrary: request(
        'create-valid',
        fc.constant('POST'),
        fc.constant('/api/v1/pay/unified-order'),
        validCreate(f).map(json),
      ),
      weight: 2,
    },
    {
      arbitrary: request(
        'query',
        fc.constant('GET'),
        trade.map((t) => `/api/v1/pay/query/${t}`),
      ),
      weight: 6,
    },
    {
      arbitrary: request(
        'close',
        fc.constant('POST'),
        fc.constant('/api/v1/pay/close'),
        bodyText(fc.record({ trade_no: tradeField, colour: anyJson() }, { requiredKeys: ['trade_no'] })),
      ),
      weight: 5,
    },
    {
      arbitrary: request(
        'refund',
        fc.constant('POST'),
        fc.constant('/api/v1/pay/refund'),
        bodyText(
          fc.record(
            {
              trade_no: tradeField,
              refund_amount: field(fc.integer({ min: 1, max: 3 })),
              reason: field(fc.string({ maxLength: 256 })),
              notify_url: field(fc.constantFrom('http://127.0.0.1:9/r', '')),
              merchant_refund_no: field(fc.stringMatching(/^[A-Za-z0-9]{1,64}$/)),
            },
            { requiredKeys: ['trade_no', 'refund_amount'] },
          ),
        ),
      ),
      weight: 6,
    },
    {
      arbitrary: request(
        'refund-query',
        fc.constant('GET'),
        pathValue([f.refundNo, 'R1']).map((r) => `/api/v1/pay/refund/query/${r}`),
      ),
      weight: 4,
    },
    {
      arbitrary: request(
        'notifications',
        fc.constant('GET'),
        queryString(['trade_no', 'refund_no', 'status', 'limit', 'offset']).map(
          (q) => `/api/v1/notifications${q}`,
        ),
      ),
      weight: 5,
    },
    {
      arbitrary: request(
        'resend',
        fc.constant('POST'),
        pathValue([f.notificationId, 'ntf_x']).map((n) => `/api/v1/notifications/${n}/resend`),
        fc.oneof(fc.constant(undefined), bodyText(anyJson())),
      ),
      weight: 3,
    },
    {
      arbitrary: request(
        'merchant-create',
        fc.constant('POST'),
        fc.constant('/api/v1/merchant'),
        bodyText(
          fc.record(
            {
              merchant_id: field(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/)),
              merchant_name: field(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 128 })),
              license_no: field(fc.string({ maxLength: 64 })),
              legal_person: field(fc.string({ maxLength: 64 })),
              bank_account: field(fc.stringMatching(/^\d{4,30}$/)),
              profit_sharing: field(
                fc.record({
                  receivers: fc.array(
                    fc.record({
                      type: field(fc.constant('merchant')),
                      account: field(fc.string({ minLength: 1, maxLength: 64 })),
                      weight: field(fc.integer({ min: 1, max: 10 })),
                    }),
                    { maxLength: 3 },
                  ),
                  max_ratio: field(fc.double({ min: 0, max: 1, noNaN: true })),
                }),
              ),
            },
            { requiredKeys: [] },
          ),
        ),
      ),
      weight: 6,
    },
    {
      arbitrary: request(
        'merchant-list',
        fc.constant('GET'),
        queryString(['status', 'limit', 'offset']).map((q) => `/api/v1/merchant${q}`),
      ),
      weight: 4,
    },
    {
      arbitrary: request(
        'merchant-get',
        fc.constant('GET'),
        merchant.map((m) => `/api/v1/merchant/${m}`),
      ),
      weight: 4,
    },
    {
      arbitrary: request(
        'apply',
        fc.constant('POST'),
        merchant.map((m) => `/api/v1/merchant/${m}/apply`),
        bodyText(
          fc.record(
            {
              channel_code: field(fc.constantFrom('sandbox', 'nope')),
              submit_data: field(
                fc.oneof(
                  fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
                  fc.constant({ license: f.fileId }),
                  fc.constant({ license: 'sbx_file_aaaaaaaaaaaaaaaaaaaaaaaa' }),
                ),
              ),
              notify_url: field(fc.constant('http://127.0.0.1:9/a')),
            },
            { requiredKeys: [] },
          ),
        ),
      ),
      weight: 4,
    },
    {
      arbitrary: request(
        'audit',
        fc.constant('GET'),
        merchant.map((m) => `/api/v1/merchant/${m}/audit`),
      ),
      weight: 3,
    },
    { arbitrary: uploadCase, weight: 5 },
    { arbitrary: callbackCase, weight: 6 },
    { arbitrary: oddPathCase, weight: 8 },
    {
      arbitrary: request(
        'health',
        fc.constantFrom('GET', 'POST', 'HEAD'),
        fc.constantFrom('/healthz', '/readyz'),
      ),
      weight: 1,
    },
    { arbitrary: rawCase, weight: 2 },
  );
}

/** `count` cases for `seed`, the same ones every time. */
export function generateCases(f: Fixtures, seed: number, count: number): FuzzCase[] {
  return fc.sample(fuzzCase(f), { seed, numRuns: count });
}
