/**
 * The sandbox's platform key in its two names: the WeChat Pay public key (PUB_KEY_ID) and the
 * platform certificates. It decides which one signs answers and callbacks, and opens the fields
 * a client sealed under either.
 */
import { createPrivateKey } from 'node:crypto';
import type { Request } from 'express';
import { issuePlatformCertificate, type PlatformCertificate } from './certificates';
import { paramError } from './http';
import type { WechatpaySandboxKeys } from './keys';
import { decryptSensitive, type PlatformSigner } from './wire';

export type PlatformIdentity = 'public_key' | 'certificate';

export class PlatformKey {
  private readonly publicKeySigner: PlatformSigner;
  private readonly certificates: PlatformCertificate[];

  constructor(
    private readonly keys: WechatpaySandboxKeys,
    private readonly identity: PlatformIdentity | undefined,
  ) {
    this.publicKeySigner = {
      publicKeyId: keys.platformPublicKeyId,
      privateKey: createPrivateKey(keys.platformPrivateKeyPem),
    };
    // The public key's pair has a certificate too: either name opens what the other sealed.
    this.certificates = [
      issuePlatformCertificate({
        privateKeyPem: keys.platformPrivateKeyPem,
        publicKeyPem: keys.platformPublicKeyPem,
      }),
    ];
  }

  /** Who signs now: the public key, or the newest certificate. */
  signer(): PlatformSigner {
    if (this.identity !== 'certificate') return this.publicKeySigner;
    const newest = this.certificates[this.certificates.length - 1]!;
    return { publicKeyId: newest.serial, privateKey: newest.privateKey };
  }

  /** The certificates `GET /v3/certificates` lists, oldest first. */
  listCertificates(): PlatformCertificate[] {
    return [...this.certificates];
  }

  /** A new certificate on a new key pair; in `certificate` identity, the signer from now on. */
  rotate(): PlatformCertificate {
    const next = issuePlatformCertificate();
    this.certificates.push(next);
    return next;
  }

  /** A sealed field's plaintext; the request must name the platform key that sealed it. */
  unseal(req: Request, ciphertext: string, field: string): string {
    const serial = req.get('Wechatpay-Serial');
    const key =
      serial === this.keys.platformPublicKeyId
        ? this.publicKeySigner.privateKey
        : this.certificates.find((c) => c.serial === serial?.toUpperCase())?.privateKey;
    if (key === undefined) {
      throw paramError(
        serial === undefined
          ? `the Wechatpay-Serial header is required when ${field} is encrypted: it names the platform public key used`
          : `Wechatpay-Serial ${serial} is neither the platform public key ${this.keys.platformPublicKeyId} nor a platform certificate`,
      );
    }
    const plain = decryptSensitive(key, ciphertext);
    if (plain === undefined || plain.trim() === '') {
      throw paramError(
        `${field} does not decrypt: it must be base64 of RSA-OAEP (SHA-1) under the platform public key`,
      );
    }
    return plain;
  }
}
