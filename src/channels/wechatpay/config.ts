/**
 * The WeChat Pay service-provider account's settings (WECHATPAY_*): their schema, which
 * platform/config.ts validates with every other variable, and their reading, once at start,
 * every key from its variable or from the file its _FILE variable names, and checked.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import Joi from 'joi';
import { ConfigError, pem, secretSetting, type SettingReader } from '../../platform/config-parts';

export interface WechatpayConfig {
  /** Where the v3 API is: WeChat's own, or durapay's offline one in development and tests. */
  baseUrl: string;
  /** The service provider's merchant id (sp_mchid) and app id (sp_appid). */
  spMchid: string;
  spAppid: string;
  /** The serial number of the merchant API certificate whose private key signs requests. */
  merchantSerial: string;
  merchantPrivateKey: string;
  /** The APIv3 key that opens callbacks' resources (32 characters). */
  apiV3Key: string;
  /**
   * WeChat Pay public key mode: the key's id (as Wechatpay-Serial names it) and the key. Absent
   * only in platform-certificate mode; with both, either may sign (a migration between them).
   */
  publicKeyId?: string;
  publicKey?: string;
  /** Platform-certificate mode: durapay downloads, checks and rotates `/v3/certificates`. */
  platformCertificates?: boolean;
  /**
   * The AppSecret of sp_appid (the 公众号's 开发者密码), when set: the hosted checkout signs WeChat
   * buyers in with web OAuth `snsapi_base` for their openid. Unset: no checkout in WeChat.
   */
  spAppSecret?: string;
  /**
   * 委托代扣 (auto-debit contracts, SPEC §17), when set: the API v2 key that signs the v2 XML
   * papay calls and their notifications, and the contract template (plan_id) the buyer signs.
   * Unset: no recurring contracts on WeChat Pay.
   */
  papay?: { apiV2Key: string; planId: string };
}

/** The variables' schema (WECHATPAY_SANDBOX_ENABLED is the development hook's). */
export const WECHATPAY_SETTINGS = {
  WECHATPAY_BASE_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('https://api.mch.weixin.qq.com'),
  WECHATPAY_SP_MCHID: Joi.string().pattern(/^\d{6,32}$/, 'digits'),
  WECHATPAY_SP_APPID: Joi.string().pattern(/^[A-Za-z0-9_]{1,32}$/, 'an app id'),
  WECHATPAY_MERCHANT_SERIAL: Joi.string().pattern(/^[0-9A-Fa-f]{8,64}$/, 'a hex serial number'),
  WECHATPAY_MERCHANT_PRIVATE_KEY: Joi.string(),
  WECHATPAY_MERCHANT_PRIVATE_KEY_FILE: Joi.string(),
  WECHATPAY_APIV3_KEY: Joi.string().length(32),
  WECHATPAY_APIV3_KEY_FILE: Joi.string(),
  WECHATPAY_PUBLIC_KEY_ID: Joi.string().pattern(/^[A-Za-z0-9_-]{1,64}$/, 'a key id'),
  WECHATPAY_PUBLIC_KEY: Joi.string(),
  WECHATPAY_PUBLIC_KEY_FILE: Joi.string(),
  WECHATPAY_PLATFORM_CERTIFICATES: Joi.string().valid('download'),
  WECHATPAY_SP_APP_SECRET: Joi.string().pattern(/^[0-9A-Za-z]{16,64}$/, 'an AppSecret'),
  WECHATPAY_SP_APP_SECRET_FILE: Joi.string(),
  WECHATPAY_APIV2_KEY: Joi.string(),
  WECHATPAY_APIV2_KEY_FILE: Joi.string(),
  WECHATPAY_PAPAY_PLAN_ID: Joi.string().pattern(/^\d{1,20}$/, 'digits'),
};

const WECHATPAY_REQUIRED = [
  'WECHATPAY_SP_APPID',
  'WECHATPAY_MERCHANT_SERIAL',
  'WECHATPAY_MERCHANT_PRIVATE_KEY',
  'WECHATPAY_APIV3_KEY',
] as const;

/** The WeChat Pay account when WECHATPAY_SP_MCHID is set; every other setting is then required. */
export function wechatpayConfig(str: SettingReader, cwd: string): WechatpayConfig | undefined {
  const spMchid = str('WECHATPAY_SP_MCHID');
  if (spMchid === undefined) return undefined;
  const values: Record<string, string | undefined> = {};
  for (const key of WECHATPAY_REQUIRED) {
    values[key] = key.endsWith('_KEY') ? secretSetting(str, key, cwd) : str(key);
    if (values[key] === undefined || values[key] === '') {
      const alternative = key.endsWith('_KEY') ? ` (or "${key}_FILE")` : '';
      throw new ConfigError(
        `invalid configuration: "${key}"${alternative} is required when "WECHATPAY_SP_MCHID" is set`,
      );
    }
  }
  const apiV3Key = values.WECHATPAY_APIV3_KEY!.trim();
  // The AES-256 key is these characters' bytes: 32 ASCII characters, as WeChat Pay's console sets.
  if (!/^[\x21-\x7e]{32}$/.test(apiV3Key)) {
    throw new ConfigError('invalid configuration: "WECHATPAY_APIV3_KEY" must be 32 ASCII characters');
  }
  const merchantPrivateKey = pem(values.WECHATPAY_MERCHANT_PRIVATE_KEY!);
  try {
    const key = createPrivateKey(merchantPrivateKey);
    if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
  } catch {
    throw new ConfigError(
      'invalid configuration: "WECHATPAY_MERCHANT_PRIVATE_KEY" is not an RSA private key in PEM form',
    );
  }
  const account = {
    baseUrl: str('WECHATPAY_BASE_URL')!.replace(/\/+$/, ''),
    spMchid,
    spAppid: values.WECHATPAY_SP_APPID!,
    merchantSerial: values.WECHATPAY_MERCHANT_SERIAL!.toUpperCase(),
    merchantPrivateKey,
    apiV3Key,
    ...appSecretOf(str, cwd),
    ...papayOf(str, cwd),
  };
  const certificates = str('WECHATPAY_PLATFORM_CERTIFICATES') === 'download';
  const publicKeyId = str('WECHATPAY_PUBLIC_KEY_ID');
  const publicKeyText = secretSetting(str, 'WECHATPAY_PUBLIC_KEY', cwd);
  if ((publicKeyId === undefined) !== (publicKeyText === undefined)) {
    throw new ConfigError(
      'invalid configuration: "WECHATPAY_PUBLIC_KEY_ID" and "WECHATPAY_PUBLIC_KEY" (or "WECHATPAY_PUBLIC_KEY_FILE") go together',
    );
  }
  if (publicKeyText === undefined) {
    if (!certificates) {
      throw new ConfigError(
        'invalid configuration: "WECHATPAY_PUBLIC_KEY_ID" and "WECHATPAY_PUBLIC_KEY" (or "WECHATPAY_PUBLIC_KEY_FILE") are required when "WECHATPAY_SP_MCHID" is set, unless "WECHATPAY_PLATFORM_CERTIFICATES" is "download"',
      );
    }
    return { ...account, platformCertificates: true };
  }
  const publicKey = pem(publicKeyText);
  try {
    // A private key would also yield a public one: refuse it, it is not WeChat Pay's key.
    if (/PRIVATE KEY-----/.test(publicKey)) throw new Error('a private key');
    const key = createPublicKey(publicKey);
    if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
  } catch {
    throw new ConfigError(
      'invalid configuration: "WECHATPAY_PUBLIC_KEY" is not an RSA public key in PEM form',
    );
  }
  return { ...account, publicKeyId: publicKeyId!, publicKey, platformCertificates: certificates };
}

/** WECHATPAY_SP_APP_SECRET (or its _FILE), checked: a secret, so never quoted in an error. */
function appSecretOf(str: SettingReader, cwd: string): { spAppSecret?: string } {
  const secret = secretSetting(str, 'WECHATPAY_SP_APP_SECRET', cwd)?.trim();
  if (secret === undefined) return {};
  if (!/^[0-9A-Za-z]{16,64}$/.test(secret)) {
    throw new ConfigError(
      'invalid configuration: "WECHATPAY_SP_APP_SECRET" must be 16 to 64 letters and digits (the AppSecret of WECHATPAY_SP_APPID)',
    );
  }
  return { spAppSecret: secret };
}

/**
 * WECHATPAY_APIV2_KEY (or its _FILE) with WECHATPAY_PAPAY_PLAN_ID: both or neither. The key is a
 * secret, so never quoted in an error.
 */
function papayOf(str: SettingReader, cwd: string): { papay?: { apiV2Key: string; planId: string } } {
  const apiV2Key = secretSetting(str, 'WECHATPAY_APIV2_KEY', cwd)?.trim();
  const planId = str('WECHATPAY_PAPAY_PLAN_ID');
  if (apiV2Key === undefined && planId === undefined) return {};
  if (apiV2Key === undefined || planId === undefined) {
    throw new ConfigError(
      'invalid configuration: "WECHATPAY_APIV2_KEY" (or "WECHATPAY_APIV2_KEY_FILE") and "WECHATPAY_PAPAY_PLAN_ID" go together (recurring contracts)',
    );
  }
  // The MD5 / HMAC-SHA256 key is these characters' bytes: 32 ASCII characters, as the console sets.
  if (!/^[\x21-\x7e]{32}$/.test(apiV2Key)) {
    throw new ConfigError('invalid configuration: "WECHATPAY_APIV2_KEY" must be 32 ASCII characters');
  }
  return { papay: { apiV2Key, planId } };
}
