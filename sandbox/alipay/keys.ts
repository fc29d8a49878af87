/**
 * The Alipay gateway's credentials: an application (app_id) with its RSA2 key pair, the seller's
 * PID, and the "Alipay public key" pair the gateway signs with. All are made up here, so nothing
 * real is ever needed; a development stack keeps them in a directory so that durapay's settings
 * survive a restart.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import path from 'node:path';
import { keyStore, rsaKeyPair } from '../key-store';
import { randomDigits } from './wire';

export interface AlipaySandboxKeys {
  /** The application's id, 16 digits. */
  appId: string;
  /** The seller's PID, `2088` and 12 digits. */
  sellerId: string;
  /** PKCS#8 PEM, RSA 2048: the application signs requests with it. */
  appPrivateKeyPem: string;
  /** SPKI PEM: the gateway checks requests with it. */
  appPublicKeyPem: string;
  /** PKCS#8 PEM: the gateway signs answers, notifications and returns with it. */
  alipayPrivateKeyPem: string;
  /** SPKI PEM: the application checks answers and notifications with it. */
  alipayPublicKeyPem: string;
}

export function generateAlipaySandboxKeys(): AlipaySandboxKeys {
  const app = rsaKeyPair();
  const alipay = rsaKeyPair();
  return {
    appId: `2021${randomDigits(12)}`,
    sellerId: `2088${randomDigits(12)}`,
    appPrivateKeyPem: app.privateKey,
    appPublicKeyPem: app.publicKey,
    alipayPrivateKeyPem: alipay.privateKey,
    alipayPublicKeyPem: alipay.publicKey,
  };
}

/** The files a key directory holds; the two PEMs are what the *_FILE settings name. */
export const ALIPAY_SANDBOX_KEY_FILES = {
  keys: 'alipay-sandbox-keys.json',
  appPrivateKey: 'app-private-key.pem',
  alipayPublicKey: 'alipay-public-key.pem',
} as const;

/**
 * durapay's settings for talking to the gateway at `gatewayUrl` (…/gateway.do; a base URL gets
 * it appended). With `keyDir` (where the keys were saved) the keys are named by their *_FILE
 * settings rather than inlined, so no private key sits in an environment listing.
 */
export function alipaySettings(
  keys: AlipaySandboxKeys,
  gatewayUrl: string,
  keyDir?: string,
): Record<string, string> {
  const trimmed = gatewayUrl.replace(/\/+$/, '');
  const settings: Record<string, string> = {
    ALIPAY_APP_ID: keys.appId,
    ALIPAY_GATEWAY_URL: trimmed.endsWith('/gateway.do') ? trimmed : `${trimmed}/gateway.do`,
    ALIPAY_SELLER_ID: keys.sellerId,
  };
  if (keyDir === undefined) {
    settings.ALIPAY_PRIVATE_KEY = keys.appPrivateKeyPem;
    settings.ALIPAY_PUBLIC_KEY = keys.alipayPublicKeyPem;
  } else {
    const dir = path.resolve(keyDir);
    settings.ALIPAY_PRIVATE_KEY_FILE = path.join(dir, ALIPAY_SANDBOX_KEY_FILES.appPrivateKey);
    settings.ALIPAY_PUBLIC_KEY_FILE = path.join(dir, ALIPAY_SANDBOX_KEY_FILES.alipayPublicKey);
  }
  return settings;
}

const SHAPES: Record<keyof AlipaySandboxKeys, RegExp> = {
  appId: /^\d{16}$/,
  sellerId: /^2088\d{12}$/,
  appPrivateKeyPem: /^-----BEGIN PRIVATE KEY-----/,
  appPublicKeyPem: /^-----BEGIN PUBLIC KEY-----/,
  alipayPrivateKeyPem: /^-----BEGIN PRIVATE KEY-----/,
  alipayPublicKeyPem: /^-----BEGIN PUBLIC KEY-----/,
};

/** The keys of a parsed JSON file, or an error naming the first field that is wrong. */
function checkKeys(value: unknown, file: string): AlipaySandboxKeys {
  if (typeof value !== 'object' || value === null) throw new Error(`${file} does not hold an object`);
  const record = value as Record<string, unknown>;
  for (const [field, shape] of Object.entries(SHAPES)) {
    const text = record[field];
    if (typeof text !== 'string' || !shape.test(text))
      throw new Error(`${file}: "${field}" is missing or malformed`);
  }
  const keys = record as unknown as AlipaySandboxKeys;
  try {
    createPrivateKey(keys.appPrivateKeyPem);
    createPrivateKey(keys.alipayPrivateKeyPem);
    createPublicKey(keys.appPublicKeyPem);
    createPublicKey(keys.alipayPublicKeyPem);
  } catch (err) {
    throw new Error(`${file}: a key does not parse (${(err as Error).message})`);
  }
  const { appId, sellerId, appPrivateKeyPem, appPublicKeyPem, alipayPrivateKeyPem, alipayPublicKeyPem } =
    keys;
  // Only the known fields: a hand-edited file's extras do not travel further.
  return { appId, sellerId, appPrivateKeyPem, appPublicKeyPem, alipayPrivateKeyPem, alipayPublicKeyPem };
}

const store = keyStore<AlipaySandboxKeys>({
  file: ALIPAY_SANDBOX_KEY_FILES.keys,
  companions: (keys) => ({
    [ALIPAY_SANDBOX_KEY_FILES.appPrivateKey]: keys.appPrivateKeyPem,
    [ALIPAY_SANDBOX_KEY_FILES.alipayPublicKey]: keys.alipayPublicKeyPem,
  }),
  check: checkKeys,
  generate: generateAlipaySandboxKeys,
});

/** Saves the keys as JSON plus the files the *_FILE settings name, every one mode 0600. */
export const saveAlipaySandboxKeys = (dir: string, keys: AlipaySandboxKeys): void => store.save(dir, keys);
/** The keys saved in `dir`, or undefined when none are; throws on a file that is not ours. */
export const loadAlipaySandboxKeys = (dir: string): AlipaySandboxKeys | undefined => store.load(dir);
/** The keys saved in `dir`, or new ones saved there (a damaged file is an error, never replaced). */
export const loadOrCreateAlipaySandboxKeys = (dir: string): AlipaySandboxKeys => store.loadOrCreate(dir);
