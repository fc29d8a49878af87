/**
 * What the hosted checkout signs (SPEC §15), with keys derived from the payload keyring (HKDF), so
 * every API process signs alike and a rotated key still verifies what its predecessor signed:
 *
 * - the OAuth `state` of a wallet's sign-in: a random nonce and a MAC over the nonce, the kind,
 *   the reference (the link or the order) and the channel. Only letters and digits, at most 128
 *   (WeChat's limit): 20 + 32. The nonce's row makes it single use; the MAC makes a forged one
 *   fail before anything is looked up.
 * - an order's page token: the trade number and a MAC of it, so that an order's page cannot be
 *   guessed from its trade number.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../../platform/crypto/keyring';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const NONCE_LENGTH = 20;
const MAC_HEX = 32;

function subkey(key: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `durapay checkout ${purpose}`, 32));
}

function randomAlnum(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  // 62 does not divide 256: a byte of 248 or more would favour the first letters; draw again.
  for (let i = 0; out.length < length; i++) {
    const b = i < bytes.length ? bytes[i]! : randomBytes(1)[0]!;
    if (b < 248) out += ALNUM[b % 62];
  }
  return out;
}

export interface StateSubject {
  kind: 'link' | 'order' | 'code';
  ref: string;
  channelCode: string;
}

export class CheckoutSigner {
  private readonly stateKeys: Buffer[];
  private readonly pageKeys: Buffer[];

  constructor(keyring: Keyring) {
    this.stateKeys = keyring.keys.map((k) => subkey(k.key, 'state'));
    this.pageKeys = keyring.keys.map((k) => subkey(k.key, 'order page'));
  }

  private mac(key: Buffer, text: string, hex: number): string {
    return createHmac('sha256', key).update(text).digest('hex').slice(0, hex);
  }

  private verifies(keys: Buffer[], text: string, mac: string, hex: number): boolean {
    const given = Buffer.from(mac);
    return keys.some((key) => {
      const expected = Buffer.from(this.mac(key, text, hex));
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
  }

  /** A new state for a sign-in: its nonce (the row's key) and the state to send. */
  newState(subject: StateSubject): { nonce: string; state: string } {
    const nonce = randomAlnum(NONCE_LENGTH);
    const text = `${nonce}|${subject.kind}|${subject.ref}|${subject.channelCode}`;
    return { nonce, state: `${nonce}${this.mac(this.stateKeys[0]!, text, MAC_HEX)}` };
  }

  /** The nonce of a state whose MAC is over this subject; undefined for a forged or malformed one. */
  nonceOf(state: string, subject: StateSubject): string | undefined {
    if (!/^[A-Za-z0-9]+$/.test(state) || state.length !== NONCE_LENGTH + MAC_HEX) return undefined;
    const nonce = state.slice(0, NONCE_LENGTH);
    const text = `${nonce}|${subject.kind}|${subject.ref}|${subject.channelCode}`;
    return this.verifies(this.stateKeys, text, state.slice(NONCE_LENGTH), MAC_HEX) ? nonce : undefined;
  }

  /** The nonce a well-formed state names, before its subject is known (read from its row). */
  static nonceIn(state: string): string | undefined {
    return /^[A-Za-z0-9]+$/.test(state) && state.length === NONCE_LENGTH + MAC_HEX
      ? state.slice(0, NONCE_LENGTH)
      : undefined;
  }

  /** The page token of an order: its trade number and a MAC of it. */
  orderToken(tradeNo: string): string {
    return `${tradeNo}-${this.mac(this.pageKeys[0]!, tradeNo, 24)}`;
  }

  /** The trade number a page token names, when its MAC holds. */
  tradeNoOf(token: string): string | undefined {
    const match = /^([A-Za-z0-9]{1,64})-([0-9a-f]{24})$/.exec(token);
    if (!match) return undefined;
    return this.verifies(this.pageKeys, match[1]!, match[2]!, 24) ? match[1] : undefined;
  }
}
