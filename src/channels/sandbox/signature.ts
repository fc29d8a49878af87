import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `Sandbox-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "{t}.{raw body}")>` (SPEC §8). The same
 * header signs both directions: the adapter's requests to the simulator and the simulator's
 * callbacks to durapay. The key is the UTF-8 bytes of the configured secret.
 */
export const SANDBOX_SIGNATURE_HEADER = 'sandbox-signature';
export const SANDBOX_SIGNATURE_TOLERANCE_SECONDS = 300;

const HEX_SHA256 = /^[0-9a-f]{64}$/;
const UNIX_SECONDS = /^[0-9]{1,12}$/;

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** Unix seconds; injectable for tests. */
  now?: number;
}

function toBuffer(body: string | Buffer): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

function digest(secret: string, timestamp: number, body: Buffer): Buffer {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestamp}.`, 'utf8')
    .update(body)
    .digest();
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The header value for `body` signed at `timestamp` (unix seconds, now by default). */
export function signSandboxPayload(
  secret: string,
  body: string | Buffer,
  timestamp: number = nowSeconds(),
): string {
  return `t=${timestamp},v1=${digest(secret, timestamp, toBuffer(body)).toString('hex')}`;
}

/**
 * Checks a Sandbox-Signature header against the raw body. Several `v1=` entries are accepted
 * (any one matching suffices) so that a secret can be rotated without a window of failures.
 */
export function verifySandboxSignature(
  secret: string,
  header: string | undefined,
  body: string | Buffer,
  options: VerifyOptions = {},
): SignatureCheck {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing Sandbox-Signature' };

  let timestamp: number | undefined;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return { ok: false, reason: 'malformed Sandbox-Signature' };
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !UNIX_SECONDS.test(value)) {
        return { ok: false, reason: 'malformed Sandbox-Signature timestamp' };
      }
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) return { ok: false, reason: 'malformed Sandbox-Signature v1 value' };
      candidates.push(Buffer.from(value, 'hex'));
    }
    // Other schemes are ignored, as a receiver must let a sender add newer ones.
  }
  if (timestamp === undefined) return { ok: false, reason: 'Sandbox-Signature has no timestamp' };
  if (candidates.length === 0) return { ok: false, reason: 'Sandbox-Signature has no v1 signature' };

  const tolerance = options.toleranceSeconds ?? SANDBOX_SIGNATURE_TOLERANCE_SECONDS;
  const now = options.now ?? nowSeconds();
  if (Math.abs(now - timestamp) > tolerance) {
    return { ok: false, reason: 'Sandbox-Signature timestamp outside the tolerance' };
  }

  const expected = digest(secret, timestamp, toBuffer(body));
  // Every candidate is compared, so the time taken does not depend on which one matched.
  let matched = false;
  for (const candidate of candidates) {
    if (timingSafeEqual(candidate, expected)) matched = true;
  }
  return matched ? { ok: true, timestamp } : { ok: false, reason: 'Sandbox-Signature does not match' };
}
