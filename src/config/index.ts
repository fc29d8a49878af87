/**
 * durapay's whole configuration: the core settings (src/platform/config.ts) and each channel's
 * own, under its code (`wechatpay`, `alipay`; src/channels/<code>/config.ts), undefined when the
 * channel is not configured. Composed here, above both, so that the platform knows no channel.
 */
import { CHANNEL_SETTINGS, type ChannelSettingsConfig } from '../channels/registry';
import { loadCoreConfig, type CoreConfig } from '../platform/config';

export type Config = CoreConfig & ChannelSettingsConfig;

/**
 * Reads every setting from the environment once, the channels' with the rest. An empty variable
 * counts as unset, so `PORT= npm start` behaves like no PORT at all rather than failing on "".
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  return loadCoreConfig<ChannelSettingsConfig>(env, cwd, CHANNEL_SETTINGS);
}
