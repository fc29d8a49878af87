/**
 * The WeChat Pay sandbox's credentials: a service-provider account (sp_mchid, sp_appid), the
 * merchant's API key pair and certificate serial, the platform's "WeChat Pay public key" with its
 * PUB_KEY_ID_ id, and the APIv3 key. All are made up here, so nothing real is ever needed; a
 * development stack keeps them in a directory so that durapay's settings survive a restart.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
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

function rsaKeyPair(): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
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

/** The files a key directory holds; the PEMs and the APIv3 key are what the *_FILE settings name. */
export const WECHATPAY_SANDBOX_KEY_FILES = {
  keys: 'wechatpay-sandbox-keys.json',
  merchantPrivateKey: 'merchant-private-key.pem',
  apiV3Key: 'apiv3.key',
  platformPublicKey: 'wechatpay-public-key.pem',
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
  };
  if (mode === 'certificate') {
    // The sandbox names its key by certificate: durapay downloads the certificates instead.
    delete settings.WECHATPAY_PUBLIC_KEY_ID;
    settings.WECHATPAY_PLATFORM_CERTIFICATES = 'download';
  }
  if (keyDir === undefined) {
    settings.WECHATPAY_MERCHANT_PRIVATE_KEY = keys.merchantPrivateKeyPem;
    settings.WECHATPAY_APIV3_KEY = keys.apiV3Key;
    if (mode === 'public_key') settings.WECHATPAY_PUBLIC_KEY = keys.platformPublicKeyPem;
  } else {
    const dir = path.resolve(keyDir);
    settings.WECHATPAY_MERCHANT_PRIVATE_KEY_FILE = path.join(
      dir,
      WECHATPAY_SANDBOX_KEY_FILES.merchantPrivateKey,
    );
    settings.WECHATPAY_APIV3_KEY_FILE = path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.apiV3Key);
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

/** Writes through a temporary file, owner-only from its creation, so no reader sees half a key. */
function writePrivately(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
  fs.renameSync(temporary, file);
}

function companionFiles(dir: string, keys: WechatpaySandboxKeys): [string, string][] {
  return [
    [path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.merchantPrivateKey), keys.merchantPrivateKeyPem],
    [path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.apiV3Key), keys.apiV3Key],
    [path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.platformPublicKey), keys.platformPublicKeyPem],
  ];
}

/** Saves the keys as JSON plus the three files the *_FILE settings name, every one mode 0600. */
export function saveWechatpaySandboxKeys(dir: string, keys: WechatpaySandboxKeys): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [file, content] of companionFiles(dir, keys)) writePrivately(file, content);
  // The JSON last: its presence is what marks the directory as complete.
  writePrivately(path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.keys), `${JSON.stringify(keys, null, 2)}\n`);
}

/** The keys saved in `dir`, or undefined when none are; throws on a file that is not ours. */
export function loadWechatpaySandboxKeys(dir: string): WechatpaySandboxKeys | undefined {
  const file = path.join(dir, WECHATPAY_SANDBOX_KEY_FILES.keys);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON`);
  }
  return checkKeys(parsed, file);
}

/**
 * The keys saved in `dir`, or new ones saved there. A damaged file is an error rather than
 * replaced: new keys would silently invalidate the settings a stack was started with.
 */
export function loadOrCreateWechatpaySandboxKeys(dir: string): WechatpaySandboxKeys {
  const existing = loadWechatpaySandboxKeys(dir);
  if (existing) {
    // The JSON is the truth; a PEM someone deleted comes back, since a *_FILE setting names it.
    for (const [file, content] of companionFiles(dir, existing)) {
      if (!fs.existsSync(file)) writePrivately(file, content);
    }
    return existing;
  }
  const keys = generateWechatpaySandboxKeys();
  saveWechatpaySandboxKeys(dir, keys);
  return keys;
}
