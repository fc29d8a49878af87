import { createHmac } from 'node:crypto';
import type { Config } from '../config';
import { createChannelRegistry, type ChannelRegistry } from './registry';

/** The sandbox's shared secret: configured, or derived from the master key so every process agrees. */
export function sandboxSecret(config: Config, masterKey: Buffer): string {
  return (
    config.sandbox.secret ?? createHmac('sha256', masterKey).update('durapay sandbox channel').digest('hex')
  );
}

/** Every channel this deployment is configured for. */
export function channelsFromConfig(config: Config, masterKey: Buffer): ChannelRegistry {
  return createChannelRegistry({
    sandbox: config.sandbox.enabled
      ? {
          baseUrl: config.sandbox.baseUrl,
          secret: sandboxSecret(config, masterKey),
          // Leaves room inside the request deadline for the workflow around the call.
          timeoutMs: Math.max(1_000, config.api.requestTimeoutMs - 2_000),
          maxAmount: config.sandbox.maxAmount,
        }
      : undefined,
  });
}
