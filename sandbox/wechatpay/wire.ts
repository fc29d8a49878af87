/**
 * WeChat Pay API v3's wire, the sandbox's end of it, on node:crypto alone: checking a request's
 * `Authorization` (WECHATPAY2-SHA256-RSA2048), signing every answer and callback with the
 * platform key, sealing a callback's `resource` with AEAD_AES_256_GCM, and opening a sensitive
 * field (a profit-sharing receiver's name) that the client sealed with the platform public key.
 * It deliberately uses neither wechatpay-axios-plugin nor durapay's WeChat Pay adapter: a test of
 * either against this sandbox is then a test of two independent readings of the published
 * specification.
 */
import {
  constants,
  createCipheriv,
  createSign,
  createVerify,
  privateDecrypt,
  randomBytes,
  randomInt,
  type KeyObject,
} from 'node:crypto';

export const SIGNATURE_TYPE = 'WECHATPAY2-SHA256-RSA2048';
/** How far a request's timestamp may be from our clock, in seconds (the v3 rule). */
export const MAX_CLOCK_SKEW_S = 300;

/** A v3 error answer: `{"code", "message", "detail"?}` with its HTTP status. */
export class WechatpayError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    message: string,
    readonly detail?: Record<string, unknown>,
  ) {
    super(message);
  }

  body(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.detail === undefined ? {} : { detail: this.detail }),
    };
  }
}

const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

export function randomDigits(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += String(randomInt(10));
  return out;
}

/** Unix seconds, as `timestamp` and `Wechatpay-Timestamp` carry them. */
export function unixSeconds(ms = Date.now()): number {
  return Math.floor(ms / 1000);
}

/** RFC 3339 in China Standard Time, the form every v3 time takes: 2026-11-23T21:04:05+08:00. */
export function rfc3339Cst(ms: number): string {
  return `${new Date(ms + 8 * 3600_000).toISOString().slice(0, 19)}+08:00`;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Milliseconds of an RFC 3339 time with its offset, or undefined when it is not one. */
export function parseRfc3339(text: string): number | undefined {
  if (!RFC3339.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

// ---- requests ----

export interface AuthorizationFields {
  mchid: string;
  serial_no: string;
  timestamp: string;
  nonce_str: string;
  signature: string;
}

const AUTH_FIELDS = ['mchid', 'serial_no', 'timestamp', 'nonce_str', 'signature'] as const;

/** The fields of `WECHATPAY2-SHA256-RSA2048 k="v",…` (any order), or a reason it is not one. */
export function parseAuthorization(header: string | undefined): AuthorizationFields | string {
  if (!header) return 'the Authorization header is missing';
  const prefix = `${SIGNATURE_TYPE} `;
  if (!header.startsWith(prefix)) return `the Authorization scheme is not ${SIGNATURE_TYPE}`;
  const fields = new Map<string, string>();
  const pair = /\s*([a-z_]+)="([^"]*)"\s*(?:,|$)/gy;
  const rest = header.slice(prefix.length);
  pair.lastIndex = 0;
  while (pair.lastIndex < rest.length) {
    const match = pair.exec(rest);
    if (!match) return 'the Authorization header is malformed';
    if (fields.has(match[1]!)) return `the Authorization header repeats ${match[1]}`;
    fields.set(match[1]!, match[2]!);
  }
  const out: Partial<AuthorizationFields> = {};
  for (const name of AUTH_FIELDS) {
    const value = fields.get(name);
    if (value === undefined || value === '') return `the Authorization header lacks ${name}`;
    out[name] = value;
  }
  return out as AuthorizationFields;
}

export interface SignedRequest {
  method: string;
  /** Path and query exactly as the client sent them (req.originalUrl). */
  pathWithQuery: string;
  body: Buffer;
  authorization: string | undefined;
}

export interface RequestSigner {
  mchid: string;
  serial: string;
  publicKey: KeyObject;
}

/** The signer's mchid, or why the request is refused (401 SIGN_ERROR). */
export function verifyRequest(
  req: SignedRequest,
  signer: RequestSigner,
  nowMs = Date.now(),
): { ok: true; mchid: string } | { ok: false; reason: string } {
  const auth = parseAuthorization(req.authorization);
  if (typeof auth === 'string') return { ok: false, reason: auth };
  if (auth.mchid !== signer.mchid) return { ok: false, reason: `mchid ${auth.mchid} is not known here` };
  if (auth.serial_no !== signer.serial) {
    return { ok: false, reason: `serial_no ${auth.serial_no} is not the merchant's certificate serial` };
  }
  if (!/^\d{1,12}$/.test(auth.timestamp)) return { ok: false, reason: 'timestamp is not unix seconds' };
  if (Math.abs(unixSeconds(nowMs) - Number(auth.timestamp)) > MAX_CLOCK_SKEW_S) {
    return { ok: false, reason: `timestamp is more than ${MAX_CLOCK_SKEW_S} s from the server's clock` };
  }
  const verify = createVerify('sha256WithRSAEncryption');
  verify.update(`${req.method.toUpperCase()}\n${req.pathWithQuery}\n${auth.timestamp}\n${auth.nonce_str}\n`);
  verify.update(req.body);
  verify.update('\n');
  let good = false;
  try {
    good = verify.verify(signer.publicKey, auth.signature, 'base64');
  } catch {
    good = false;
  }
  if (!good) return { ok: false, reason: 'the signature does not verify with the merchant public key' };
  return { ok: true, mchid: auth.mchid };
}

// ---- answers and callbacks ----

/** Base64 SHA256-with-RSA over `timestamp\nnonce\nbody\n`: what an answer or a callback carries. */
export function signMessage(privateKey: KeyObject, timestamp: string, nonce: string, body: Buffer): string {
  const sign = createSign('sha256WithRSAEncryption');
  sign.update(`${timestamp}\n${nonce}\n`);
  sign.update(body);
  sign.update('\n');
  return sign.sign(privateKey, 'base64');
}

export interface PlatformSigner {
  publicKeyId: string;
  privateKey: KeyObject;
}

/** The Wechatpay-* headers of a body about to be sent, freshly timestamped. */
export function wechatpayHeaders(
  signer: PlatformSigner,
  body: Buffer,
  nowMs = Date.now(),
): Record<string, string> {
  const timestamp = String(unixSeconds(nowMs));
  const nonce = randomAlphanumeric(32);
  return {
    'Wechatpay-Nonce': nonce,
    'Wechatpay-Timestamp': timestamp,
    'Wechatpay-Serial': signer.publicKeyId,
    'Wechatpay-Signature': signMessage(signer.privateKey, timestamp, nonce, body),
    'Wechatpay-Signature-Type': SIGNATURE_TYPE,
  };
}

/** A Request-ID in the shape WeChat's answers carry (upper hex, a dash, a digit). */
export function requestId(): string {
  return `${randomBytes(14).toString('hex').toUpperCase()}-0`;
}

export interface EncryptedResource {
  original_type: string;
  algorithm: 'AEAD_AES_256_GCM';
  ciphertext: string;
  associated_data: string;
  nonce: string;
}

/**
 * Seals a callback's plaintext as WeChat does: AES-256-GCM keyed by the APIv3 key's 32 UTF-8
 * bytes, a 12-character nonce as IV, the associated data as AAD, and base64(ciphertext ‖ tag).
 */
export function encryptResource(
  apiV3Key: string,
  plaintext: string,
  originalType: string,
  associatedData: string,
): EncryptedResource {
  const nonce = randomAlphanumeric(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(apiV3Key, 'utf8'), Buffer.from(nonce, 'utf8'));
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return {
    original_type: originalType,
    algorithm: 'AEAD_AES_256_GCM',
    ciphertext: sealed.toString('base64'),
    associated_data: associatedData,
    nonce,
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Opens a sensitive field as WeChat does: base64 of RSA-OAEP (OpenSSL's RSA_PKCS1_OAEP_PADDING,
 * SHA-1 and MGF1-SHA-1) under the platform public key. The UTF-8 plaintext, or undefined when the
 * text is not base64, does not decrypt with the platform private key, or is not UTF-8.
 */
export function decryptSensitive(privateKey: KeyObject, ciphertext: string): string | undefined {
  if (!BASE64.test(ciphertext)) return undefined;
  try {
    const plain = privateDecrypt(
      { key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
      Buffer.from(ciphertext, 'base64'),
    );
    return new TextDecoder('utf-8', { fatal: true }).decode(plain);
  } catch {
    return undefined;
  }
}
