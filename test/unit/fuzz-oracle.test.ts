import { violations, type Observed } from '../../fuzz/lib/oracle';
import { generateCases, percentEncode } from '../../fuzz/lib/generate';

const envelope = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1', ...headers },
  body: Buffer.from(JSON.stringify({ data: null, request_id: 'r1', ...body })),
  ms: 5,
});
const create = { method: 'POST', target: '/api/v1/pay/unified-order' };

describe('the fuzz oracle', () => {
  test('when an answer is the envelope with its status, then there is no violation', () => {
    expect(
      violations(create, envelope(400, { code: 'invalid_param', message: '"amount" is required' }), 10_000),
    ).toEqual([]);
    expect(
      violations(create, envelope(200, { code: 'success', message: 'success', data: {} }), 10_000),
    ).toEqual([]);
    expect(
      violations(
        create,
        envelope(502, { code: 'channel_timeout', message: 'the outcome is not known yet' }),
        10_000,
      ),
    ).toEqual([]);
  });

  test.each<[string, Observed, RegExp]>([
    [
      'plain text',
      { status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from('GET, POST'), ms: 1 },
      /not the JSON envelope/,
    ],
    [
      'a 500 internal_system',
      envelope(500, { code: 'internal_system', message: 'internal system error' }),
      /where the client is at fault/,
    ],
    ['a status that is not its code', envelope(500, { code: 'invalid_param', message: 'x' }), /not 400/],
    [
      'a stack trace',
      envelope(400, { code: 'invalid_param', message: 'Error: x\n    at f (/app/a.js:1:2)' }),
      /stack trace/,
    ],
    [
      'SQL text',
      envelope(400, { code: 'invalid_param', message: 'SELECT * FROM orders WHERE x' }),
      /SQL text/,
    ],
    ['an unknown code', envelope(418, { code: 'teapot', message: 'x' }), /unknown code/],
    [
      'a request id of its own',
      envelope(400, { code: 'invalid_param', message: 'x' }, { 'x-request-id': 'r2' }),
      /request_id/,
    ],
    [
      'extra keys',
      { ...envelope(400, { code: 'invalid_param', message: 'x', stack: 'y' }) },
      /envelope has keys/,
    ],
    [
      'an answer past the deadline',
      { ...envelope(400, { code: 'invalid_param', message: 'x' }), ms: 10_001 },
      /past the 10000 ms deadline/,
    ],
  ])('when the answer has %s, then it is a violation', (_what, seen, problem) => {
    expect(violations(create, seen, 10_000).join('; ')).toMatch(problem);
  });

  test('when a callback answers anything but 200 text/plain fail, then it is a violation', () => {
    const callback = { method: 'POST', target: '/api/v1/notify/payment/sandbox' };
    const plain = (text: string) => ({
      status: 200,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: Buffer.from(text),
      ms: 1,
    });
    expect(violations(callback, plain('fail'), 10_000)).toEqual([]);
    expect(violations(callback, plain('success'), 10_000)).not.toEqual([]);
    expect(violations(callback, envelope(400, { code: 'invalid_param', message: 'x' }), 10_000)).not.toEqual(
      [],
    );
  });

  test('when the merchant endpoints answer the 500s SPEC gives them, then there is no violation', () => {
    const merchant = { method: 'POST', target: '/api/v1/merchant' };
    expect(
      violations(
        merchant,
        envelope(500, { code: 'database_error', message: 'merchant_id already exists' }),
        10_000,
      ),
    ).toEqual([]);
    const upload = { method: 'POST', target: '/api/v1/merchant/upload-file' };
    expect(
      violations(
        upload,
        envelope(500, { code: 'internal_system', message: 'channel x does not support onboarding' }),
        10_000,
      ),
    ).toEqual([]);
    expect(
      violations(
        upload,
        envelope(500, { code: 'internal_system', message: 'internal system error' }),
        10_000,
      ),
    ).not.toEqual([]);
  });
});

describe('the fuzz generator', () => {
  const fixtures = {
    pendingTradeNo: 'P1',
    paidTradeNo: 'P2',
    refundNo: 'R1',
    merchantId: 'm1',
    fileId: 'sbx_file_aaaaaaaaaaaaaaaaaaaaaaaa',
    notificationId: 'ntf_x',
  };

  test('when a seed is given twice, then the same cases come, and every family of the contract is among them', () => {
    const a = generateCases(fixtures, 7, 3_000);
    const b = generateCases(fixtures, 7, 3_000);
    expect(a.map((c) => [c.method, c.target, c.auth])).toEqual(b.map((c) => [c.method, c.target, c.auth]));
    const families = new Set(a.map((c) => c.family));
    for (const family of [
      'create',
      'create-valid',
      'query',
      'close',
      'refund',
      'refund-query',
      'notifications',
      'resend',
      'merchant-create',
      'merchant-list',
      'merchant-get',
      'apply',
      'audit',
      'upload',
      'callback',
      'odd-path',
      'raw-http',
      'health',
    ]) {
      expect(families).toContain(family);
    }
  });

  test('when a text has a lone surrogate, then it is encoded as the escape a careless client sends', () => {
    expect(percentEncode('a\uD800b😀')).toBe('a%ED%A0%80b%F0%9F%98%80');
  });
});
