import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Keyring } from './crypto/keyring';
import { MissingKeyError } from './crypto/field-sealer';

/** The metadata a sealed payload carries in the clear: what it is and which key opens it. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

/**
 * A payload opens to at most this much (Temporal refuses payloads over 2 MiB by default): a
 * sealed payload is authenticated before it is inflated, but an operator's `/codec/encode` could
 * seal a small bomb.
 */
export const MAX_PAYLOAD_BYTES = 4 * 1024 * 1024;
/** Payloads at least this long are compressed before they are sealed, when that makes them smaller. */
const COMPRESS_FROM_BYTES = 512;
/** Each payload's key is derived from the payload key and a random salt of this many bytes. */
const SALT_BYTES = 16;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** HKDF's `info`: what a derived key is for, so that it never serves another purpose. */
const SUBKEY_INFO = Buffer.from('durapay payload codec v1');
/** The first byte of the sealed plaintext: how the serialized payload after it is stored. */
const STORED = 0;
const DEFLATED = 1;

const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * Seals every Temporal payload with AES-256-GCM (SPEC §7): the whole payload (its metadata and
 * data) is serialized, compressed when that pays, and encrypted under a key derived (HKDF-SHA256)
 * from the keyring's current key and a random salt of its own, so that no key nears GCM's limit
 * for random IVs (2^32 messages) however many payloads a busy gateway seals. The key's id travels
 * in the sealed payload's metadata, so older keys still open what they sealed. Payloads this codec
 * did not seal (histories from before it, search attributes) pass through decoding unchanged.
 *
 * Sealed data: salt (16) ‖ iv (12) ‖ ciphertext ‖ tag (16); the plaintext is a format byte
 * (0 stored, 1 deflated) and the serialized `temporal.api.common.v1.Payload`.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keyring: Keyring) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.seal(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.open(payload));
  }

  seal(payload: Payload): Payload {
    const serialized = temporal.api.common.v1.Payload.encode(payload).finish();
    let body: Uint8Array = serialized;
    let format = STORED;
    if (serialized.length >= COMPRESS_FROM_BYTES) {
      const deflated = deflateRawSync(serialized);
      if (deflated.length < serialized.length) {
        body = deflated;
        format = DEFLATED;
      }
    }
    const { id, key } = this.keyring.current;
    const salt = randomBytes(SALT_BYTES);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', subkey(key, salt), iv, { authTagLength: TAG_BYTES });
    const sealed = Buffer.concat([cipher.update(Uint8Array.of(format)), cipher.update(body), cipher.final()]);
    return {
      metadata: { encoding: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8.encode(id) },
      data: Buffer.concat([salt, iv, sealed, cipher.getAuthTag()]),
    };
  }

  open(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (!encoding || text.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
    const keyIdBytes = payload.metadata?.[KEY_ID_METADATA];
    if (!keyIdBytes) throw new Error('an encrypted payload without a key id');
    const keyId = text.decode(keyIdBytes);
    const key = this.keyring.key(keyId);
    if (!key) throw new MissingKeyError(keyId);
    const data = Buffer.from(payload.data ?? []);
    if (data.length < SALT_BYTES + IV_BYTES + 1 + TAG_BYTES) {
      throw new Error('an encrypted payload too short to be one');
    }
    const salt = data.subarray(0, SALT_BYTES);
    const iv = data.subarray(SALT_BYTES, SALT_BYTES + IV_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', subkey(key, salt), iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    // A wrong key or altered bytes fail here (authentication tag mismatch), never with garbage.
    const plain = Buffer.concat([
      decipher.update(data.subarray(SALT_BYTES + IV_BYTES, data.length - TAG_BYTES)),
      decipher.final(),
    ]);
    const format = plain[0];
    const body = plain.subarray(1);
    if (format !== STORED && format !== DEFLATED) {
      throw new Error(`an encrypted payload of unknown format ${format}`);
    }
    // Authenticated first (above), and bounded: it never inflates past a payload's largest size.
    return temporal.api.common.v1.Payload.decode(
      format === DEFLATED ? inflateRawSync(body, { maxOutputLength: MAX_PAYLOAD_BYTES }) : body,
    );
  }
}

/** The key one payload is sealed with: HKDF-SHA256 of the payload key and the payload's salt. */
function subkey(key: Buffer, salt: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', key, salt, SUBKEY_INFO, 32));
}

/** Whether a payload is sealed by this codec (a history read without it shows only these). */
export function isEncryptedPayload(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return !!encoding && text.decode(encoding) === ENCRYPTED_ENCODING;
}
