/**
 * What an offline upstream of a real channel is, for the list of them (./upstreams.ts): each
 * channel's folder here describes itself by one in its upstream.ts.
 */
import type { Router } from 'express';
import type { ScaledClock } from '../src/platform/clock';

/** What an offline upstream logs through. */
export interface UpstreamLogger {
  info(message: string, meta?: object): void;
  warn(message: string, meta?: object): void;
  error(message: string, meta?: object): void;
}

/** What every offline upstream is made with. */
export interface UpstreamOptions<K> {
  keys: K;
  /** Where its router is mounted as browsers and durapay reach it, e.g. http://127.0.0.1:8080/wechatpay. */
  publicBaseUrl: string;
  /** Multiplies every delay (callback retries, slow refunds, expiries); 1 by default. */
  timeScale?: number;
  /** How long a slow refund stays processing, before timeScale. */
  refundDelayMs?: number;
  logger?: UpstreamLogger;
  /**
   * Where durapay is reached, when the upstream is mounted in durapay's own API: what an
   * operator sets once in the channel's console to point it at durapay (Alipay's app gateway
   * URL, where its complaint messages go) is set to it from the start.
   */
  durapayUrl?: string;
  /**
   * The calendar of recurring contracts (deduction windows, once a day, a notice's wait), which
   * runs at durapay's DURAPAY_TIME_SCALE on a scaled stack; real time by default.
   */
  contractClock?: ScaledClock;
}

/** A running offline upstream. */
export interface RunningUpstream {
  router: Router;
  /** Resolves once nothing is due or running for the trade (for any trade, without one). */
  idle(outTradeNo?: string): Promise<void>;
  /** Stops its timers and aborts callbacks in flight. */
  close(): void;
}

/**
 * An offline upstream: the channel it stands in for, where it is mounted, its made-up
 * credentials and the channel settings that point durapay at it. `O` are its own options beyond
 * the common ones (WeChat Pay: which name its platform key goes by).
 */
export interface OfflineUpstream<Code extends string, K, S extends RunningUpstream, O extends object> {
  /** The `channel_code` it answers for. */
  readonly code: Code;
  /** What people are told it is: `offline Alipay gateway`. */
  readonly title: string;
  /** The same beside its channel's label, in the start banner: `offline gateway`. */
  readonly shortTitle: string;
  /** Its path, in the API and on its own server: `/wechatpay`. */
  readonly path: string;
  /** Where under its path durapay's adapter calls it, when not at the path itself: `/gateway.do`. */
  readonly entry: string;
  /** The port `durapay sandbox <code>` listens on unless told. */
  readonly defaultPort: number;
  /** Made-up credentials (both sides' keys), kept 0600 in a folder of their own. */
  readonly keys: {
    generate(): K;
    load(dir: string): K | undefined;
    loadOrCreate(dir: string): K;
  };
  /**
   * The channel's settings (environment variables) that point durapay at the upstream reached at
   * `url` (its mount): secrets inline, or by _FILE from `keyDir` when given.
   */
  settings(keys: K, url: string, keyDir?: string, options?: O): Record<string, string>;
  create(options: UpstreamOptions<K> & O): S;
}
