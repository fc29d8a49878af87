/**
 * WeChat Pay API v2's wire, the sandbox's end of it, on node:crypto alone (as ./wire.ts is for
 * v3): flat `<xml>` bodies, their CDATA, and the sign over the sorted `k=v` pairs with
 * `&key=<API v2 key>` appended, MD5 or HMAC-SHA256 (keyed with the same key), upper-case hex.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type V2SignType = 'MD5' | 'HMAC-SHA256';

/** The string both sides sign: every non-empty field but `sign`, sorted by name, as `k=v&…&key=KEY`. */
export function v2SignedString(fields: Record<string, string>, key: string): string {
  const pairs = Object.keys(fields)
    .filter((k) => k !== 'sign' && fields[k] !== undefined && fields[k] !== '')
    .sort()
    .map((k) => `${k}=${fields[k]}`);
  return `${pairs.join('&')}&key=${key}`;
}

export function v2Sign(fields: Record<string, string>, key: string, type: V2SignType = 'MD5'): string {
  const text = v2SignedString(fields, key);
  const digest =
    type === 'MD5' ? createHash('md5').update(text, 'utf8') : createHmac('sha256', key).update(text, 'utf8');
  return digest.digest('hex').toUpperCase();
}

/** Whether the fields carry a good sign: HMAC-SHA256 when sign_type says so (or the sign is 64 long), MD5 otherwise. */
export function v2Verifies(fields: Record<string, string>, key: string): boolean {
  const sign = fields.sign;
  if (!sign) return false;
  const type: V2SignType = fields.sign_type === 'HMAC-SHA256' || sign.length === 64 ? 'HMAC-SHA256' : 'MD5';
  const expected = Buffer.from(v2Sign(fields, key, type));
  const given = Buffer.from(sign.toUpperCase());
  return expected.length === given.length && timingSafeEqual(expected, given);
}

const FIELD = /<([A-Za-z_][A-Za-z0-9_]*)>((?:<!\[CDATA\[[\s\S]*?\]\]>)+|[^<]*)<\/\1>/g;
const CDATA = /<!\[CDATA\[([\s\S]*?)\]\]>/g;

/** A flat `<xml>` body's fields, or undefined when it is not one (a DOCTYPE is never one). */
export function parseV2Xml(text: string): Record<string, string> | undefined {
  const body = /^\s*(?:<\?xml[^>]*\?>\s*)?<xml>([\s\S]*)<\/xml>\s*$/.exec(text);
  if (!body || /<!DOCTYPE|<!ENTITY/i.test(text)) return undefined;
  const fields: Record<string, string> = {};
  for (const m of body[1]!.matchAll(FIELD)) {
    const value = m[2]!;
    fields[m[1]!] = value.startsWith('<![CDATA[')
      ? [...value.matchAll(CDATA)].map((c) => c[1]).join('')
      : decodeEntities(value);
  }
  return fields;
}

function decodeEntities(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&apos;', "'")
    .replaceAll('&amp;', '&');
}

/** The fields as a flat `<xml>`, every value in CDATA. */
export function buildV2Xml(fields: Record<string, string>): string {
  const parts = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<${k}><![CDATA[${v.replaceAll(']]>', ']]]]><![CDATA[>')}]]></${k}>`);
  return `<xml>${parts.join('')}</xml>`;
}

/** `2026-12-07 10:00:00`, China time, as v2 papay writes its times. */
export function cstDateTime(ms: number): string {
  return new Date(ms + 8 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
}

/** `20261207100000`, China time, as v2 orders write time_end. */
export function cstCompact(ms: number): string {
  return cstDateTime(ms).replace(/[-: ]/g, '');
}
