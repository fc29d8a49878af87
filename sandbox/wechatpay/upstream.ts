/** The offline WeChat Pay v3 sandbox as the upstream list describes it (../upstreams.ts). */
import type { OfflineUpstream } from '../upstream';
import {
  generateWechatpaySandboxKeys,
  loadOrCreateWechatpaySandboxKeys,
  loadWechatpaySandboxKeys,
  wechatpaySettings,
  type WechatpaySandboxKeys,
} from './keys';
import { createWechatpaySandbox, type WechatpaySandbox } from './router';

/**
 * Its own options: the platform key's name, how long a kept-processing return lasts, which
 * sub_mchids stand for another service provider's, how long a transfer's payee may take, and
 * how long a code payment's late buyer takes to confirm.
 */
export interface WechatpayUpstreamOptions {
  /**
   * `certificate`: the key is named by platform-certificate serial, and durapay is told to
   * download the certificates (WECHATPAY_PLATFORM_CERTIFICATES=download) instead of a public key.
   */
  platformIdentity?: 'public_key' | 'certificate';
  /** How long a return whose description holds `[sandbox:return-processing]` stays so. */
  returnDelayMs?: number;
  /** Sub_mchids of another service provider (`19999…` by default): see sub-merchants.ts. */
  foreignSubMchidPrefixes?: readonly string[];
  /** How long a transfer's payee has to confirm (24 h by default, before timeScale). */
  transferConfirmWindowMs?: number;
  /** How long a code payment's buyer who confirms later takes (1 s by default, before timeScale). */
  buyerConfirmMs?: number;
}

export const wechatpayUpstream: OfflineUpstream<
  'wechatpay',
  WechatpaySandboxKeys,
  WechatpaySandbox,
  WechatpayUpstreamOptions
> = {
  code: 'wechatpay',
  title: 'offline WeChat Pay v3 sandbox',
  shortTitle: 'offline v3 sandbox',
  path: '/wechatpay',
  entry: '',
  defaultPort: 8091,
  keys: {
    generate: generateWechatpaySandboxKeys,
    load: loadWechatpaySandboxKeys,
    loadOrCreate: loadOrCreateWechatpaySandboxKeys,
  },
  settings: (keys, url, keyDir, options) =>
    wechatpaySettings(keys, url, keyDir, options?.platformIdentity ?? 'public_key'),
  create: (options) => createWechatpaySandbox(options),
};
