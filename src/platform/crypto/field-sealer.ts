import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keyring } from './keyring';

/** `dpf1:<key id>:<base64 of iv ‖ tag ‖ ciphertext>`: a sealed field names the key that opens it. */
const PREFIX = 'dpf1';

/**
 * Seals sensitive fields for Postgres (applicant data) with AES-256-GCM under the payload
 * keyring's current key. The associated data binds a sealed value to where it is kept
 * (`merchant_applications.submit_data:<application_id>`), so a value copied into another row or
 * column does not open.
 */
export class FieldSealer {
  constructor(private readonly keyring: Keyring) {}

  seal(value: unknown, context: string): string {
    const { id, key } = this.keyring.current;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return `${PREFIX}:${id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  open<T = unknown>(sealed: string, context: string): T {
    const [prefix, keyId, payload] = sealed.split(':', 3);
    if (prefix !== PREFIX || !keyId || payload === undefined) throw new Error('not a sealed field');
    const key = this.keyring.key(keyId);
    if (!key) throw new MissingKeyError(keyId);
    const raw = Buffer.from(payload, 'base64');
    // iv (12) and a whole tag (16): a shorter value would hand GCM a truncated tag.
    if (raw.length < 12 + 16 + 1) throw new Error('a sealed field too short to be one');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12), { authTagLength: 16 });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    // A wrong key or context fails here (authentication tag mismatch), never with garbage.
    return JSON.parse(
      Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'),
    ) as T;
  }

  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(`${PREFIX}:`);
  }

  /** The id of the key a sealed value names. */
  static keyIdOf(sealed: string): string | undefined {
    return FieldSealer.isSealed(sealed) ? sealed.split(':', 3)[1] : undefined;
  }
}

/** Data sealed with a key the configuration no longer lists. */
export class MissingKeyError extends Error {
  override name = 'MissingKeyError';
  constructor(readonly keyId: string) {
    super(
      `sealed with payload key ${keyId}, which DURAPAY_PAYLOAD_KEYS does not list: add it back to read this data`,
    );
  }
}
