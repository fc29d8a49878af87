/** The codec server's lockout (./codec.ts): how wrong tokens and sessions are counted and refused. */
import { createHmac, randomBytes } from 'node:crypto';

/** Wrong tokens or sessions tolerated per key (see Lockout) per minute before it is refused outright. */
const FAILURES_PER_MINUTE = 10;
/** How much of a presented token keys its failures: enough that two real tokens never share it. */
const TOKEN_PREFIX_CHARS = 8;
/** Keys each table of Lockout holds at most; past it the oldest go, so a flood cannot grow memory. */
const MAX_TRACKED_KEYS = 100_000;

/** Failures in the current minute of each key of one kind. */
class FailureWindows {
  private readonly windows = new Map<string, { count: number; since: number }>();
  private lastSweep = 0;

  count(key: string, now: number): number {
    this.sweep(now);
    const window = this.windows.get(key);
    return window && now - window.since < 60_000 ? window.count : 0;
  }

  add(key: string, now: number): void {
    const count = this.count(key, now);
    const since = count === 0 ? now : this.windows.get(key)!.since;
    this.windows.delete(key);
    if (this.windows.size >= MAX_TRACKED_KEYS) this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(key, { count: count + 1, since });
  }

  forget(key: string): void {
    this.windows.delete(key);
  }

  /** Drops ended windows, at most once a second: a check costs nothing in a flood of requests. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 1_000) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (now - window.since >= 60_000) this.windows.delete(key);
  }
}

/**
 * The codec server's lockout. Wrong tokens and sessions are counted in one-minute windows under
 * two keys, and a request is refused (429, its credentials not even checked, so a refused guess
 * learns nothing) while either key of it has FAILURES_PER_MINUTE failures:
 *
 * - the client's address: `req.ip`, the address the proxies named in TRUST_PROXY say they served
 *   (the socket's when none is named, so an X-Forwarded-For a client writes itself is never
 *   believed). One client is limited however it varies what it sends; and behind a proxy, once
 *   TRUST_PROXY names it, a client locks out itself, not every operator behind the same proxy.
 * - what the request presents: a token's first TOKEN_PREFIX_CHARS characters (the bearer
 *   token, or the one typed at sign-in), or a session cookie whole. A guesser that rotates its
 *   address is still limited while it works on one token (variations of an old or partly known
 *   one, which is how a token chosen by a person falls); and a client that keeps sending a stale
 *   token or cookie locks out that credential only: an operator holding the right token, which
 *   begins otherwise, is not refused (to lock it out one must already know its beginning).
 *
 * Neither bounds a guesser that varies both its address and the start of every guess. A count of
 *   all failures together would, at the price of letting anyone lock every operator out; the
 *   token's length is the defence there (at least 24 characters; `openssl rand -base64 32` gives
 *   44, far beyond any rate). Keys are kept as HMACs under a key of this process, never as the
 *   token's characters, and each table holds at most MAX_TRACKED_KEYS.
 */
export class Lockout {
  private readonly byAddress = new FailureWindows();
  private readonly byCredential = new FailureWindows();
  private readonly keyOfThisProcess = randomBytes(32);

  /** The key a presented token or cookie is counted under; undefined when nothing was presented. */
  credentialKey(presented: { token?: string; session?: string }): string | undefined {
    const mac = (v: string) => createHmac('sha256', this.keyOfThisProcess).update(v).digest('base64url');
    if (presented.token !== undefined) return `token:${mac(presented.token.slice(0, TOKEN_PREFIX_CHARS))}`;
    if (presented.session !== undefined) return `session:${mac(presented.session)}`;
    return undefined;
  }

  refuses(address: string, credential: string | undefined, now = Date.now()): boolean {
    return (
      this.byAddress.count(address, now) >= FAILURES_PER_MINUTE ||
      (credential !== undefined && this.byCredential.count(credential, now) >= FAILURES_PER_MINUTE)
    );
  }

  failed(address: string, credential: string | undefined, now = Date.now()): void {
    this.byAddress.add(address, now);
    if (credential !== undefined) this.byCredential.add(credential, now);
  }

  /** A sign-in with the right token clears its address (its token's prefix was never counted). */
  signedIn(address: string): void {
    this.byAddress.forget(address);
  }
}
