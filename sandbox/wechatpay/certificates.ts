/**
 * The WeChat Pay sandbox's platform certificates (平台证书), the older of v3's two ways to name
 * the key that signs answers and callbacks: X.509 certificates, listed by `GET /v3/certificates`
 * each sealed with the APIv3 key (AEAD_AES_256_GCM, associated data `certificate`), and named in
 * `Wechatpay-Serial` by their serial number in upper-case hex. A rotation issues a new key pair
 * and certificate; the old one stays listed (and still opens what was sealed for it) until it
 * expires, as on WeChat Pay, so a client has time to fetch the new one.
 *
 * node-forge writes the certificates: node:crypto reads X.509 but cannot issue it.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { encryptResource, rfc3339Cst, type EncryptedResource } from './wire';

/** How long a sandbox platform certificate is valid: WeChat's are issued for five years. */
const VALIDITY_MS = 5 * 365 * 24 * 3600_000;

export interface PlatformCertificate {
  /** Upper-case hex, as Wechatpay-Serial and serial_no carry it. */
  serial: string;
  certificatePem: string;
  privateKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
}

/**
 * A certificate for a key pair (a new 2048-bit one unless given), issued by the sandbox to
 * itself under the name WeChat Pay's platform certificates carry.
 */
export function issuePlatformCertificate(
  keyPair?: { privateKeyPem: string; publicKeyPem: string },
  nowMs = Date.now(),
): PlatformCertificate {
  const pair =
    keyPair ??
    (() => {
      const made = generateKeyPairSync('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      });
      return { privateKeyPem: made.privateKey, publicKeyPem: made.publicKey };
    })();
  // A positive 20-byte serial: the first byte below 0x80, as DER integers are signed.
  const serialBytes = randomBytes(20);
  serialBytes[0] = (serialBytes[0]! & 0x7f) | 0x10;
  const serial = serialBytes.toString('hex').toUpperCase();
  const notBefore = new Date(nowMs - 3600_000);
  const notAfter = new Date(nowMs + VALIDITY_MS);

  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(pair.publicKeyPem);
  cert.serialNumber = serial.toLowerCase();
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  const name = [
    { shortName: 'C', value: 'CN' },
    { shortName: 'O', value: 'durapay WeChat Pay sandbox' },
    { shortName: 'OU', value: 'Tenpay.com CA Center' },
    { shortName: 'CN', value: 'Tenpay.com sandbox platform certificate' },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.sign(forge.pki.privateKeyFromPem(pair.privateKeyPem), forge.md.sha256.create());
  return {
    serial,
    certificatePem: forge.pki.certificateToPem(cert),
    privateKey: createPrivateKey(pair.privateKeyPem),
    notBefore,
    notAfter,
  };
}

/** What `GET /v3/certificates` answers: every listed certificate, each sealed with the APIv3 key. */
export function certificatesView(
  certificates: readonly PlatformCertificate[],
  apiV3Key: string,
): {
  data: {
    serial_no: string;
    effective_time: string;
    expire_time: string;
    encrypt_certificate: Omit<EncryptedResource, 'original_type'>;
  }[];
} {
  return {
    data: certificates.map((c) => {
      const { original_type: _type, ...sealed } = encryptResource(
        apiV3Key,
        c.certificatePem,
        'certificate',
        'certificate',
      );
      return {
        serial_no: c.serial,
        effective_time: rfc3339Cst(c.notBefore.getTime()),
        expire_time: rfc3339Cst(c.notAfter.getTime()),
        encrypt_certificate: sealed,
      };
    }),
  };
}
