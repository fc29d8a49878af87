/** The rules of operator accounts and of signing in (SPEC §12), as pure functions. */
import { OPERATOR_ROLES, type OperatorRole } from './roles';

export { OPERATOR_ROLES, type OperatorRole };

export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{1,63}$/;
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/** Why a username cannot be used, or undefined. */
export function usernameProblem(username: string): string | undefined {
  if (!USERNAME_PATTERN.test(username))
    return '"username" must be 2–64 letters, digits or . _ @ -, starting with a letter or digit';
  // Operators are named by id or username at the command line: a name never reads as an id.
  if (/^op_/i.test(username)) return '"username" must not start with op_ (operator ids do)';
  return undefined;
}

/** Why a password cannot be used, or undefined. Length is what resists guessing; no composition rules. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH)
    return `"password" must be at least ${PASSWORD_MIN_LENGTH} characters long`;
  if (password.length > PASSWORD_MAX_LENGTH)
    return `"password" must be at most ${PASSWORD_MAX_LENGTH} characters long`;
  if (password.includes('\u0000')) return '"password" must not contain U+0000';
  return undefined;
}

export function isOperatorRole(value: unknown): value is OperatorRole {
  return typeof value === 'string' && (OPERATOR_ROLES as readonly string[]).includes(value);
}

export interface LockoutPolicy {
  /** Failed sign-ins of one username within the window that lock it. */
  attempts: number;
  /** Failed sign-ins from one client address within the window that lock the address. */
  addressAttempts: number;
  windowMs: number;
}

/**
 * Whether a sign-in is refused before its password is even checked: too many failures of this
 * username, or from this address, within the window. Counted for unknown usernames too, so that
 * the answer does not tell which accounts exist.
 */
export function lockedOut(
  policy: LockoutPolicy,
  failures: { byUsername: number; byAddress: number },
): 'account' | 'address' | undefined {
  if (failures.byUsername >= policy.attempts) return 'account';
  if (failures.byAddress >= policy.addressAttempts) return 'address';
  return undefined;
}

/** Whether a session is still good at `now`: within its absolute end and its idle period. */
export function sessionAlive(
  session: { lastSeenAt: Date; expiresAt: Date; endedAt: Date | null },
  idleMs: number,
  now: Date,
): boolean {
  if (session.endedAt) return false;
  if (now.getTime() >= session.expiresAt.getTime()) return false;
  return now.getTime() - session.lastSeenAt.getTime() < idleMs;
}
