/** The offline Alipay gateway as the upstream list describes it (../upstreams.ts). */
import type { OfflineUpstream } from '../upstream';
import {
  alipaySettings,
  generateAlipaySandboxKeys,
  loadAlipaySandboxKeys,
  loadOrCreateAlipaySandboxKeys,
  type AlipaySandboxKeys,
} from './keys';
import { createAlipaySandbox, type AlipaySandbox, type AlipaySandboxOptions } from './router';

/**
 * Its own options beyond every upstream's: how long the app authorisations it grants last, how
 * long steered transfers stay DEALING, and how long a barcode buyer who confirms later takes.
 */
export type AlipayUpstreamOptions = Pick<
  AlipaySandboxOptions,
  | 'appAuthExpiresInSeconds'
  | 'appAuthReExpiresInSeconds'
  | 'appAuthCodeTtlMs'
  | 'transferDelaysMs'
  | 'buyerConfirmMs'
>;

export const alipayUpstream: OfflineUpstream<
  'alipay',
  AlipaySandboxKeys,
  AlipaySandbox,
  AlipayUpstreamOptions
> = {
  code: 'alipay',
  title: 'offline Alipay gateway',
  shortTitle: 'offline gateway',
  path: '/alipay',
  entry: '/gateway.do',
  defaultPort: 8092,
  keys: {
    generate: generateAlipaySandboxKeys,
    load: loadAlipaySandboxKeys,
    loadOrCreate: loadOrCreateAlipaySandboxKeys,
  },
  // alipaySettings points durapay at gateway.do under the mount.
  settings: (keys, url, keyDir) => alipaySettings(keys, url, keyDir),
  create: ({ durapayUrl, ...options }) =>
    createAlipaySandbox({
      ...options,
      // As an operator sets the app's gateway URL in Alipay's console, pointed at durapay.
      ...(durapayUrl ? { gatewayUrl: `${durapayUrl}/api/v1/notify/complaint/alipay` } : {}),
    }),
};
