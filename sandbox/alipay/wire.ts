/**
 * The Alipay open platform's gateway wire (API v2, RSA2), the gateway's end of it, on node:crypto
 * alone: the text a signature covers, signing and checking it, the signed answer envelope, the
 * error answers, Beijing time and yuan amounts. It deliberately uses neither alipay-sdk nor
 * durapay's Alipay adapter: a test of either against this gateway is then a test of two
 * independent readings of the published specification.
 */
import { createSign, createVerify, randomInt, type KeyObject } from 'node:crypto';

export const SIGN_TYPE = 'RSA2';
export const API_VERSION = '1.0';
/** How far a request's timestamp may be from the gateway's clock. */
export const MAX_CLOCK_SKEW_MS = 15 * 60_000;

/** A request's or a notification's parameters, each once, values decoded. */
export type Params = Record<string, string>;

/**
 * What an RSA2 signature covers: every parameter but those in `omit`, empty values skipped,
 * sorted by key, `key=value` joined by `&`, the values raw (decoded, never URL-encoded again).
 */
export function signContent(params: Params, omit: readonly string[] = ['sign']): string {
  return Object.keys(params)
    .filter((key) => !omit.includes(key) && params[key] !== '')
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&');
}

/** Base64 SHA256withRSA over the UTF-8 bytes of `content`. */
export function rsa2Sign(content: string, privateKey: KeyObject): string {
  return createSign('RSA-SHA256').update(content, 'utf8').sign(privateKey, 'base64');
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function rsa2Verify(content: string, signature: string, publicKey: KeyObject): boolean {
  if (signature === '' || !BASE64.test(signature)) return false;
  try {
    return createVerify('RSA-SHA256').update(content, 'utf8').verify(publicKey, signature, 'base64');
  } catch {
    return false;
  }
}

// ---- answers ----

/** `alipay.trade.query` → `alipay_trade_query_response`: where a method's answer sits. */
export function responseKey(method: string): string {
  return `${method.replaceAll('.', '_')}_response`;
}

/**
 * The body of an answer: `{"<key>":<json>,"sign":"…"}`, sign last and computed over the exact
 * JSON text of the value as it stands in the body, which is what a client cuts out to verify.
 */
export function signedAnswer(key: string, value: Record<string, unknown>, privateKey: KeyObject): string {
  const json = JSON.stringify(value);
  return `{${JSON.stringify(key)}:${json},"sign":${JSON.stringify(rsa2Sign(json, privateKey))}}`;
}

export type AnswerCode = '10000' | '10003' | '20000' | '20001' | '40001' | '40002' | '40004';

const MESSAGES: Record<AnswerCode, string> = {
  '10000': 'Success',
  '10003': 'order success pay inprocess',
  '20000': 'Service Currently Unavailable',
  '20001': 'Insufficient Token Permissions',
  '40001': 'Missing Required Arguments',
  '40002': 'Invalid Arguments',
  '40004': 'Business Failed',
};

/** Where a method's fields say they are answered under a code other than 10000; JSON never carries it. */
const ANSWER_CODE = Symbol('alipay answer code');

/**
 * A method's fields answered under 10003 (业务处理中) instead of 10000: alipay.trade.pay's trade
 * made, its buyer still confirming in the wallet. The only code trade.pay answers besides 10000
 * that is not a failure.
 */
export function inProcess(fields: Record<string, unknown>): Record<string, unknown> {
  return { ...fields, [ANSWER_CODE]: '10003' };
}

/** A method's fields answered with no code at all: alipay.system.oauth.token's success, as Alipay answers it. */
export function withoutCode(fields: Record<string, unknown>): Record<string, unknown> {
  return { ...fields, [ANSWER_CODE]: 'none' };
}

export function success(fields: Record<string, unknown>): Record<string, unknown> {
  if ((fields as Record<symbol, unknown>)[ANSWER_CODE] === 'none') return { ...fields };
  const code = (fields as Record<symbol, unknown>)[ANSWER_CODE] === '10003' ? '10003' : '10000';
  return { code, msg: MESSAGES[code], ...fields };
}

/** A failure answer: the public code and message, with the method's sub_code and sub_msg. */
export class AlipayError extends Error {
  constructor(
    readonly code: Exclude<AnswerCode, '10000' | '10003'>,
    readonly subCode: string,
    readonly subMsg: string,
  ) {
    super(`${subCode}: ${subMsg}`);
  }

  body(): Record<string, unknown> {
    return { code: this.code, msg: MESSAGES[this.code], sub_code: this.subCode, sub_msg: this.subMsg };
  }
}

/** 40001: a common parameter is missing (isv.missing-*). */
export const missingArgument = (subCode: string, subMsg: string) => new AlipayError('40001', subCode, subMsg);
/** 40002: a parameter is malformed, or the signature does not verify (isv.invalid-*). */
export const invalidArgument = (subCode: string, subMsg: string) => new AlipayError('40002', subCode, subMsg);
/** 40004: well-formed, but the business refuses it (ACQ.* and the like). */
export const businessFailed = (subCode: string, subMsg: string) => new AlipayError('40004', subCode, subMsg);
/** 20001: the app_auth_token the call was made with is not (or no longer) valid. */
export const tokenRefused = (subCode: string, subMsg: string) => new AlipayError('20001', subCode, subMsg);
/** 20000: the outcome is unknown; the client is to ask again. */
export const systemError = (subMsg: string) => new AlipayError('20000', 'ACQ.SYSTEM_ERROR', subMsg);

// ---- Beijing time: every time on the wire is UTC+8, all year ----

const BEIJING_OFFSET_MS = 8 * 3_600_000;

/** `yyyy-MM-dd HH:mm:ss` in Beijing time. */
export function beijingTime(ms: number): string {
  const iso = new Date(ms + BEIJING_OFFSET_MS).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** `yyyy-MM-dd HH:mm:ss.SSS` in Beijing time, the form of a notification's gmt_refund. */
export function beijingTimeMillis(ms: number): string {
  return `${beijingTime(ms)}.${new Date(ms).toISOString().slice(20, 23)}`;
}

/** Milliseconds of a `yyyy-MM-dd HH:mm:ss` Beijing time; undefined when it is not a real one. */
export function parseBeijingTime(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) - BEIJING_OFFSET_MS;
  // Date.UTC rolls 02-30 over into March: a time that does not read back was not a real one.
  return Number.isNaN(ms) || beijingTime(ms) !== text ? undefined : ms;
}

/** The next Beijing midnight after `ms` (timeout_express `1c`: closed at the end of the day). */
export function nextBeijingMidnight(ms: number): number {
  const day = 86_400_000;
  return Math.floor((ms + BEIJING_OFFSET_MS) / day + 1) * day - BEIJING_OFFSET_MS;
}

// ---- amounts, in yuan on the wire and in integer fen here ----

/** Alipay's ceiling for one trade, 100 000 000.00 yuan. */
export const MAX_AMOUNT_FEN = 10_000_000_000;

/** A Price field as sent: whole yuan and exactly two decimals. */
export const PRICE = /^\d{1,9}\.\d{2}$/;

/** "12.30" → 1230 without floating point; undefined unless it is a PRICE. */
export function fenOfPrice(text: string): number | undefined {
  if (!PRICE.test(text)) return undefined;
  const [whole, cents] = text.split('.') as [string, string];
  return Number(whole) * 100 + Number(cents);
}

/**
 * A Number(9) amount (royalty amounts): a JSON number or a string of yuan with up to two
 * decimals; read from its decimal text, never computed in floating point.
 */
export function fenOfNumber(value: unknown): number | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

// ---- identifiers ----

export function randomDigits(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += String(randomInt(10));
  return out;
}

/** A 2088… user id (PID), 16 digits. */
export function userId(): string {
  return `2088${randomDigits(12)}`;
}

/** A trade_no in Alipay's shape: the Beijing date and 20 digits. */
export function newTradeNo(ms: number): string {
  return `${beijingTime(ms).slice(0, 10).replaceAll('-', '')}2200${randomDigits(16)}`;
}
