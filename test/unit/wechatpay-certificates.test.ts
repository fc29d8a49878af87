/**
 * Checking a `GET /v3/certificates` download and keeping the platform keys, against answers the
 * offline sandbox's own code writes (node-forge certificates, node:crypto sealing and signing),
 * so each check meets an independent producer of the wire.
 */
import { generateKeyPairSync } from 'node:crypto';
import {
  certificatesView,
  issuePlatformCertificate,
  type PlatformCertificate,
} from '../../sandbox/wechatpay/certificates';
import { wechatpayHeaders } from '../../sandbox/wechatpay/wire';
import { ChannelError } from '../../src/channels/errors';
import {
  PlatformKeyring,
  verifyCertificatesAnswer,
  type CertificatesAnswer,
} from '../../src/channels/wechatpay/certificates';
import { publicKeyFrom } from '../../src/channels/wechatpay/signature';

const API_V3_KEY = 'durapayTestApiV3Key0123456789abc';
const current = issuePlatformCertificate();
const next = issuePlatformCertificate();

/** A download as the sandbox answers it: the list sealed with `apiV3Key`, signed by `signer`. */
function answer(
  listed: PlatformCertificate[],
  signer: PlatformCertificate = listed[0]!,
  opts: { apiV3Key?: string; nowMs?: number; edit?: (body: string) => string } = {},
): CertificatesAnswer {
  const body = JSON.stringify(certificatesView(listed, opts.apiV3Key ?? API_V3_KEY));
  const headers = wechatpayHeaders(
    { publicKeyId: signer.serial, privateKey: signer.privateKey },
    Buffer.from(body),
    opts.nowMs,
  );
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { status: 200, headers: lower, body: opts.edit ? opts.edit(body) : body };
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).kind).toBe('invalid_response');
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('verifying a certificate download', () => {
  test('when the answer lists sealed certificates and is signed by one of them, then each comes back with its key', () => {
    const certs = verifyCertificatesAnswer(answer([current, next], next), API_V3_KEY);
    expect(certs.map((c) => c.serial)).toEqual([current.serial, next.serial]);
    expect(certs[1]!.key.export({ type: 'spki', format: 'pem' })).toBe(
      publicKeyFrom(next.certificatePem).export({ type: 'spki', format: 'pem' }),
    );
  });

  test('when a certificate was sealed with another APIv3 key, then the download is refused', () => {
    const message = refusal(() =>
      verifyCertificatesAnswer(
        answer([current], current, { apiV3Key: 'another32characterAPIv3key000000' }),
        API_V3_KEY,
      ),
    );
    expect(message).toContain('does not open with the APIv3 key');
  });

  test('when a certificate is listed under a serial that is not its own, then the download is refused', () => {
    const forged = answer([current], current, { edit: (b) => b.replace(current.serial, next.serial) });
    expect(refusal(() => verifyCertificatesAnswer(forged, API_V3_KEY))).toContain(`has serial`);
  });

  test('when the answer is signed by a key it does not list, then the download is refused', () => {
    const message = refusal(() => verifyCertificatesAnswer(answer([current], next), API_V3_KEY));
    expect(message).toContain('not signed by a certificate it lists');
  });

  test('when the body was changed after signing, then the download is refused', () => {
    const changed = answer([current], current, { edit: (b) => b.replace('"data"', '"data" ') });
    expect(refusal(() => verifyCertificatesAnswer(changed, API_V3_KEY))).toContain('does not verify');
  });

  test('when the answer was signed more than 300 s ago, then the download is refused', () => {
    const old = answer([current], current, { nowMs: Date.now() - 301_000 });
    expect(refusal(() => verifyCertificatesAnswer(old, API_V3_KEY))).toContain('outside the tolerance');
  });

  test('when a listed certificate has expired, then it is left out', () => {
    const pair = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const expired = issuePlatformCertificate(
      { privateKeyPem: pair.privateKey, publicKeyPem: pair.publicKey },
      Date.now() - 6 * 365 * 24 * 3600_000,
    );
    const certs = verifyCertificatesAnswer(answer([expired, current], current), API_V3_KEY);
    expect(certs.map((c) => c.serial)).toEqual([current.serial]);
  });

  test('when every listed certificate has expired, then the download is refused rather than leaving no key', () => {
    const later = Date.now() + 6 * 365 * 24 * 3600_000;
    const expired = answer([current], current, { nowMs: later });
    expect(refusal(() => verifyCertificatesAnswer(expired, API_V3_KEY, later))).toContain(
      'no listed certificate is valid now',
    );
  });

  test('when a certificate is sealed under other associated data, then the download is refused', () => {
    const other = answer([current], current, {
      edit: (b) => b.replace('"associated_data":"certificate"', '"associated_data":"transaction"'),
    });
    expect(refusal(() => verifyCertificatesAnswer(other, API_V3_KEY))).toContain(
      'not sealed as AEAD_AES_256_GCM',
    );
  });
});

describe('the platform keyring', () => {
  /** A keyring whose downloads answer `answers` in turn (the last one again), on `clock`. */
  function keyring(answers: ((nowMs: number) => CertificatesAnswer)[], clock: { now: number }) {
    let calls = 0;
    const ring = new PlatformKeyring({
      apiV3Key: API_V3_KEY,
      now: () => clock.now,
      download: () => {
        const respond = answers[Math.min(calls, answers.length - 1)]!;
        calls += 1;
        return Promise.resolve(respond(clock.now));
      },
    });
    return { ring, calls: () => calls };
  }
  const listing =
    (listed: PlatformCertificate[], signer: PlatformCertificate = listed[0]!) =>
    (nowMs: number) =>
      answer(listed, signer, { nowMs });

  test('when keys are asked for, then certificates are downloaded once, and again after 12 hours with what is listed then', async () => {
    const clock = { now: Date.now() };
    const { ring, calls } = keyring([listing([current]), listing([current, next], next)], clock);
    expect([...(await ring.keys()).keys()]).toEqual([current.serial]);
    await ring.keys();
    expect(calls()).toBe(1);
    clock.now += 12 * 3600_000;
    expect([...(await ring.keys()).keys()]).toEqual([current.serial, next.serial]);
    expect(calls()).toBe(2);
  });

  test('when callers ask at once, then they share one download', async () => {
    const { ring, calls } = keyring([listing([current])], { now: Date.now() });
    await Promise.all([ring.keys(), ring.keys(), ring.find(current.serial)]);
    expect(calls()).toBe(1);
  });

  test('when a callback names a serial not yet known, then certificates are fetched again (at most once a minute) and the new key is found', async () => {
    const clock = { now: Date.now() };
    const { ring, calls } = keyring([listing([current]), listing([current, next], next)], clock);
    await ring.keys();
    expect(await ring.find(next.serial)).toBeUndefined();
    expect(calls()).toBe(1);
    clock.now += 61_000;
    expect(await ring.find(next.serial)).toBeDefined();
    expect(calls()).toBe(2);
    expect(await ring.find('00DEADBEEF')).toBeUndefined();
    expect(calls()).toBe(2);
  });

  test('when an answer failed verification, then the next request downloads again, but not within a minute of the last', async () => {
    const clock = { now: Date.now() };
    const { ring, calls } = keyring([listing([current]), listing([current, next], next)], clock);
    await ring.keys();
    ring.markStale();
    await ring.keys();
    expect(calls()).toBe(1);
    clock.now += 61_000;
    expect([...(await ring.keys()).keys()]).toContain(next.serial);
    expect(calls()).toBe(2);
    await ring.keys();
    expect(calls()).toBe(2);
  });

  test('when a refresh fails, then the keys in hand stay trusted; with none in hand, the failure is the answer', async () => {
    const clock = { now: Date.now() };
    const forged = listing([current], next);
    const { ring, calls } = keyring([listing([current]), forged], clock);
    await ring.keys();
    clock.now += 12 * 3600_000;
    expect([...(await ring.keys()).keys()]).toEqual([current.serial]);
    expect(calls()).toBe(2);
    const empty = keyring([forged], { now: Date.now() }).ring;
    await expect(empty.keys()).rejects.toThrow('not signed by a certificate it lists');
  });

  test('when WeChat Pay answers 503, then the failure may be retried; 401 may not', async () => {
    const busy = new PlatformKeyring({
      apiV3Key: API_V3_KEY,
      download: () => Promise.resolve({ status: 503, headers: {}, body: '' }),
    });
    await expect(busy.keys()).rejects.toMatchObject({ kind: 'unreachable' });
    const refused = new PlatformKeyring({
      apiV3Key: API_V3_KEY,
      download: () => Promise.resolve({ status: 401, headers: {}, body: '{}' }),
    });
    await expect(refused.keys()).rejects.toMatchObject({ kind: 'refused' });
  });

  test('when sealing, then the public key is used when configured, else the certificate that took effect last', async () => {
    const later = issuePlatformCertificate(undefined, Date.now() + 10_000);
    const { ring } = keyring([listing([later, current], current)], { now: Date.now() });
    expect((await ring.sealer()).serial).toBe(later.serial);
    const withKey = new PlatformKeyring({
      apiV3Key: API_V3_KEY,
      publicKey: { id: 'PUB_KEY_ID_1', key: publicKeyFrom(current.certificatePem) },
    });
    expect((await withKey.sealer()).serial).toBe('PUB_KEY_ID_1');
  });
});
