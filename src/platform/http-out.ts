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
};

export class ForbiddenDestinationError extends Error {
  override readonly name = 'ForbiddenDestinationError';
  readonly host: string;
  readonly address: string;
  readonly range: string;

  constructor(host: string, address: string, range: string) {
    const wording = RANGE_WORDING[range] ?? `a non-public (${range})`;
    super(`notify_url host "${host}" resolves to ${address}, ${wording} address`);
    this.host = host;
    this.address = address;
    this.range = range;
  }
}

/** The ipaddr.js range that makes `ip` unfit as a webhook destination, or undefined when it is public. */
function forbiddenRange(ip: string): string | undefined {
  // ipaddr.js also accepts forms such as "127.1" or "0x7f.1"; node never connects to those
  // as literals, so anything node would not call an IP is refused rather than interpreted.
  if (isIP(ip) === 0) return 'unparseable';
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return 'unparseable';
  }
  // ::ffff:a.b.c.d reaches the IPv4 host a.b.c.d, so it must be judged as that host.
  if (addr instanceof ipaddr.IPv6 && addr.isIPv4MappedAddress()) addr = addr.toIPv4Address();
  const range = addr.range();
  return range === 'unicast' ? undefined : range;
}

export function isForbiddenAddress(ip: string): boolean {
  return forbiddenRange(ip) !== undefined;
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
        const range = forbiddenRange(answer);
        if (range !== undefined) {
          callback(new ForbiddenDestinationError(hostname, answer, range), options.all ? [] : '');
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
      const range = forbiddenRange(host);
      if (range !== undefined) throw new ForbiddenDestinationError(host, host, range);
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
