import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts secrets at rest with AES-256-GCM. The associated data binds a ciphertext to its
 * row and column (`app_…:secret`), so a ciphertext copied into another row does not decrypt.
 * Sealed: `v1:` and the base64 of iv (12) ‖ tag (16) ‖ ciphertext.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the master key must be 32 bytes');
  }

  seal(plaintext: string, context: string): string {
    return `${VERSION}:${this.sealToBase64(plaintext, context)}`;
  }

  open(sealed: string, context: string): string {
    const [version, payload] = sealed.split(':', 2);
    if (version !== VERSION || !payload) throw new Error('unknown secret encoding');
    return this.openBase64(payload, context);
  }

  /** The sealed bytes alone, in base64, for a format that says its own version (FieldSealer). */
  sealToBase64(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  openBase64(payload: string, context: string): string {
    const raw = Buffer.from(payload, 'base64');
    // iv and a whole tag: a shorter value would hand GCM a truncated tag.
    if (raw.length < IV_BYTES + TAG_BYTES + 1) throw new Error('a sealed value too short to be one');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    // A wrong key or context fails here (authentication tag mismatch), never with garbage.
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  }
}
