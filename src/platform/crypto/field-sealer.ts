import type { Keyring } from './keyring';
import { SecretBox } from './secret-box';

/** What every sealed field starts with: `dpf1:<key id>:<base64 of iv ‖ tag ‖ ciphertext>`. */
export const SEALED_FIELD_PREFIX = 'dpf1:';

/**
 * Seals sensitive fields for Postgres (applicant data) as JSON, with SecretBox's AES-256-GCM
 * under the payload keyring's current key, whose id the sealed value names. The associated data
 * binds a sealed value to where it is kept (`merchant_applications.submit_data:<application_id>`),
 * so a value copied into another row or column does not open.
 */
export class FieldSealer {
  constructor(private readonly keyring: Keyring) {}

  seal(value: unknown, context: string): string {
    const { id, key } = this.keyring.current;
    return `${SEALED_FIELD_PREFIX}${id}:${new SecretBox(key).sealToBase64(JSON.stringify(value), context)}`;
  }

  open<T = unknown>(sealed: string, context: string): T {
    const keyId = FieldSealer.keyIdOf(sealed);
    const payload =
      keyId === undefined ? undefined : sealed.slice(SEALED_FIELD_PREFIX.length + keyId.length + 1);
    if (!keyId || payload === undefined) throw new Error('not a sealed field');
    const key = this.keyring.key(keyId);
    if (!key) throw new MissingKeyError(keyId);
    return JSON.parse(new SecretBox(key).openBase64(payload, context)) as T;
  }

  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(SEALED_FIELD_PREFIX);
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
