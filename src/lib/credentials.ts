import { randomBytes } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `app_` + 16 lowercase base32 characters (80 random bits). */
export function generateAppId(): string {
  const bytes = randomBytes(10);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `app_${out}`;
}

/** 43 base64url characters (32 random bytes); the HMAC key is the UTF-8 bytes of this string. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
