import { randomBytes, randomInt } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `length` lowercase base32 characters (5 random bits each). */
export function randomBase32(length: number): string {
  const bytes = randomBytes(Math.ceil((length * 5) / 8));
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < length) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** `ntf_` + 20 base32 characters (100 random bits). */
export function generateNotificationId(): string {
  return `ntf_${randomBase32(20)}`;
}

/** `apl_` + 20 base32 characters. */
export function generateApplicationId(): string {
  return `apl_${randomBase32(20)}`;
}

/** A trade_no (`P`) or refund_no (`R`): the prefix, UTC yyyyMMddHHmmss and 10 random digits. */
export function generateServiceNo(prefix: 'P' | 'R' | 'T' | 'K', now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const digits = Array.from({ length: 10 }, () => randomInt(10)).join('');
  return `${prefix}${stamp}${digits}`;
}
