import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Keyring } from './crypto/keyring';
import { MissingKeyError } from './crypto/field-sealer';

/** The metadata a sealed payload carries in the clear: what it is and which key opens it. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

/** Payloads at least this long are compressed before they are sealed, when that makes them smaller. */
const COMPRESS_FROM_BYTES = 512;
/** The first byte of the sealed plaintext: how the serialized payload after it is stored. */
const STORED = 0;
const DEFLATED = 1;

const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * Seals every Temporal payload with AES-256-GCM (SPEC §7): the whole payload (its metadata and
 * data) is serialized, compressed when that pays, and encrypted under the keyring's current key,
 * whose id travels in the sealed payload's metadata so that older keys still open what they
 * sealed. Payloads this codec did not seal (histories from before it, search attributes) pass
 * through decoding unchanged.
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
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const sealed = Buffer.concat([cipher.update(Uint8Array.of(format)), cipher.update(body), cipher.final()]);
    return {
      metadata: { encoding: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8.encode(id) },
      data: Buffer.concat([iv, sealed, cipher.getAuthTag()]),
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
    if (data.length < 12 + 16 + 1) throw new Error('an encrypted payload too short to be one');
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
    decipher.setAuthTag(data.subarray(data.length - 16));
    // A wrong key or altered bytes fail here (authentication tag mismatch), never with garbage.
    const plain = Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
    const format = plain[0];
    const body = plain.subarray(1);
    if (format !== STORED && format !== DEFLATED)
      throw new Error(`an encrypted payload of unknown format ${format}`);
    return temporal.api.common.v1.Payload.decode(format === DEFLATED ? inflateRawSync(body) : body);
  }
}

/** Whether a payload is sealed by this codec (a history read without it shows only these). */
export function isEncryptedPayload(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return !!encoding && text.decode(encoding) === ENCRYPTED_ENCODING;
}
