import { SandboxChannel, type SandboxChannelOptions } from './sandbox';
import type { Channel } from './types';

export interface ChannelRegistryConfig {
  /** Absent when the sandbox is disabled (production without explicit opt-in). */
  sandbox?: SandboxChannelOptions;
}

export interface ChannelRegistry {
  /** The channel for a `channel_code`, or undefined when it is unknown or not configured. */
  get(code: string): Channel | undefined;
  /** The codes of every configured channel. */
  codes(): string[];
}

/** Maps `channel_code` to its adapter; a channel without configuration is simply absent. */
export function createChannelRegistry(config: ChannelRegistryConfig): ChannelRegistry {
  const channels = new Map<string, Channel>();
  if (config.sandbox) {
    const sandbox = new SandboxChannel(config.sandbox);
    channels.set(sandbox.code, sandbox);
  }
  return {
    get: (code) => channels.get(code),
    codes: () => [...channels.keys()],
  };
}
