import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';

export type { LookupFunction };

export interface PostWebhookOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxBodyBytes: number;
  guardAddresses: boolean;
  /** Same contract as dns.lookup, including `{ all: true }`; injectable so tests need no DNS. */
  lookup?: LookupFunction;
  /** The clock latencyMs is read from, in ms (performance.now); injectable so tests need no wall clock. */
  now?: () => number;
}

export interface PostResult {
  status: number;
  latencyMs: number;
  /** The first maxBodyBytes of the response, decoded as UTF-8. */
  body: string;
  truncated: boolean;
}

const RANGE_WORDING: Record<string, string> = {
  unparseable: 'an unparseable',
  unspecified: 'an unspecified',
  loopback: 'a loopback',
  private: 'a private',
  linkLocal: 'a link-local',
  uniqueLocal: 'a unique-local',
  carrierGradeNat: 'a carrier-grade NAT',
  broadcast: 'a broadcast',
  multicast: 'a multicast',
  reserved: 'a reserved',
  ipv4Compatible: 'an IPv4-compatible (deprecated)',
  rfc6145: 'an IPv4-translated',
  rfc6052: 'a NAT64',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
};

export class ForbiddenDestinationError extends Error {
  override readonly name = 'ForbiddenDestinationError';
  readonly host: string;
  readonly address: string;
  readonly range: string;

  /** `embedded`: the IPv4 address an IPv6 one carries, when that is what the range is of. */
  constructor(host: string, address: string, range: string, embedded?: string) {
    const wording = RANGE_WORDING[range] ?? `a non-public (${range})`;
    const carried = embedded === undefined ? '' : ` (${embedded} in an IPv6 form)`;
    super(`notify_url host "${host}" resolves to ${address}, ${wording} address${carried}`);
    this.host = host;
    this.address = address;
    this.range = range;
  }
}

interface Verdict {
  range: string;
  /** The IPv4 address the range is of, when the address given is an IPv6 form carrying it. */
  embedded?: string;
}

/**
 * The IPv6 forms that carry an IPv4 address a connection to them ends at: IPv4-mapped
 * (`::ffff:a.b.c.d`, which the socket itself turns into IPv4), IPv4-compatible (`::a.b.c.d`),
 * IPv4-translated (`::ffff:0:a.b.c.d`, SIIT), NAT64's well-known prefix (`64:ff9b::a.b.c.d`,
 * RFC 6052), 6to4 (`2002:aabb:ccdd::/48`, RFC 3056), and Teredo (`2001::/32`, whose client
 * address is the last 32 bits inverted, RFC 4380).
 */
function embeddedIPv4(addr: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = addr.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return v4(p[6]!, p[7]!);
  if (zeros(0, 6)) return v4(p[6]!, p[7]!);
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return v4(p[6]!, p[7]!);
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return v4(p[6]!, p[7]!);
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!);
  if (p[0] === 0x2001 && p[1] === 0) return v4(~p[6]! & 0xffff, ~p[7]! & 0xffff);
  return undefined;
}

/**
 * Of the IPv6 ranges that carry an IPv4 address, those where a webhook receiver may live, if
 * that address is public: a mapped address is the IPv4 host itself, and on an IPv6-only network
 * with DNS64 every IPv4-only host resolves into NAT64's prefix. IPv4-compatible addresses are
 * deprecated, SIIT, 6to4 and Teredo are transition plumbing: refused whatever they carry.
 */
const PUBLIC_WHEN_EMBEDDED_IS = new Set(['ipv4Mapped', 'rfc6052']);

/**
 * ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`, and Node's resolver writes IPv4-compatible
 * answers that way; the URL parser writes every IPv6 address in hex, as the socket reads it.
 */
function canonicalIPv6(ip: string): string {
  if (!ip.includes('.')) return ip;
  const zone = ip.indexOf('%');
  const bare = zone < 0 ? ip : ip.slice(0, zone);
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1) + (zone < 0 ? '' : ip.slice(zone));
  } catch {
    return ip;
  }
}

/** What makes `ip` unfit as a webhook destination, or undefined when it is public. */
function forbiddenRange(ip: string): Verdict | undefined {
  // ipaddr.js also accepts forms such as "127.1" or "0x7f.1"; node never connects to those
  // as literals, so anything node would not call an IP is refused rather than interpreted.
  const family = isIP(ip);
  if (family === 0) return { range: 'unparseable' };
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(family === 6 ? canonicalIPv6(ip) : ip);
  } catch {
    return { range: 'unparseable' };
  }
  const range = addr.range();
  if (addr instanceof ipaddr.IPv4 || range === 'unspecified' || range === 'loopback') {
    return range === 'unicast' ? undefined : { range };
  }
  // An IPv6 address that carries an IPv4 one is judged by the host it reaches first, so that
  // `[::127.0.0.1]` is refused as the loopback address it is, whatever its own form.
  const carried = embeddedIPv4(addr);
  if (carried === undefined) return range === 'unicast' ? undefined : { range };
  const carriedRange = carried.range();
  if (carriedRange !== 'unicast') return { range: carriedRange, embedded: carried.toString() };
  if (PUBLIC_WHEN_EMBEDDED_IS.has(range)) return undefined;
  // ipaddr.js calls the IPv4-compatible range (::/96) unicast.
  return { range: range === 'unicast' ? 'ipv4Compatible' : range };
}

export function isForbiddenAddress(ip: string): boolean {
  return forbiddenRange(ip) !== undefined;
}

function forbidden(host: string, address: string, verdict: Verdict): ForbiddenDestinationError {
  return new ForbiddenDestinationError(host, address, verdict.range, verdict.embedded);
}

/**
 * Wraps the resolver the socket itself uses, so the check applies to the very addresses it
 * connects to: a DNS answer that changes between a pre-check and the connect (rebinding)
 * cannot slip through. Node asks with `all: true` (happy eyeballs), and may then try any
 * of the answers, so one forbidden answer refuses the whole host.
 */
function guardedLookup(lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, options, (err, address, family) => {
      if (err) {
        callback(err, address, family);
        return;
      }
      const answers = typeof address === 'string' ? [address] : address.map((a) => a.address);
      for (const answer of answers) {
        const verdict = forbiddenRange(answer);
        if (verdict !== undefined) {
          callback(forbidden(hostname, answer, verdict), options.all ? [] : '');
          return;
        }
      }
      callback(null, address, family);
    });
  };
}

interface ErrorLike {
  message?: unknown;
  code?: unknown;
  name?: unknown;
  errors?: unknown;
}

// Duck-typed rather than instanceof: errors raised by node's sockets come from the main
// realm, which under jest's vm sandbox is not the realm of this module's Error.
function asErrorLike(err: unknown): ErrorLike | undefined {
  return typeof err === 'object' && err !== null ? (err as ErrorLike) : undefined;
}

/** One line, without request details: it is stored with the attempt and shown to merchants. */
function describeError(err: unknown): string {
  const e = asErrorLike(err);
  let message: string;
  if (e === undefined) {
    message = String(err);
  } else if (typeof e.message === 'string' && e.message !== '') {
    message = e.message;
  } else if (Array.isArray(e.errors) && e.errors.length > 0) {
    // Node's happy eyeballs reports one failure per address tried, in an AggregateError
    // whose own message is empty.
    message = e.errors.map(describeError).join('; ');
  } else if (typeof e.code === 'string') {
    message = e.code;
  } else {
    message = typeof e.name === 'string' ? e.name : 'request failed';
  }
  return message.replace(/\s+/g, ' ').trim() || 'request failed';
}

const UNDICI_TIMEOUT_CODES = new Set<unknown>([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function isUndiciTimeout(err: unknown): boolean {
  return UNDICI_TIMEOUT_CODES.has(asErrorLike(err)?.code);
}

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('notify_url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`notify_url scheme "${url.protocol.slice(0, -1)}" is not supported; use http or https`);
  }
  return url;
}

export async function postWebhook(opts: PostWebhookOptions): Promise<PostResult> {
  const url = parseTarget(opts.url);
  const lookup = opts.lookup ?? (dns.lookup as LookupFunction);

  if (opts.guardAddresses) {
    // Node connects to a literal address without calling lookup at all, so the guard in
    // the lookup never sees it; it has to be judged here.
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (isIP(host) !== 0) {
      const verdict = forbiddenRange(host);
      if (verdict !== undefined) throw forbidden(host, host, verdict);
    }
  }

  // A fresh agent per delivery: nothing is pooled across merchants, and destroying it is the
  // only way to end an attempt still connecting (undici ignores the abort signal until the
  // socket is connected, leaving that to its own 10 s connect timeout).
  const agent = new Agent({
    connect: {
      lookup: opts.guardAddresses ? guardedLookup(lookup) : lookup,
      timeout: opts.timeoutMs,
    },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
    agent.destroy().catch(() => undefined);
  }, opts.timeoutMs);

  const now = opts.now ?? (() => performance.now());
  const started = now();
  try {
    const res = await request(url, {
      method: 'POST',
      headers: opts.headers,
      body: opts.body,
      dispatcher: agent,
      signal: controller.signal,
    });

    const decoder = new StringDecoder('utf8');
    let body = '';
    let received = 0;
    let truncated = false;
    for await (const chunk of res.body) {
      const bytes = chunk as Buffer;
      const room = opts.maxBodyBytes - received;
      if (bytes.length > room) {
        body += decoder.write(bytes.subarray(0, room));
        received += room;
        truncated = true;
        break;
      }
      body += decoder.write(bytes);
      received += bytes.length;
    }
    if (truncated) {
      // Leaving the loop early already destroys the stream; saying so keeps that from
      // depending on iterator semantics. A partial trailing character is dropped, not
      // replaced, so the text never exceeds the byte cap.
      res.body.destroy();
    } else {
      body += decoder.end();
    }
    return { status: res.statusCode, latencyMs: now() - started, body, truncated };
  } catch (err) {
    if (timedOut || isUndiciTimeout(err)) throw new Error(`no answer within ${opts.timeoutMs} ms`);
    if (err instanceof ForbiddenDestinationError) throw err;
    throw new Error(describeError(err));
  } finally {
    clearTimeout(timer);
    agent.destroy().catch(() => undefined);
  }
}
