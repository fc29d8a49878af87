import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A key of this process only: what is compared is never the secrets themselves. */
const COMPARE_KEY = randomBytes(32);

/**
 * Whether a presented secret is the expected one, in constant time whatever their lengths: their
 * HMACs under a key of this process are compared.
 */
export function sameSecret(given: string, expected: string): boolean {
  const mac = (v: string) => createHmac('sha256', COMPARE_KEY).update(v).digest();
  return timingSafeEqual(mac(given), mac(expected));
}

/** Whether an `Authorization` header carries `Bearer <token>`. */
export function bearerIs(authorization: string | undefined, token: string): boolean {
  if (authorization === undefined || !/^bearer /i.test(authorization)) return false;
  return sameSecret(authorization.slice(7).trim(), token);
}
