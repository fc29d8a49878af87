/**
 * The keys WeChat Pay signs with, by the name `Wechatpay-Serial` gives them: the WeChat Pay
 * public key (its PUB_KEY_ID, from configuration), and, in platform-certificate mode, the
 * certificates `GET /v3/certificates` lists, downloaded and checked by durapay rather than by a
 * tool that trusts what it downloads:
 *
 * - each certificate arrives sealed with the APIv3 key (AEAD_AES_256_GCM), which only WeChat Pay
 *   and the merchant hold: one that does not open is refused;
 * - its X.509 serial must be the `serial_no` it is listed under, it must be valid now, its key RSA;
 * - the answer itself must be signed (±300 s) by one of the certificates it lists.
 *
 * A download that fails any check changes nothing. Certificates are fetched again every 12 hours,
 * when a callback or answer names a serial not yet known (at most once a minute), and after an
 * answer failed verification; expired ones are dropped. That is how a rotation by WeChat Pay,
 * which lists the new certificate before signing with it, reaches durapay without a restart.
 */
import { X509Certificate, type KeyObject } from 'node:crypto';
import { ChannelError } from '../errors';
import { decryptResource, MAX_CLOCK_SKEW_S, verifyWechatpaySignature } from './signature';

const REFRESH_EVERY_MS = 12 * 3600_000;
const MIN_REFRESH_GAP_MS = 60_000;

/** An answer of `GET /v3/certificates` as it arrived: the exact body and its Wechatpay-* headers. */
export interface CertificatesAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

export interface PlatformCertificate {
  serial: string;
  key: KeyObject;
  notBefore: Date;
  notAfter: Date;
}

interface ListedCertificate {
  serial_no?: unknown;
  encrypt_certificate?: {
    algorithm?: unknown;
    nonce?: unknown;
    associated_data?: unknown;
    ciphertext?: unknown;
  };
}

function invalid(message: string): ChannelError {
  return new ChannelError('invalid_response', `WeChat Pay platform certificates: ${message}`);
}

/** Serials compare as numbers written in hex: case and leading zeros aside. */
export function sameSerial(a: string, b: string): boolean {
  const norm = (s: string) => s.toUpperCase().replace(/^0+/, '');
  return norm(a) === norm(b);
}

/** The certificates of a download, every check above passed, or a ChannelError saying which failed. */
export function verifyCertificatesAnswer(
  answer: CertificatesAnswer,
  apiV3Key: string,
  nowMs = Date.now(),
): PlatformCertificate[] {
  if (answer.status >= 500 || answer.status === 429) {
    // WeChat Pay busy or failing: try again, it is not a verdict on the certificates.
    throw new ChannelError('unreachable', `WeChat Pay platform certificates: HTTP ${answer.status}`);
  }
  if (answer.status !== 200)
    throw new ChannelError('refused', `WeChat Pay platform certificates: HTTP ${answer.status}`);
  let listed: ListedCertificate[];
  try {
    const parsed = JSON.parse(answer.body) as { data?: unknown };
    if (!Array.isArray(parsed.data) || parsed.data.length === 0) throw new Error('no data');
    listed = parsed.data as ListedCertificate[];
  } catch {
    throw invalid('the answer is not a list of certificates');
  }
  const certificates = listed.map((item, i) => {
    const sealed = item.encrypt_certificate;
    if (typeof item.serial_no !== 'string' || typeof sealed !== 'object' || sealed === null) {
      throw invalid(`data[${i}] lacks serial_no or encrypt_certificate`);
    }
    if (sealed.algorithm !== 'AEAD_AES_256_GCM' || sealed.associated_data !== 'certificate') {
      throw invalid(`certificate ${item.serial_no} is not sealed as AEAD_AES_256_GCM over "certificate"`);
    }
    let pem: string;
    try {
      pem = decryptResource(
        {
          algorithm: sealed.algorithm,
          ciphertext: String(sealed.ciphertext),
          nonce: String(sealed.nonce),
          associated_data: sealed.associated_data,
        },
        apiV3Key,
      );
    } catch {
      throw invalid(`certificate ${item.serial_no} does not open with the APIv3 key`);
    }
    let x509: X509Certificate;
    try {
      x509 = new X509Certificate(pem);
    } catch {
      throw invalid(`certificate ${item.serial_no} is not X.509`);
    }
    if (!sameSerial(x509.serialNumber, item.serial_no)) {
      throw invalid(`certificate listed as ${item.serial_no} has serial ${x509.serialNumber}`);
    }
    if (x509.publicKey.asymmetricKeyType !== 'rsa') throw invalid(`certificate ${item.serial_no} is not RSA`);
    return {
      serial: item.serial_no.toUpperCase(),
      key: x509.publicKey,
      notBefore: new Date(x509.validFrom),
      notAfter: new Date(x509.validTo),
    };
  });
  // Only what is valid now: an expired certificate signs nothing durapay should believe.
  const valid = certificates.filter((c) => c.notBefore.getTime() <= nowMs && nowMs < c.notAfter.getTime());
  if (valid.length === 0) throw invalid('no listed certificate is valid now');
  const serial = answer.headers['wechatpay-serial'];
  const timestamp = answer.headers['wechatpay-timestamp'];
  const nonce = answer.headers['wechatpay-nonce'];
  const signature = answer.headers['wechatpay-signature'];
  const signer = serial === undefined ? undefined : valid.find((c) => sameSerial(c.serial, serial));
  if (!signer || !timestamp || !nonce || !signature) {
    throw invalid('the answer is not signed by a certificate it lists');
  }
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > MAX_CLOCK_SKEW_S) {
    throw invalid('the answer’s Wechatpay-Timestamp is outside the tolerance');
  }
  if (!verifyWechatpaySignature({ timestamp, nonce, body: answer.body, signature }, signer.key)) {
    throw invalid('the answer’s Wechatpay-Signature does not verify');
  }
  return valid;
}

export interface PlatformKeyringOptions {
  /** WeChat Pay public key mode: the PUB_KEY_ID and key. */
  publicKey?: { id: string; key: KeyObject };
  /** Platform-certificate mode: fetches `GET /v3/certificates` (signed, unverified). */
  download?: () => Promise<CertificatesAnswer>;
  apiV3Key: string;
  now?: () => number;
  /** The shortest time between two downloads asked for by an unknown serial; a minute unless set. */
  minRefreshGapMs?: number;
}

/** Every key WeChat Pay may sign with, by serial; refreshed as the header comment says. */
export class PlatformKeyring {
  private certificates: PlatformCertificate[] = [];
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private stale = true;
  private inflight: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly minGapMs: number;

  constructor(private readonly options: PlatformKeyringOptions) {
    if (!options.publicKey && !options.download) {
      throw new Error('WeChat Pay needs a public key or platform-certificate download');
    }
    this.now = options.now ?? Date.now;
    this.minGapMs = options.minRefreshGapMs ?? MIN_REFRESH_GAP_MS;
  }

  /** The trusted keys by serial, the certificates fetched first when due. */
  async keys(): Promise<Map<string, KeyObject>> {
    const age = this.now() - this.fetchedAt;
    // An expired set is as stale as one an answer failed against.
    if (this.current().size === 0) this.stale = true;
    if (this.options.download && ((this.stale && age >= this.minGapMs) || age >= REFRESH_EVERY_MS)) {
      await this.refresh().catch((err: unknown) => {
        // With keys still in hand, a failed refresh waits for the next; with none, it is the answer.
        if (this.current().size === 0) throw err;
      });
    }
    const keys = this.current();
    if (keys.size === 0)
      throw new ChannelError('unreachable', 'WeChat Pay platform certificates are not available');
    return keys;
  }

  /** The key a serial names; an unknown one triggers a refresh (at most once a minute). */
  async find(serial: string): Promise<KeyObject | undefined> {
    const keys = await this.keys();
    const known = keys.get(serial) ?? keys.get(serial.toUpperCase());
    if (known || !this.options.download || this.now() - this.fetchedAt < this.minGapMs) return known;
    await this.refresh().catch(() => undefined);
    return this.current().get(serial.toUpperCase());
  }

  /** The key sensitive fields are sealed with, and its name: the public key, else the newest certificate. */
  async sealer(): Promise<{ serial: string; key: KeyObject }> {
    if (this.options.publicKey) return { serial: this.options.publicKey.id, key: this.options.publicKey.key };
    await this.keys();
    // The latest to take effect; of equals, the one listed last.
    const newest = this.certificates.reduce((best, c) =>
      c.notBefore.getTime() >= best.notBefore.getTime() ? c : best,
    );
    return { serial: newest.serial, key: newest.key };
  }

  /** An answer failed verification: maybe a new certificate signs now. Fetch again when next asked. */
  markStale(): void {
    this.stale = true;
  }

  private current(): Map<string, KeyObject> {
    const now = this.now();
    const keys = new Map<string, KeyObject>();
    if (this.options.publicKey) keys.set(this.options.publicKey.id, this.options.publicKey.key);
    for (const c of this.certificates) if (now < c.notAfter.getTime()) keys.set(c.serial, c.key);
    return keys;
  }

  /** One download at a time; callers arriving meanwhile share it. */
  private refresh(): Promise<void> {
    this.inflight ??= (async () => {
      try {
        const answer = await this.options.download!();
        this.certificates = verifyCertificatesAnswer(answer, this.options.apiV3Key, this.now());
        this.stale = false;
      } finally {
        this.fetchedAt = this.now();
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }
}
