/**
 * The WeChat Pay sandbox's credentials: a service-provider account (sp_mchid, sp_appid), the
 * merchant's API key pair and certificate serial, the platform's "WeChat Pay public key" with its
 * PUB_KEY_ID_ id, and the APIv3 key. All are made up here, so nothing real is ever needed; a
 * development stack keeps them in a directory so that durapay's settings survive a restart.
 */
import { spAppSecretOf } from './oauth';
import { createHash, createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import path from 'node:path';
import { keyStore, rsaKeyPair } from '../key-store';
import { randomAlphanumeric, randomDigits } from './wire';

export interface WechatpaySandboxKeys {
  /** The service provider's merchant id, 10 digits. */
  spMchid: string;
  /** The service provider's app id, `wx` and 16 hex digits. */
  spAppid: string;
  /** The serial of the merchant's API certificate, 40 upper-case hex digits. */
  merchantSerial: string;
  /** PKCS#8 PEM: the merchant signs requests with it. */
  merchantPrivateKeyPem: string;
  /** SPKI PEM: the sandbox checks requests with it. */
  merchantPublicKeyPem: string;
  /** `PUB_KEY_ID_` and 32 digits: Wechatpay-Serial of every answer and callback. */
  platformPublicKeyId: string;
  /** PKCS#8 PEM: the sandbox signs answers and callbacks with it. */
  platformPrivateKeyPem: string;
  /** SPKI PEM: the merchant checks answers and callbacks with it. */
  platformPublicKeyPem: string;
  /** 32 ASCII alphanumerics: the AES-256-GCM key of callback resources. */
  apiV3Key: string;
}

export function generateWechatpaySandboxKeys(): WechatpaySandboxKeys {
  const merchant = rsaKeyPair();
  const platform = rsaKeyPair();
  return {
    spMchid: `19${randomDigits(8)}`,
    spAppid: `wx${randomBytes(8).toString('hex')}`,
    merchantSerial: randomBytes(20).toString('hex').toUpperCase(),
    merchantPrivateKeyPem: merchant.privateKey,
    merchantPublicKeyPem: merchant.publicKey,
    platformPublicKeyId: `PUB_KEY_ID_${randomDigits(32)}`,
    platformPrivateKeyPem: platform.privateKey,
    platformPublicKeyPem: platform.publicKey,
    apiV3Key: randomAlphanumeric(32),
  };
}

/**
 * The API v2 key of 委托代扣's v2 calls (32 hex characters), derived from the keys as the
 * AppSecret is, so that a key directory made before it needs nothing new.
 */
export function apiV2KeyOf(keys: { spMchid: string; merchantPrivateKeyPem: string }): string {
  return createHash('sha256')
    .update(`apiv2:${keys.spMchid}:${keys.merchantPrivateKeyPem}`)
    .digest('hex')
    .slice(0, 32);
}

/** The sandbox's one 委托代扣 contract template (plan_id). */
export const WECHATPAY_SANDBOX_PAPAY_PLAN_ID = '100001';

/** The files a key directory holds; the PEMs and the APIv3 key are what the *_FILE settings name. */
export const WECHATPAY_SANDBOX_KEY_FILES = {
  keys: 'wechatpay-sandbox-keys.json',
  merchantPrivateKey: 'merchant-private-key.pem',
  apiV3Key: 'apiv3.key',
  platformPublicKey: 'wechatpay-public-key.pem',
  spAppSecret: 'sp-app-secret.txt',
  apiV2Key: 'apiv2.key',
} as const;

/**
 * durapay's settings for talking to the sandbox mounted at `baseUrl`. With `keyDir` (where
 * saveWechatpaySandboxKeys wrote these keys) the secrets are named by their *_FILE settings
 * rather than inlined, so no private key sits in an environment listing.
 */
export function wechatpaySettings(
  keys: WechatpaySandboxKeys,
  baseUrl: string,
  keyDir?: string,
  mode: 'public_key' | 'certificate' = 'public_key',
): Record<string, string> {
  const settings: Record<string, string> = {
    WECHATPAY_BASE_URL: baseUrl.replace(/\/+$/, ''),
    WECHATPAY_SP_MCHID: keys.spMchid,
    WECHATPAY_SP_APPID: keys.spAppid,
    WECHATPAY_MERCHANT_SERIAL: keys.merchantSerial,
    WECHATPAY_PUBLIC_KEY_ID: keys.platformPublicKeyId,
    WECHATPAY_PAPAY_PLAN_ID: WECHATPAY_SANDBOX_PAPAY_PLAN_ID,
  };
  if (mode === 'certificate') {
    // The sandbox names its key by certificate: durapay downloads the certificates instead.
    delete settings.WECHATPAY_PUBLIC_KEY_ID;
    settings.WECHATPAY_PLATFORM_CERTIFICATES = 'download';
  }
  // The sandbox's AppSecret is derived from its keys (oauth.ts): the checkout's WeChat sign-in.
  if (keyDir === undefined) {
    settings.WECHATPAY_SP_APP_SECRET = spAppSecretOf(keys);
    settings.WECHATPAY_MERCHANT_PRIVATE_KEY = keys.merchantPrivateKeyPem;
    settings.WECHATPAY_APIV3_KEY = keys.apiV3Key;
    settings.WECHATPAY_APIV2_KEY = apiV2KeyOf(keys);
    if (mode === 'public_key') settings.WECHATPAY_PUBLIC_KEY = keys.platformPublicKeyPem;
  } else {
    const dir = path.resolve(keyDir);
    settings.WECHATPAY_MERCHANT_PRIVATE_KEY_FILE = path.join(
      dir,
      WECHATPAY_SANDBOX_KEY_FILES.merchantPrivateKey,
    );
    settings.WECHATPAY_APIV3_KEY_FILE = path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.apiV3Key);
    settings.WECHATPAY_SP_APP_SECRET_FILE = path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.spAppSecret);
    settings.WECHATPAY_APIV2_KEY_FILE = path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.apiV2Key);
    if (mode === 'public_key') {
      settings.WECHATPAY_PUBLIC_KEY_FILE = path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.platformPublicKey);
    }
  }
  return settings;
}

const SHAPES: Record<keyof WechatpaySandboxKeys, RegExp> = {
  spMchid: /^\d{10}$/,
  spAppid: /^wx[0-9a-f]{16}$/,
  merchantSerial: /^[0-9A-F]{40}$/,
  merchantPrivateKeyPem: /^-----BEGIN PRIVATE KEY-----/,
  merchantPublicKeyPem: /^-----BEGIN PUBLIC KEY-----/,
  platformPublicKeyId: /^PUB_KEY_ID_\d{32}$/,
  platformPrivateKeyPem: /^-----BEGIN PRIVATE KEY-----/,
  platformPublicKeyPem: /^-----BEGIN PUBLIC KEY-----/,
  apiV3Key: /^[A-Za-z0-9]{32}$/,
};

/** The keys of a parsed JSON file, or an error naming the first field that is wrong. */
function checkKeys(value: unknown, file: string): WechatpaySandboxKeys {
  if (typeof value !== 'object' || value === null) throw new Error(`${file} does not hold an object`);
  const record = value as Record<string, unknown>;
  for (const [field, shape] of Object.entries(SHAPES)) {
    const text = record[field];
    if (typeof text !== 'string' || !shape.test(text))
      throw new Error(`${file}: "${field}" is missing or malformed`);
  }
  const keys = record as unknown as WechatpaySandboxKeys;
  try {
    createPrivateKey(keys.merchantPrivateKeyPem);
    createPrivateKey(keys.platformPrivateKeyPem);
    createPublicKey(keys.merchantPublicKeyPem);
    createPublicKey(keys.platformPublicKeyPem);
  } catch (err) {
    throw new Error(`${file}: a key does not parse (${(err as Error).message})`);
  }
  const { spMchid, spAppid, merchantSerial, platformPublicKeyId, apiV3Key } = keys;
  const { merchantPrivateKeyPem, merchantPublicKeyPem, platformPrivateKeyPem, platformPublicKeyPem } = keys;
  // Only the known fields: a hand-edited file's extras do not travel further.
  return {
    spMchid,
    spAppid,
    merchantSerial,
    merchantPrivateKeyPem,
    merchantPublicKeyPem,
    platformPublicKeyId,
    platformPrivateKeyPem,
    platformPublicKeyPem,
    apiV3Key,
  };
}

const store = keyStore<WechatpaySandboxKeys>({
  file: WECHATPAY_SANDBOX_KEY_FILES.keys,
  companions: (keys) => ({
    [WECHATPAY_SANDBOX_KEY_FILES.merchantPrivateKey]: keys.merchantPrivateKeyPem,
    [WECHATPAY_SANDBOX_KEY_FILES.apiV3Key]: keys.apiV3Key,
    [WECHATPAY_SANDBOX_KEY_FILES.platformPublicKey]: keys.platformPublicKeyPem,
    // Derived from the keys (oauth.ts), written beside them so that a setting can name it.
    [WECHATPAY_SANDBOX_KEY_FILES.spAppSecret]: `${spAppSecretOf(keys)}\n`,
    [WECHATPAY_SANDBOX_KEY_FILES.apiV2Key]: `${apiV2KeyOf(keys)}\n`,
  }),
  check: checkKeys,
  generate: generateWechatpaySandboxKeys,
});

/** Saves the keys as JSON plus the files the *_FILE settings name, every one mode 0600. */
export const saveWechatpaySandboxKeys = (dir: string, keys: WechatpaySandboxKeys): void =>
  store.save(dir, keys);
/** The keys saved in `dir`, or undefined when none are; throws on a file that is not ours. */
export const loadWechatpaySandboxKeys = (dir: string): WechatpaySandboxKeys | undefined => store.load(dir);
/** The keys saved in `dir`, or new ones saved there (a damaged file is an error, never replaced). */
export const loadOrCreateWechatpaySandboxKeys = (dir: string): WechatpaySandboxKeys =>
  store.loadOrCreate(dir);
