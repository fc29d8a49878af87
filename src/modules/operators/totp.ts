import { Secret, TOTP } from 'otpauth';

/** Time-based one-time codes (RFC 6238: SHA-1, 6 digits, 30 s), as authenticator apps read them. */
function totp(secretBase32: string, username = ''): TOTP {
  return new TOTP({
    issuer: 'durapay',
    label: username,
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A new secret (160 bits, base32) for an operator's authenticator. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://` address an authenticator app scans. */
export function totpUri(secretBase32: string, username: string): string {
  return totp(secretBase32, username).toString();
}

/**
 * The time step (30 s since the epoch) whose code `code` is, now or one step either side (clocks
 * drift); undefined when it is none of them.
 */
export function totpStep(secretBase32: string, code: string, now = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totp(secretBase32).validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? undefined : Math.floor(now / 30_000) + delta;
}

/** The code of a secret at a time (for the CLI's check and for tests). */
export function totpCode(secretBase32: string, now = Date.now()): string {
  return totp(secretBase32).generate({ timestamp: now });
}
