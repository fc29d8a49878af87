/**
 * The offline upstreams of real channels, one line each: what the development hook mounts in
 * the API (`npm start`), what `durapay sandbox <code>` runs alone and what the tests' stacks put
 * beside the gateway. Each follows its channel's published wire (signatures and encryption
 * included) in its own folder here and describes itself by an OfflineUpstream in its upstream.ts.
 * Adding one: a folder under sandbox/ and one line in OFFLINE_UPSTREAMS.
 *
 * (The contract, OfflineUpstream, is in ./upstream.ts, so that no upstream's folder imports this list.)
 */
import type { OfflineUpstream, RunningUpstream } from './upstream';
import { alipayUpstream } from './alipay/upstream';
import { wechatpayUpstream } from './wechatpay/upstream';

export type { OfflineUpstream, RunningUpstream, UpstreamLogger, UpstreamOptions } from './upstream';

/** Every offline upstream, by channel. */
export const OFFLINE_UPSTREAMS = [wechatpayUpstream, alipayUpstream] as const;

export type ListedUpstream = (typeof OFFLINE_UPSTREAMS)[number];

/** Any listed upstream, seen through what they all share. */
export type AnyOfflineUpstream = OfflineUpstream<string, unknown, RunningUpstream, Record<string, unknown>>;

/** The listed upstream of a channel, or undefined when the channel has none. */
export function offlineUpstream(code: string): AnyOfflineUpstream | undefined {
  return (OFFLINE_UPSTREAMS as readonly AnyOfflineUpstream[]).find((u) => u.code === code);
}

/** The variable that mounts a channel's offline upstream in the API: WECHATPAY_SANDBOX_ENABLED. */
export const upstreamEnabledVariable = (code: string): string => `${code.toUpperCase()}_SANDBOX_ENABLED`;
