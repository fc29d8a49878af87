import { createHash } from 'node:crypto';
import { parseDictionary, type InnerList } from 'structured-headers';
import {
  announcedSha256,
  contentDigest,
  hmacSha256,
  parseSignatureHeaders,
  signatureBase,
  signRequest,
  splitTarget,
  verifyHmac,
} from '../../src/platform/crypto/http-signature';

// RFC 9421 Appendix B.2 test-request and B.1.5 test-shared-secret.
const RFC_REQUEST = {
  method: 'POST',
  target: '/foo?param=Value&Pet=dog',
  authority: 'example.com',
  scheme: 'https',
  headers: {
    host: 'example.com',
    date: 'Tue, 20 Apr 2021 02:07:55 GMT',
    'content-type': 'application/json',
    'content-digest':
      'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
    'content-length': '18',
  },
};
const RFC_SHARED_SECRET = Buffer.from(
  'uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==',
  'base64',
);

function coveredFrom(signatureInput: string, label: string): InnerList {
  return parseDictionary(signatureInput).get(label) as InnerList;
}

describe('signature base (RFC 9421 §2.5)', () => {
  test('when the B.2.5 hmac-sha256 example is rebuilt, then its base and signature match the RFC', () => {
    const input =
      'sig-b25=("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"';
    const base = signatureBase(coveredFrom(input, 'sig-b25'), RFC_REQUEST);
    expect(base).toBe(
      [
        '"date": Tue, 20 Apr 2021 02:07:55 GMT',
        '"@authority": example.com',
        '"content-type": application/json',
        '"@signature-params": ("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"',
      ].join('\n'),
    );
    expect(hmacSha256(RFC_SHARED_SECRET, base).toString('base64')).toBe(
      'pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=',
    );
    const parsed = parseSignatureHeaders(input, 'sig-b25=:pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=:');
    expect(verifyHmac(base, RFC_SHARED_SECRET, parsed.signature)).toBe(true);
  });

  test('when derived components are covered, then their values follow §2.2', () => {
    const input =
      'sig=("@method" "@path" "@query" "@target-uri" "@request-target" "@scheme" "@query-param";name="Pet");created=1';
    const lines = signatureBase(coveredFrom(input, 'sig'), RFC_REQUEST).split('\n');
    expect(lines.slice(0, -1)).toEqual([
      '"@method": POST',
      '"@path": /foo',
      '"@query": ?param=Value&Pet=dog',
      '"@target-uri": https://example.com/foo?param=Value&Pet=dog',
      '"@request-target": /foo?param=Value&Pet=dog',
      '"@scheme": https',
      '"@query-param";name="Pet": dog',
    ]);
  });

  test('when the request has no query string, then "@query" is "?"', () => {
    expect(splitTarget('/api/v1/pay/query/P1')).toEqual({ path: '/api/v1/pay/query/P1', query: '?' });
    expect(splitTarget('/a?')).toEqual({ path: '/a', query: '?' });
    expect(splitTarget('/a?b=%20c')).toEqual({ path: '/a', query: '?b=%20c' });
  });

  test.each([
    ['a covered header is absent', 'sig=("x-missing");created=1', /covered header "x-missing" is missing/],
    ['a component is covered twice', 'sig=("@method" "@method");created=1', /covered twice/],
    ['a component has unsupported parameters', 'sig=("content-type";sf);created=1', /not supported/],
    ['an unknown derived component is covered', 'sig=("@status");created=1', /not supported/],
  ])('when %s, then building the base fails', (_what, input, message) => {
    expect(() => signatureBase(coveredFrom(input, 'sig'), RFC_REQUEST)).toThrow(message);
  });
});

describe('Content-Digest (RFC 9530)', () => {
  test('when a body is digested, then the header carries its sha-256 as a byte sequence', () => {
    const body = '{"hello": "world"}';
    const header = contentDigest(body);
    expect(header).toBe(`sha-256=:${createHash('sha256').update(body).digest('base64')}:`);
    expect(header).toBe('sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:');
    expect(announcedSha256(header).equals(createHash('sha256').update(body).digest())).toBe(true);
  });

  test('when the header has only sha-512 or is malformed, then no sha-256 digest is found', () => {
    expect(() => announcedSha256(RFC_REQUEST.headers['content-digest'])).toThrow(/no sha-256/);
    expect(() => announcedSha256('sha-256=abc')).toThrow(/no sha-256/);
    expect(() => announcedSha256('((')).toThrow(/not a valid structured field/);
  });
});

describe('signRequest', () => {
  test('when a request is signed, then it covers the required components and verifies with the secret as UTF-8', () => {
    const signed = signRequest({
      method: 'POST',
      target: '/api/v1/pay/close?x=1',
      body: '{"trade_no":"P1"}',
      keyId: 'app_abcdefghijklmnop',
      secret: 'the-secret',
      created: 1_763_789_462,
      nonce: 'nonce-123456',
    });
    expect(signed['signature-input']).toBe(
      'sig1=("@method" "@path" "@query" "content-digest");created=1763789462;nonce="nonce-123456";keyid="app_abcdefghijklmnop";alg="hmac-sha256"',
    );
    const parsed = parseSignatureHeaders(signed['signature-input'], signed.signature);
    const base = signatureBase(parsed.covered, {
      method: 'POST',
      target: '/api/v1/pay/close?x=1',
      headers: { 'content-digest': signed['content-digest'] },
    });
    expect(verifyHmac(base, Buffer.from('the-secret', 'utf8'), parsed.signature)).toBe(true);
    expect(verifyHmac(base, 'other-secret', parsed.signature)).toBe(false);
  });

  test('when Signature-Input has several labels, then the first one with a signature is used', () => {
    const parsed = parseSignatureHeaders('a=("@method");created=1, b=("@path");created=2', 'b=:AAAA:');
    expect(parsed.label).toBe('b');
  });
});
