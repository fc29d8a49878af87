import type { Config } from '../platform/config';
import type { Channel } from './ports';
import { alipayChannelsFromConfig } from './alipay';
import { sandboxChannelsFromConfig } from './sandbox';
import { wechatpayChannelsFromConfig } from './wechatpay';

/**
 * A channel's adapters, one per configured account (e.g. several WeChat Pay merchant ids). The
 * registry builds every account's adapter at start, so a bad configuration fails the boot.
 */
export interface ChannelFactory {
  readonly code: string;
  /** The configured accounts' names; the first is the default. */
  readonly accounts: readonly string[];
  create(account: string): Channel;
}

/** A channel's factory from this deployment's configuration, or undefined when it is not configured. */
export type ChannelFromConfig = (config: Config, masterKey: Buffer) => ChannelFactory | undefined;

/** Every channel durapay knows. Adding one: a folder under src/channels/ and one line here. */
const CHANNELS: readonly ChannelFromConfig[] = [
  sandboxChannelsFromConfig,
  wechatpayChannelsFromConfig,
  alipayChannelsFromConfig,
];

export interface ChannelRegistry {
  /**
   * The adapter for a `channel_code` and one of its accounts (the default when absent), or
   * undefined when the channel is unknown or not configured, or has no such account.
   */
  get(code: string, account?: string): Channel | undefined;
  /** The codes of every configured channel. */
  codes(): string[];
}

/** Maps `channel_code` to its accounts' adapters; a channel without configuration is simply absent. */
export function createChannelRegistry(factories: readonly ChannelFactory[]): ChannelRegistry {
  const channels = new Map<string, { fallback: string | undefined; accounts: Map<string, Channel> }>();
  for (const factory of factories) {
    if (channels.has(factory.code)) throw new Error(`channel ${factory.code} is configured twice`);
    channels.set(factory.code, {
      fallback: factory.accounts[0],
      accounts: new Map(factory.accounts.map((account) => [account, factory.create(account)])),
    });
  }
  return {
    get: (code, account) => {
      const channel = channels.get(code);
      const name = account ?? channel?.fallback;
      return name === undefined ? undefined : channel?.accounts.get(name);
    },
    codes: () => [...channels.keys()],
  };
}

/** Every channel this deployment is configured for. */
export function channelsFromConfig(config: Config, masterKey: Buffer): ChannelRegistry {
  return createChannelRegistry(
    CHANNELS.map((fromConfig) => fromConfig(config, masterKey)).filter((f) => f !== undefined),
  );
}
