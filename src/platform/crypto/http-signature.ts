/**
 * HTTP Message Signatures (RFC 9421) with `hmac-sha256`, and Content-Digest (RFC 9530).
 * Structured-field parsing and serialization come from `structured-headers`; this module
 * builds the signature base (§2.5) and signs or verifies it. Shared by the API (verifying),
 * the SDK and the CLI (signing).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  parseDictionary,
  serializeInnerList,
  type BareItem,
  type InnerList,
  type Item,
  type Parameters,
} from 'structured-headers';

export class SignatureError extends Error {
  override name = 'SignatureError';
}

/** What the signature base is built from: the request as received or about to be sent. */
export interface SignableRequest {
  method: string;
  /** The request target as sent: path plus the query string, undecoded (`/a/b?x=1`). */
  target: string;
  /** Header values by lower-case name; several field lines are joined with ", ". */
  headers: Record<string, string | undefined>;
  /** Needed only when "@authority", "@scheme" or "@target-uri" are covered. */
  authority?: string;
  scheme?: string;
}

export function splitTarget(target: string): { path: string; query: string } {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  // §2.2.7: the query with its leading "?"; a request without one has "?".
  const query = q === -1 ? '?' : target.slice(q);
  return { path: path === '' ? '/' : path, query };
}

function queryParam(query: string, name: string): string {
  const params = new URLSearchParams(query.slice(1));
  const values = params.getAll(name);
  if (values.length !== 1) throw new SignatureError(`"@query-param" ${name} must occur exactly once`);
  // §2.2.8: re-encode the decoded value.
  return encodeURIComponent(values[0]!);
}

/** The value of one covered component (§2.1, §2.2). */
export function componentValue(item: Item, req: SignableRequest): string {
  const [name, params] = item;
  if (typeof name !== 'string') throw new SignatureError('component identifiers must be strings');
  const paramNames = [...params.keys()];
  if (name === '@query-param') {
    const n = params.get('name');
    if (typeof n !== 'string' || paramNames.length !== 1) {
      throw new SignatureError('"@query-param" needs exactly a name parameter');
    }
    return queryParam(splitTarget(req.target).query, n);
  }
  if (paramNames.length > 0) {
    throw new SignatureError(`component parameters (${paramNames.join(', ')}) are not supported`);
  }
  const { path, query } = splitTarget(req.target);
  switch (name) {
    case '@method':
      return req.method.toUpperCase();
    case '@path':
      return path;
    case '@query':
      return query;
    case '@request-target':
      return req.target;
    case '@authority':
      if (!req.authority) throw new SignatureError('"@authority" is not available');
      return req.authority.toLowerCase();
    case '@scheme':
      if (!req.scheme) throw new SignatureError('"@scheme" is not available');
      return req.scheme.toLowerCase();
    case '@target-uri':
      if (!req.authority || !req.scheme) throw new SignatureError('"@target-uri" is not available');
      return `${req.scheme.toLowerCase()}://${req.authority.toLowerCase()}${req.target}`;
    default: {
      if (name.startsWith('@')) throw new SignatureError(`derived component "${name}" is not supported`);
      if (name !== name.toLowerCase()) throw new SignatureError(`field names must be lower case: "${name}"`);
      const value = req.headers[name];
      if (value === undefined) throw new SignatureError(`covered header "${name}" is missing`);
      return value.trim();
    }
  }
}

/** §2.5: one line per covered component, then the "@signature-params" line; no trailing newline. */
export function signatureBase(covered: InnerList, req: SignableRequest): string {
  const [items] = covered;
  const seen = new Set<string>();
  const lines = items.map((item) => {
    const id = serializeInnerList([[item], new Map()]).slice(1, -1);
    if (seen.has(id)) throw new SignatureError(`component ${id} is covered twice`);
    seen.add(id);
    return `${id}: ${componentValue(item, req)}`;
  });
  lines.push(`"@signature-params": ${serializeInnerList(covered)}`);
  return lines.join('\n');
}

export function hmacSha256(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** RFC 9530 `Content-Digest` value with sha-256. */
export function contentDigest(body: Buffer | string): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/** The sha-256 bytes a `Content-Digest` header announces, or an error if it has none. */
export function announcedSha256(header: string): Buffer {
  let dict;
  try {
    dict = parseDictionary(header);
  } catch {
    throw new SignatureError('Content-Digest is not a valid structured field');
  }
  const member = dict.get('sha-256');
  if (!member || Array.isArray(member[0]) || !isBytes(member[0])) {
    throw new SignatureError('Content-Digest has no sha-256 digest');
  }
  return Buffer.from(member[0] as ArrayBuffer);
}

function isBytes(value: unknown): value is ArrayBuffer | ArrayBufferView {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

export interface ParsedSignature {
  label: string;
  covered: InnerList;
  params: Parameters;
  signature: Buffer;
}

/**
 * Parses `Signature-Input` and `Signature` and returns the first label present in both.
 * Any label may be used; further signatures on the request are ignored.
 */
export function parseSignatureHeaders(signatureInput: string, signature: string): ParsedSignature {
  let inputs;
  let signatures;
  try {
    inputs = parseDictionary(signatureInput);
    signatures = parseDictionary(signature);
  } catch {
    throw new SignatureError('Signature or Signature-Input is not a valid structured field');
  }
  for (const [label, member] of inputs) {
    if (!Array.isArray(member[0])) continue;
    const sig = signatures.get(label);
    if (!sig || Array.isArray(sig[0]) || !isBytes(sig[0])) continue;
    return {
      label,
      covered: member as InnerList,
      params: member[1],
      signature: Buffer.from(sig[0] as ArrayBuffer),
    };
  }
  throw new SignatureError('no label appears in both Signature-Input and Signature');
}

export function verifyHmac(base: string, key: Buffer | string, signature: Buffer): boolean {
  const expected = hmacSha256(key, base);
  return signature.length === expected.length && timingSafeEqual(signature, expected);
}

export interface SignOptions {
  method: string;
  /** Path plus query string, as it will be sent. */
  target: string;
  /** Raw body bytes; when given (even empty), Content-Digest is added and covered. */
  body?: Buffer | string;
  keyId: string;
  /** The app's secret; the HMAC key is its UTF-8 bytes. */
  secret: string;
  /** Unix seconds; defaults to now. */
  created?: number;
  nonce?: string;
  label?: string;
  /** Extra headers to cover (lower-case names, values as sent). */
  coverHeaders?: Record<string, string>;
}

export interface SignedHeaders {
  'content-digest'?: string;
  'signature-input': string;
  signature: string;
}

/** Signs a request the way durapay verifies it. Returns the headers to send. */
export function signRequest(opts: SignOptions): SignedHeaders {
  const headers: Record<string, string> = { ...(opts.coverHeaders ?? {}) };
  const components: Item[] = [
    ['@method', new Map()],
    ['@path', new Map()],
    ['@query', new Map()],
  ];
  if (opts.body !== undefined) {
    headers['content-digest'] = contentDigest(opts.body);
    components.push(['content-digest', new Map()]);
  }
  for (const name of Object.keys(opts.coverHeaders ?? {})) components.push([name, new Map()]);
  const params = new Map<string, BareItem>([
    ['created', opts.created ?? Math.floor(Date.now() / 1000)],
    ['nonce', opts.nonce ?? randomBytes(16).toString('base64url')],
    ['keyid', opts.keyId],
    ['alg', 'hmac-sha256'],
  ]);
  const covered: InnerList = [components, params];
  const base = signatureBase(covered, { method: opts.method, target: opts.target, headers });
  const label = opts.label ?? 'sig1';
  const signature = hmacSha256(opts.secret, base).toString('base64');
  return {
    ...(headers['content-digest'] ? { 'content-digest': headers['content-digest'] } : {}),
    'signature-input': `${label}=${serializeInnerList(covered)}`,
    signature: `${label}=:${signature}:`,
  };
}
