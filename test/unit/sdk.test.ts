import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  announcedSha256,
  parseSignatureHeaders,
  signatureBase,
  verifyHmac,
} from '../../src/platform/crypto/http-signature';
import { DurapayClient, DurapayError } from '../../src/sdk';
import type { CreateOrderInput } from '../../src/sdk';

const APP_ID = 'app_abcdefghijklmnop';
const SECRET = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I';

interface Received {
  method: string;
  target: string;
  headers: Record<string, string>;
  body: Buffer;
}

interface Reply {
  status: number;
  body: string;
  contentType?: string;
  delayMs?: number;
}

const success = (data: unknown): Reply => ({
  status: 200,
  body: JSON.stringify({ code: 'success', message: 'success', data, request_id: 'req-ok' }),
});

let server: Server;
let baseUrl: string;
let received: Received[];
let reply: (req: Received) => Reply;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const got = { method: req.method ?? '', target: req.url ?? '', headers, body: Buffer.concat(chunks) };
      received.push(got);
      const r = reply(got);
      const send = () =>
        res.writeHead(r.status, { 'content-type': r.contentType ?? 'application/json' }).end(r.body);
      if (r.delayMs) setTimeout(send, r.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
  reply = () => success(null);
});

const client = (timeoutMs?: number) =>
  new DurapayClient({ baseUrl: `${baseUrl}/`, appId: APP_ID, secret: SECRET, timeoutMs });

function only(): Received {
  expect(received).toHaveLength(1);
  return received[0]!;
}

/** Checks the request the way the service does and reports what the signature covered. */
function verified(req: Received) {
  const parsed = parseSignatureHeaders(req.headers['signature-input']!, req.headers['signature']!);
  const base = signatureBase(parsed.covered, {
    method: req.method,
    target: req.target,
    headers: req.headers,
  });
  return {
    valid: verifyHmac(base, SECRET, parsed.signature),
    base,
    covered: parsed.covered[0].map(([name]) => name),
    keyid: parsed.params.get('keyid'),
    alg: parsed.params.get('alg'),
  };
}

function digestMatches(req: Received): boolean {
  const announced = announcedSha256(req.headers['content-digest']!);
  return announced.equals(createHash('sha256').update(req.body).digest());
}

const order: CreateOrderInput = {
  merchant_order_no: 'M-1001',
  pay_method: 'qr_code',
  amount: 100,
  subject: '咖啡 × 2',
  notify_url: 'https://shop.example/notify',
};

describe('request signing', () => {
  test('when a JSON POST is sent, then it is signed over its content digest and the digest matches the body', async () => {
    const data = { trade_no: 'P1', pay_credential: { pay_url: 'u' }, is_idempotent: false };
    reply = () => success(data);

    await expect(client().createOrder(order)).resolves.toEqual(data);

    const req = only();
    expect(req.method).toBe('POST');
    expect(req.target).toBe('/api/v1/pay/unified-order');
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body.toString('utf8'))).toEqual(order);
    expect(digestMatches(req)).toBe(true);
    const sig = verified(req);
    expect(sig).toMatchObject({ valid: true, keyid: APP_ID, alg: 'hmac-sha256' });
    expect(sig.covered).toEqual(['@method', '@path', '@query', 'content-digest']);
  });

  test('when a GET without a query is sent, then it has no Content-Digest and covers "@query" as "?"', async () => {
    await client().queryOrder('P1');

    const req = only();
    expect(req.target).toBe('/api/v1/pay/query/P1');
    expect(req.headers['content-digest']).toBeUndefined();
    const sig = verified(req);
    expect(sig.valid).toBe(true);
    expect(sig.covered).toEqual(['@method', '@path', '@query']);
    expect(sig.base).toContain('"@method": GET\n"@path": /api/v1/pay/query/P1\n"@query": ?\n');
  });

  test('when list parameters are given, then the query omits the undefined ones and is signed as sent', async () => {
    await client().listMerchants({ status: 'active', limit: 5, offset: undefined });

    const req = only();
    expect(req.target).toBe('/api/v1/merchant?status=active&limit=5');
    const sig = verified(req);
    expect(sig.valid).toBe(true);
    expect(sig.base).toContain('"@query": ?status=active&limit=5\n');
  });

  test('when no list parameters are given, then no query string is sent', async () => {
    await client().listNotifications();

    expect(only().target).toBe('/api/v1/notifications');
    expect(verified(only()).valid).toBe(true);
  });

  test('when the path holds characters fetch re-encodes, then the signature covers the encoded form', async () => {
    await client().request('GET', '/api/v1/merchant?status=a b');

    const req = only();
    expect(req.target).toBe('/api/v1/merchant?status=a%20b');
    expect(verified(req).valid).toBe(true);
  });

  test('when a body-less POST is sent, then its empty body is signed with a matching digest', async () => {
    await client().resendNotification('n-1');

    const req = only();
    expect(req.target).toBe('/api/v1/notifications/n-1/resend');
    expect(req.body).toHaveLength(0);
    expect(digestMatches(req)).toBe(true);
    expect(verified(req).valid).toBe(true);
  });

  test('when a request id is given, then it is sent as X-Request-Id', async () => {
    await client().request('GET', '/api/v1/merchant', { requestId: 'trace-42' });

    expect(only().headers['x-request-id']).toBe('trace-42');
  });
});

describe('endpoints', () => {
  const awkward = 'A/B C?#%';
  const encoded = 'A%2FB%20C%3F%23%25';

  test.each<[string, (c: DurapayClient) => Promise<unknown>, string, string, unknown]>([
    ['queryOrder', (c) => c.queryOrder(awkward), 'GET', `/api/v1/pay/query/${encoded}`, undefined],
    ['closeOrder', (c) => c.closeOrder('P1'), 'POST', '/api/v1/pay/close', { trade_no: 'P1' }],
    [
      'refund',
      (c) => c.refund({ trade_no: 'P1', refund_amount: 10, merchant_refund_no: 'R-1' }),
      'POST',
      '/api/v1/pay/refund',
      { trade_no: 'P1', refund_amount: 10, merchant_refund_no: 'R-1' },
    ],
    ['queryRefund', (c) => c.queryRefund(awkward), 'GET', `/api/v1/pay/refund/query/${encoded}`, undefined],
    [
      'createMerchant',
      (c) => c.createMerchant({ merchant_id: 'm1', merchant_name: 'Shop' }),
      'POST',
      '/api/v1/merchant',
      { merchant_id: 'm1', merchant_name: 'Shop' },
    ],
    ['getMerchant', (c) => c.getMerchant(awkward), 'GET', `/api/v1/merchant/${encoded}`, undefined],
    [
      'applyMerchant',
      (c) => c.applyMerchant(awkward, { channel_code: 'sandbox', submit_data: { a: 1 } }),
      'POST',
      `/api/v1/merchant/${encoded}/apply`,
      { channel_code: 'sandbox', submit_data: { a: 1 } },
    ],
    [
      'getMerchantAudit',
      (c) => c.getMerchantAudit(awkward),
      'GET',
      `/api/v1/merchant/${encoded}/audit`,
      undefined,
    ],
    [
      'attachChannelAccount',
      (c) => c.attachChannelAccount(awkward, 'wechatpay', { sub_mchid: '1900000109' }),
      'PUT',
      `/api/v1/merchant/${encoded}/channel-accounts/wechatpay`,
      { sub_mchid: '1900000109' },
    ],
    [
      'listChannelAccounts',
      (c) => c.listChannelAccounts(awkward),
      'GET',
      `/api/v1/merchant/${encoded}/channel-accounts`,
      undefined,
    ],
    [
      'detachChannelAccount',
      (c) => c.detachChannelAccount(awkward, 'alipay'),
      'DELETE',
      `/api/v1/merchant/${encoded}/channel-accounts/alipay`,
      undefined,
    ],
    [
      'startAlipayAuthorization',
      (c) => c.startAlipayAuthorization(awkward, { redirect_url: 'https://shop.example/back' }),
      'POST',
      `/api/v1/merchant/${encoded}/channel-accounts/alipay/authorization`,
      { redirect_url: 'https://shop.example/back' },
    ],
    [
      'listNotifications',
      (c) => c.listNotifications({ trade_no: 'P1', status: 'failed', limit: 0 }),
      'GET',
      '/api/v1/notifications?trade_no=P1&status=failed&limit=0',
      undefined,
    ],
    [
      'resendNotification',
      (c) => c.resendNotification(awkward),
      'POST',
      `/api/v1/notifications/${encoded}/resend`,
      undefined,
    ],
  ])(
    'when %s is called, then it sends a signed request to its URL-encoded path',
    async (_, call, method, target, json) => {
      await call(client());

      const req = only();
      expect([req.method, req.target]).toEqual([method, target]);
      if (json !== undefined) expect(JSON.parse(req.body.toString('utf8'))).toEqual(json);
      expect(verified(req).valid).toBe(true);
    },
  );
});

describe('multipart upload', () => {
  const file = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff, 0x0d, 0x0a]);

  function parts(req: Received) {
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(req.headers['content-type'] ?? '')?.[1];
    expect(boundary).toBeDefined();
    const body = req.body.toString('latin1');
    expect(body.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
    return body
      .slice(0, -`\r\n--${boundary}--\r\n`.length)
      .split(`\r\n--${boundary}\r\n`)
      .map((part, i) => {
        const raw = i === 0 ? part.slice(`--${boundary}\r\n`.length) : part;
        const split = raw.indexOf('\r\n\r\n');
        return {
          head: raw.slice(0, split).split('\r\n'),
          content: Buffer.from(raw.slice(split + 4), 'latin1'),
        };
      });
  }

  test('when a file is uploaded, then the form carries its parts and the digest covers the exact bytes', async () => {
    reply = () => success({ file_id: 'F1' });

    await expect(
      client().uploadMerchantFile({
        file,
        fileName: 'lic"ense.png',
        fileMediaType: 'image/png',
        channelCode: 'sandbox',
      }),
    ).resolves.toEqual({ file_id: 'F1' });

    const req = only();
    expect(req.target).toBe('/api/v1/merchant/upload-file');
    expect(parts(req)).toEqual([
      { head: ['Content-Disposition: form-data; name="channel_code"'], content: Buffer.from('sandbox') },
      { head: ['Content-Disposition: form-data; name="file_media_type"'], content: Buffer.from('image/png') },
      {
        head: [
          'Content-Disposition: form-data; name="file"; filename="lic%22ense.png"',
          'Content-Type: image/png',
        ],
        content: file,
      },
    ]);
    expect(digestMatches(req)).toBe(true);
    const sig = verified(req);
    expect(sig.valid).toBe(true);
    expect(sig.covered).toContain('content-digest');
  });

  test('when no channel code is given, then the form has no channel_code part', async () => {
    await client().uploadMerchantFile({ file, fileName: 'a.pdf', fileMediaType: 'application/pdf' });

    expect(parts(only()).map((p) => p.head[0])).toEqual([
      'Content-Disposition: form-data; name="file_media_type"',
      'Content-Disposition: form-data; name="file"; filename="a.pdf"',
    ]);
  });
});

describe('answers', () => {
  test('when the service answers a failure envelope, then a DurapayError carries its code, message, status and request id', async () => {
    reply = (req) => ({
      status: 422,
      body: JSON.stringify({
        code: 'order_not_found',
        message: 'order not found',
        data: null,
        request_id: req.headers['x-request-id'],
      }),
    });

    const err = await client()
      .request('GET', '/api/v1/pay/query/P9', { requestId: 'trace-7' })
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(DurapayError);
    expect(err).toMatchObject({
      code: 'order_not_found',
      message: 'order not found',
      httpStatus: 422,
      requestId: 'trace-7',
    });
  });

  test('when the answer is not JSON, then a DurapayError internal_system shows the status and at most 200 chars', async () => {
    const html = `<html>${'x'.repeat(194)}TAIL-NOT-SHOWN</html>`;
    reply = () => ({ status: 502, body: html, contentType: 'text/html' });

    const err = await client()
      .queryOrder('P1')
      .catch((e: unknown) => e);

    expect(err).toBeInstanceOf(DurapayError);
    const { code, httpStatus, message } = err as DurapayError;
    expect({ code, httpStatus }).toEqual({ code: 'internal_system', httpStatus: 502 });
    expect(message).toContain('HTTP 502');
    expect(message).toContain(html.slice(0, 200));
    expect(message).not.toContain(html.slice(0, 201));
  });

  test('when the answer is JSON but not an envelope, then it is treated as not the service answering', async () => {
    reply = () => ({ status: 200, body: '[1,2]' });

    await expect(client().queryOrder('P1')).rejects.toMatchObject({
      code: 'internal_system',
      httpStatus: 200,
    });
  });

  test('when the service answers slower than timeoutMs, then the call is aborted', async () => {
    reply = () => ({ ...success(null), delayMs: 2_000 });

    await expect(client(50).queryOrder('P1')).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});
