import {
  SANDBOX_SIGNATURE_TOLERANCE_SECONDS,
  signSandboxPayload,
  verifySandboxSignature,
} from '../../src/channels/sandbox/signature';

const SECRET = 'whsec-sandbox-test';
const BODY = '{"event_id":"evt_1"}';
const T = 1763789462;
// Computed independently: printf '%s' '1763789462.{"event_id":"evt_1"}' | openssl dgst -sha256 -hmac whsec-sandbox-test
const KNOWN_V1 = 'f72bd48f2a3df1f79b2c28fec75c4624016d094defc07beced87be7d87607015';

describe('Sandbox-Signature', () => {
  test('when a body is signed, then the header is t=<unix>,v1=<hex HMAC of "{t}.{body}"> as openssl computes it', () => {
    expect(signSandboxPayload(SECRET, BODY, T)).toBe(`t=${T},v1=${KNOWN_V1}`);
    expect(signSandboxPayload(SECRET, Buffer.from(BODY), T)).toBe(`t=${T},v1=${KNOWN_V1}`);
  });

  test('when a header signed now is verified with the same secret and body, then it is accepted', () => {
    const header = signSandboxPayload(SECRET, BODY);
    expect(verifySandboxSignature(SECRET, header, Buffer.from(BODY))).toEqual({
      ok: true,
      timestamp: expect.any(Number),
    });
  });

  test('when the body is empty (a GET), then "{t}." is what is signed and it verifies', () => {
    const header = signSandboxPayload(SECRET, '', T);
    expect(verifySandboxSignature(SECRET, header, '', { now: T }).ok).toBe(true);
    expect(verifySandboxSignature(SECRET, header, ' ', { now: T }).ok).toBe(false);
  });

  test('when one byte of the body is changed, then it is refused as not matching', () => {
    const header = signSandboxPayload(SECRET, BODY, T);
    expect(verifySandboxSignature(SECRET, header, BODY.replace('1', '2'), { now: T })).toEqual({
      ok: false,
      reason: 'Sandbox-Signature does not match',
    });
  });

  test('when the signature hex or the timestamp is altered, then it is refused', () => {
    const flipped = KNOWN_V1.replace(/^f/, 'e');
    expect(verifySandboxSignature(SECRET, `t=${T},v1=${flipped}`, BODY, { now: T }).ok).toBe(false);
    expect(verifySandboxSignature(SECRET, `t=${T + 1},v1=${KNOWN_V1}`, BODY, { now: T }).ok).toBe(false);
  });

  test('when another secret verifies it, then it is refused', () => {
    const header = signSandboxPayload(SECRET, BODY, T);
    expect(verifySandboxSignature('another-secret', header, BODY, { now: T }).ok).toBe(false);
  });

  test('when the timestamp is more than 300 s old or ahead, then it is refused as stale; at exactly 300 s it passes', () => {
    const header = signSandboxPayload(SECRET, BODY, T);
    const tolerance = SANDBOX_SIGNATURE_TOLERANCE_SECONDS;
    expect(tolerance).toBe(300);
    expect(verifySandboxSignature(SECRET, header, BODY, { now: T + tolerance }).ok).toBe(true);
    expect(verifySandboxSignature(SECRET, header, BODY, { now: T + tolerance + 1 })).toEqual({
      ok: false,
      reason: 'Sandbox-Signature timestamp outside the tolerance',
    });
    expect(verifySandboxSignature(SECRET, header, BODY, { now: T - tolerance - 1 }).ok).toBe(false);
  });

  test('when the header is missing, empty or malformed, then it is refused with a reason', () => {
    const cases: (string | undefined)[] = [
      undefined,
      '',
      'garbage',
      `v1=${KNOWN_V1}`,
      `t=${T}`,
      `t=abc,v1=${KNOWN_V1}`,
      `t=${T},v1=${KNOWN_V1.slice(2)}`,
      `t=${T},t=${T},v1=${KNOWN_V1}`,
      `t=${T},v1=${KNOWN_V1.toUpperCase()}`,
    ];
    for (const header of cases) {
      const result = verifySandboxSignature(SECRET, header, BODY, { now: T });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(/Sandbox-Signature/);
    }
  });

  test('when the header carries several v1 values and one matches (secret rotation), then it is accepted', () => {
    const other = signSandboxPayload('old-secret', BODY, T).split(',')[1];
    expect(verifySandboxSignature(SECRET, `t=${T},${other},v1=${KNOWN_V1}`, BODY, { now: T }).ok).toBe(true);
    expect(verifySandboxSignature(SECRET, `t=${T},${other}`, BODY, { now: T }).ok).toBe(false);
  });

  test('when the header has spaces after commas or unknown schemes, then it still verifies', () => {
    expect(verifySandboxSignature(SECRET, `t=${T}, v0=abc, v1=${KNOWN_V1}`, BODY, { now: T }).ok).toBe(true);
  });
});
