/**
 * The Alipay app's settings (ALIPAY_*): their schema, which platform/config.ts validates with
 * every other variable, and their reading, once at start, keys from their variable or _FILE,
 * and checked.
 */
import Joi from 'joi';
import { ConfigError, rsaKeyFrom, secretSetting, type SettingReader } from '../../platform/config-parts';

export interface AlipayConfig {
  /** Alipay's gateway (…/gateway.do): Alipay's own, or durapay's offline one in development and tests. */
  gatewayUrl: string;
  appId: string;
  /** The seller's PID (2088…), when set: a notification for another seller is refused. */
  sellerId?: string;
  /** The application private key, as PKCS#8 PEM whatever form it was given in. */
  privateKey: string;
  /** Alipay's public key (SPKI PEM): answers and notifications are verified with it. */
  alipayPublicKey: string;
  /**
   * The third-party app authorisation page (appToAppAuth.htm), when ALIPAY_AUTH_PAGE_URL sets it;
   * otherwise the gateway's own (authPageUrlOf).
   */
  authPageUrl?: string;
}

/** The variables' schema (ALIPAY_SANDBOX_ENABLED is the development hook's). */
export const ALIPAY_SETTINGS = {
  ALIPAY_GATEWAY_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('https://openapi.alipay.com/gateway.do'),
  ALIPAY_APP_ID: Joi.string().pattern(/^\d{8,32}$/, 'digits'),
  ALIPAY_SELLER_ID: Joi.string().pattern(/^2088\d{12}$/, 'a 2088… PID'),
  ALIPAY_PRIVATE_KEY: Joi.string(),
  ALIPAY_PRIVATE_KEY_FILE: Joi.string(),
  ALIPAY_PUBLIC_KEY: Joi.string(),
  ALIPAY_PUBLIC_KEY_FILE: Joi.string(),
  // No default here: unset, the page follows ALIPAY_GATEWAY_URL (authPageUrlOf).
  ALIPAY_AUTH_PAGE_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
};

/** Alipay's authorisation page for each of its gateways: production, and both sandboxes. */
const ALIPAY_AUTH_PAGES: Record<string, string> = {
  'openapi.alipay.com': 'https://openauth.alipay.com/oauth2/appToAppAuth.htm',
  'openapi-sandbox.dl.alipaydev.com': 'https://openauth-sandbox.dl.alipaydev.com/oauth2/appToAppAuth.htm',
  'openapi.alipaydev.com': 'https://openauth.alipaydev.com/oauth2/appToAppAuth.htm',
};

/**
 * Where a merchant authorises the app: ALIPAY_AUTH_PAGE_URL when set; else the page of the
 * configured gateway, Alipay's own for its production and sandbox gateways, and for any other
 * gateway (durapay's offline one, mounted at …/alipay/gateway.do) `oauth2/appToAppAuth.htm`
 * beside its gateway.do, so that pointing ALIPAY_GATEWAY_URL at it is enough.
 */
export function authPageUrlOf(config: Pick<AlipayConfig, 'gatewayUrl' | 'authPageUrl'>): string {
  if (config.authPageUrl) return config.authPageUrl;
  const gateway = new URL(config.gatewayUrl);
  return ALIPAY_AUTH_PAGES[gateway.hostname] ?? new URL('oauth2/appToAppAuth.htm', gateway).toString();
}

/** The Alipay app when ALIPAY_APP_ID is set; its two keys are then required. */
export function alipayConfig(str: SettingReader, cwd: string): AlipayConfig | undefined {
  const appId = str('ALIPAY_APP_ID');
  if (appId === undefined) return undefined;
  const privateText = secretSetting(str, 'ALIPAY_PRIVATE_KEY', cwd);
  const publicText = secretSetting(str, 'ALIPAY_PUBLIC_KEY', cwd);
  for (const [key, value] of [
    ['ALIPAY_PRIVATE_KEY', privateText],
    ['ALIPAY_PUBLIC_KEY', publicText],
  ] as const) {
    if (value === undefined || value.trim() === '') {
      throw new ConfigError(
        `invalid configuration: "${key}" (or "${key}_FILE") is required when "ALIPAY_APP_ID" is set`,
      );
    }
  }
  const privateKey = rsaKeyFrom(privateText!, 'private');
  if (!privateKey) {
    throw new ConfigError(
      'invalid configuration: "ALIPAY_PRIVATE_KEY" is not an RSA private key (PEM, or base64 PKCS#8 or PKCS#1)',
    );
  }
  // A private key would also yield a public one: refuse it, it is not Alipay's key.
  const publicKey = /PRIVATE KEY-----/.test(publicText!) ? undefined : rsaKeyFrom(publicText!, 'public');
  if (!publicKey) {
    throw new ConfigError(
      'invalid configuration: "ALIPAY_PUBLIC_KEY" is not an RSA public key (PEM or base64); it is Alipay\'s key, not the app\'s',
    );
  }
  const sellerId = str('ALIPAY_SELLER_ID');
  const authPageUrl = str('ALIPAY_AUTH_PAGE_URL');
  return {
    gatewayUrl: str('ALIPAY_GATEWAY_URL')!,
    appId,
    ...(sellerId ? { sellerId } : {}),
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    alipayPublicKey: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    ...(authPageUrl ? { authPageUrl } : {}),
  };
}
