import ipaddr from 'ipaddr.js';

export interface SourceLimitOptions {
  /** Tokens a source gets back per second. */
  perSecond: number;
  /** Tokens a source holds at most: a second's worth unless given (at least one). */
  burst?: number;
  /**
   * Sources remembered at once; past it the longest unused are forgotten (their debt with them),
   * so that a flood of addresses costs bounded memory. About 100 bytes each.
   */
  maxSources?: number;
  /** Milliseconds; tests hold the clock still to count exactly what the limit lets through. */
  now?: () => number;
}

interface Bucket {
  /** Below zero: the source owes tokens, and is refused until time has paid them back. */
  tokens: number;
  /** When `tokens` was last brought up to date. */
  at: number;
  /** Refusals since the source was last heard, so that the first alone is worth a log line. */
  refusals: number;
}

/**
 * A token bucket per source address, in this process's memory, for requests anyone may send
 * and only some of which are genuine (channel callbacks). It is paid only for requests that
 * turned out not to be genuine (`charge`), never for genuine ones, so a source's own genuine
 * traffic, however heavy or bursty, never uses up its limit; a source with no whole token is
 * refused before anything is read (`check`). A request is charged after it failed, so requests
 * already admitted when a source runs out still cost it: the balance goes below zero and the
 * source is refused until it has paid, which bounds what a source gets over time by the rate,
 * however many requests it had in flight at once.
 *
 * A source that owes nothing and holds a full bucket is not kept at all: the map holds only
 * sources that failed lately, and its size is bounded.
 */
export class SourceRateLimit {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly burst: number;
  private readonly maxSources: number;
  private readonly now: () => number;

  constructor(options: SourceLimitOptions) {
    this.perMs = options.perSecond / 1000;
    this.burst = options.burst ?? Math.max(1, options.perSecond);
    this.maxSources = options.maxSources ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Whether `source` may be heard now. A refusal is free for the source (a source refused while
   * it keeps sending would otherwise never get out of debt) and costs durapay only the answer.
   */
  check(source: string): { allowed: boolean; refusedInARow: number } {
    const bucket = this.current(source);
    if (!bucket) return { allowed: true, refusedInARow: 0 };
    if (bucket.tokens >= 1) {
      bucket.refusals = 0;
      return { allowed: true, refusedInARow: 0 };
    }
    bucket.refusals += 1;
    return { allowed: false, refusedInARow: bucket.refusals };
  }

  /** A request of `source` was not genuine: it pays one token, into debt when it has none. */
  charge(source: string): void {
    const bucket = this.current(source) ?? this.remember(source);
    bucket.tokens -= 1;
  }

  /** Sources kept now (for tests of the bound). */
  get size(): number {
    return this.buckets.size;
  }

  /** The source's bucket brought up to date, or undefined when it is full (and forgotten). */
  private current(source: string): Bucket | undefined {
    const bucket = this.buckets.get(source);
    if (!bucket) return undefined;
    const now = this.now();
    // A clock that steps back gives nothing back and takes nothing.
    bucket.tokens = Math.min(this.burst, bucket.tokens + Math.max(0, now - bucket.at) * this.perMs);
    bucket.at = now;
    // Last in the map's order: the map is kept in order of last use.
    this.buckets.delete(source);
    if (bucket.tokens >= this.burst) return undefined;
    this.buckets.set(source, bucket);
    return bucket;
  }

  private remember(source: string): Bucket {
    if (this.buckets.size >= this.maxSources) this.forget();
    const bucket = { tokens: this.burst, at: this.now(), refusals: 0 };
    this.buckets.set(source, bucket);
    return bucket;
  }

  /**
   * Makes room: forgets the sources whose bucket has filled up since, then, if that was not
   * enough, the longest unused ones, down to nine tenths of the bound so that this runs once
   * in many inserts.
   */
  private forget(): void {
    const target = Math.floor(this.maxSources * 0.9);
    const now = this.now();
    for (const [source, bucket] of this.buckets) {
      if (bucket.tokens + Math.max(0, now - bucket.at) * this.perMs >= this.burst)
        this.buckets.delete(source);
    }
    for (const source of this.buckets.keys()) {
      if (this.buckets.size <= target) break;
      this.buckets.delete(source);
    }
  }
}

/**
 * The source a request's address is counted as: an IPv4 address (an IPv4-mapped IPv6 one as
 * its IPv4 form); an IPv6 address by its /64, the prefix one host or subscriber is given whole,
 * so that the 2^64 addresses inside it are one source, not 2^64.
 */
export function sourceOf(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return 'unknown';
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}
