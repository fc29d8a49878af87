import { randomBytes } from 'node:crypto';
import { randomBase32 } from '../ids';

/** `app_` + 16 lowercase base32 characters (80 random bits). */
export function generateAppId(): string {
  return `app_${randomBase32(16)}`;
}

/** 43 base64url characters (32 random bytes); the HMAC key is the UTF-8 bytes of this string. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
