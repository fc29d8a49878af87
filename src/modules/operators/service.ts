// Longer than 400 lines: the one service of the console's operators (accounts, roles, passwords,
// TOTP, sign-in with its lockout, sessions, the audit log), each method short; their rules are
// in ./rules.ts and ./roles.ts, their SQL in ./repository.ts.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Transaction } from 'sequelize';
import { AppError } from '../../platform/errors';
import { randomBase32 } from '../../platform/ids';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';
import type { KeysetPage, KeysetResult } from '../../platform/pagination';
import { decoyHash, generatePassword, hashPassword, needsRehash, verifyPassword } from './passwords';
import { newTotpSecret, totpStep, totpUri } from './totp';
import {
  OperatorRepository,
  operatorWithoutSecrets,
  type AuditFilter,
  type AuditRow,
  type NewAuditRow,
  type Operator,
  type OperatorWithSecrets,
} from './repository';
import { lockedOut, passwordProblem, sessionAlive, usernameProblem, type LockoutPolicy } from './rules';
import type { OperatorRole } from './roles';

export interface OperatorServiceDeps {
  db: Database;
  /** Seals operators' TOTP secrets (the payload keys, as applicant data). */
  payloadKeys?: Keyring;
  consoleSettings: {
    sessionIdleMs: number;
    sessionMaxMs: number;
    lockout: LockoutPolicy;
  };
}

/** Who did something: an operator signed in to the console, or someone at the command line. */
export interface Actor {
  operatorId: string | null;
  username: string;
  clientIp?: string;
  requestId?: string;
}

export interface SignInInput {
  username: string;
  password: string;
  totpCode?: string;
  clientIp: string;
  userAgent?: string;
  requestId?: string;
}

export interface SignedIn {
  /** The cookie's value: shown once, kept only as its SHA-256. */
  token: string;
  csrfToken: string;
  operator: Operator;
}

export interface ActiveSession {
  tokenHash: string;
  csrfToken: string;
  operator: Operator;
}

const WRONG_CREDENTIALS = 'username or password is wrong';
const PRUNE_EVERY_MS = 10 * 60_000;
const DAY_MS = 24 * 3_600_000;
/** A session's last_seen_at is written at most this often: not one UPDATE per request. */
const TOUCH_EVERY_MS = 60_000;

export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function notFound(who: string): AppError {
  return new AppError('not_found', `operator ${who} not found`, 404);
}

/** Operator accounts, sign-in, sessions and the audit log (SPEC §12): the only caller of their repository. */
export class OperatorService {
  readonly repo: OperatorRepository;

  constructor(private readonly deps: OperatorServiceDeps) {
    this.repo = new OperatorRepository(deps.db, deps.payloadKeys);
  }

  async record(
    actor: Actor,
    entry: Omit<NewAuditRow, 'operatorId' | 'operatorUsername' | 'clientIp' | 'requestId'>,
  ): Promise<void> {
    await this.repo.appendAudit({
      ...entry,
      operatorId: actor.operatorId,
      operatorUsername: actor.username,
      clientIp: actor.clientIp,
      requestId: actor.requestId,
    });
  }

  /** An operator by id or (case-insensitive) username. */
  async find(who: string): Promise<OperatorWithSecrets | undefined> {
    return (await this.repo.findById(who)) ?? (await this.repo.findByUsername(who));
  }

  private async mustFind(who: string): Promise<OperatorWithSecrets> {
    const found = await this.find(who);
    if (!found) throw notFound(who);
    return found;
  }

  /** Every operator, oldest first (`durapay operators list`). */
  list(): Promise<Operator[]> {
    return this.repo.list();
  }

  /** Operators newest first, a keyset page at a time (the console's list). */
  page(page: KeysetPage): Promise<KeysetResult<Operator>> {
    return this.repo.page(page);
  }

  async create(
    actor: Actor,
    input: { username: string; role: OperatorRole; password?: string },
  ): Promise<{ operator: Operator; password: string; generated: boolean }> {
    const problem =
      usernameProblem(input.username) ??
      (input.password !== undefined ? passwordProblem(input.password) : undefined);
    if (problem) throw new AppError('invalid_param', problem);
    const password = input.password ?? generatePassword();
    const operatorId = `op_${randomBase32(20)}`;
    const inserted = await this.repo.insert({
      operatorId,
      username: input.username,
      role: input.role,
      passwordHash: await hashPassword(password),
    });
    if (!inserted) throw new AppError('invalid_param', `"username" ${input.username} is taken`);
    const operator = operatorWithoutSecrets((await this.repo.findById(operatorId))!);
    await this.record(actor, {
      action: 'operator.create',
      targetType: 'operator',
      targetId: operatorId,
      after: operatorView(operator),
      outcome: 'succeeded',
    });
    return { operator, password, generated: input.password === undefined };
  }

  /** Refuses a change that would leave no admin able to sign in. */
  /**
   * Refuses a change that would leave no admin able to sign in. Run in the change's transaction,
   * under one lock for every change of admins: two admins demoting each other at once cannot
   * both pass.
   */
  private async keepAnAdmin(target: Operator, leaving: boolean, t: Transaction): Promise<void> {
    if (!leaving || target.role !== 'admin' || target.disabledAt) return;
    await this.repo.lockAdmins(t);
    if ((await this.repo.countAdmins(t)) <= 1)
      throw new AppError('invalid_param', `${target.username} is the last admin: make another admin first`);
  }

  async setRole(actor: Actor, who: string, role: OperatorRole): Promise<Operator> {
    return this.change(actor, who, 'operator.set_role', async (before, t) => {
      await this.keepAnAdmin(before, role !== 'admin', t);
      await this.repo.update(before.operatorId, { role }, t);
    });
  }

  /** Disables an operator and ends their sessions at once. */
  async disable(actor: Actor, who: string): Promise<Operator> {
    return this.change(actor, who, 'operator.disable', async (before, t) => {
      await this.keepAnAdmin(before, true, t);
      await this.repo.update(before.operatorId, { disabled: true }, t);
      await this.repo.endSessionsOf(before.operatorId, t);
    });
  }

  async enable(actor: Actor, who: string): Promise<Operator> {
    return this.change(actor, who, 'operator.enable', (before, t) =>
      this.repo.update(before.operatorId, { disabled: false }, t),
    );
  }

  /**
   * One change to an operator's account: the operator found, changed in one transaction, read
   * again, and audited with how it was before and after.
   */
  private async change(
    actor: Actor,
    who: string,
    action: string,
    work: (before: Operator, t: Transaction) => Promise<unknown>,
  ): Promise<Operator> {
    const before = operatorWithoutSecrets(await this.mustFind(who));
    await this.repo.transaction((t) => work(before, t));
    const after = operatorWithoutSecrets((await this.repo.findById(before.operatorId))!);
    await this.record(actor, {
      action,
      targetType: 'operator',
      targetId: before.operatorId,
      before: operatorView(before),
      after: operatorView(after),
      outcome: 'succeeded',
    });
    return after;
  }

  /** Sets a new password (generated when not given) and ends the operator's sessions. */
  async resetPassword(
    actor: Actor,
    who: string,
    password?: string,
  ): Promise<{ operator: Operator; password: string; generated: boolean }> {
    const target = await this.mustFind(who);
    const problem = password !== undefined ? passwordProblem(password) : undefined;
    if (problem) throw new AppError('invalid_param', problem);
    const next = password ?? generatePassword();
    const passwordHash = await hashPassword(next);
    await this.repo.transaction(async (t) => {
      await this.repo.update(target.operatorId, { passwordHash }, t);
      await this.repo.endSessionsOf(target.operatorId, t);
    });
    await this.repo.clearFailures(target.username);
    await this.record(actor, {
      action: 'operator.reset_password',
      targetType: 'operator',
      targetId: target.operatorId,
      outcome: 'succeeded',
    });
    return { operator: operatorWithoutSecrets(target), password: next, generated: password === undefined };
  }

  /** Turns TOTP on (a new secret, shown once) or off. */
  async setTotp(
    actor: Actor,
    who: string,
    on: boolean,
  ): Promise<{ operator: Operator; secret?: string; uri?: string }> {
    const target = await this.mustFind(who);
    const secret = on ? newTotpSecret() : null;
    // Sessions signed in without the second factor end with the change, as with a new password.
    await this.repo.transaction(async (t) => {
      await this.repo.update(target.operatorId, { totpSecret: secret }, t);
      await this.repo.endSessionsOf(target.operatorId, t);
    });
    const after = operatorWithoutSecrets((await this.repo.findById(target.operatorId))!);
    await this.record(actor, {
      action: on ? 'operator.totp_on' : 'operator.totp_off',
      targetType: 'operator',
      targetId: target.operatorId,
      before: operatorView(operatorWithoutSecrets(target)),
      after: operatorView(after),
      outcome: 'succeeded',
    });
    return secret ? { operator: after, secret, uri: totpUri(secret, target.username) } : { operator: after };
  }

  /**
   * Password (and TOTP) sign-in. Refused before any check while the username or the address is
   * locked out; an unknown username costs as long as a wrong password and is answered the same.
   */
  async signIn(input: SignInInput): Promise<SignedIn> {
    const { lockout, sessionMaxMs } = this.deps.consoleSettings;
    const attempted = input.username.slice(0, 64);
    // A refused sign-in is no one's action: recorded as `anonymous`, the name tried beside it, so
    // that nobody can write entries under an operator's name by typing it.
    const anonymous: Actor = {
      operatorId: null,
      username: 'anonymous',
      clientIp: input.clientIp,
      requestId: input.requestId,
    };
    const refuse = async (
      code: 'unauthorized' | 'rate_limited',
      message: string,
      operatorId: string | null,
    ) => {
      await this.record(anonymous, {
        action: 'session.sign_in',
        targetType: 'operator',
        targetId: operatorId ?? attempted,
        after: { username: attempted },
        outcome: 'refused',
        errorCode: code,
      });
      return new AppError(code, message);
    };
    await this.pruneNowAndThen();
    // The attempt counts as a failure before its password is checked, so that sign-ins sent at
    // once count each other: of any number sent together, at most `attempts` are checked.
    const attempt = await this.repo.recordFailure(attempted, input.clientIp);
    const since = new Date(Date.now() - lockout.windowMs);
    const counted = await this.repo.failuresSince(attempted, input.clientIp, since);
    const before = { byUsername: counted.byUsername - 1, byAddress: counted.byAddress - 1 };
    const locked = lockedOut(lockout, before);
    if (locked) {
      // Refused unchecked, it is no failure of its own: a person retrying does not lengthen the lock.
      await this.repo.forgetAttempt(attempt);
      const message = `too many failed sign-ins ${locked === 'account' ? 'for this username' : 'from this address'}; try again in ${Math.ceil(lockout.windowMs / 60_000)} minutes`;
      // One entry per lock in the audit log: the rest of its refusals would only fill it.
      await this.repo.appendLockoutOnce(
        {
          operatorId: null,
          operatorUsername: anonymous.username,
          action: 'session.sign_in',
          targetType: 'operator',
          targetId: attempted,
          after: { username: attempted },
          outcome: 'refused',
          errorCode: 'rate_limited',
          clientIp: input.clientIp,
          requestId: input.requestId,
        },
        locked === 'account' ? { username: attempted } : { clientIp: input.clientIp },
        since,
      );
      throw new AppError('rate_limited', message);
    }
    const found = await this.repo.findByUsername(input.username);
    const passwordOk = await verifyPassword(input.password, found?.passwordHash ?? (await decoyHash()));
    if (!found || !passwordOk || found.disabledAt)
      throw await refuse('unauthorized', WRONG_CREDENTIALS, found?.operatorId ?? null);
    if (found.totpSecret) {
      if (input.totpCode === undefined) {
        // The password was right: ask for the code without counting a failure.
        await this.repo.forgetAttempt(attempt);
        throw await refuse(
          'unauthorized',
          '"totp_code" is required: enter the code of your authenticator app',
          found.operatorId,
        );
      }
      const step = totpStep(found.totpSecret, input.totpCode);
      if (step === undefined)
        throw await refuse('unauthorized', '"totp_code" is wrong or expired', found.operatorId);
      // A code signs in once: taken with its time step, which a later sign-in must pass.
      if (!(await this.repo.claimTotpStep(found.operatorId, step)))
        throw await refuse(
          'unauthorized',
          '"totp_code" was used already: wait for the next one',
          found.operatorId,
        );
    }
    if (needsRehash(found.passwordHash))
      await this.repo.update(found.operatorId, { passwordHash: await hashPassword(input.password) });
    await this.repo.clearFailures(found.username);
    const token = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(24).toString('base64url');
    await this.repo.insertSession({
      tokenHash: tokenHash(token),
      operatorId: found.operatorId,
      csrfToken,
      clientIp: input.clientIp,
      userAgent: input.userAgent,
      expiresAt: new Date(Date.now() + sessionMaxMs),
    });
    const operator = operatorWithoutSecrets(found);
    await this.record(
      { ...anonymous, operatorId: found.operatorId, username: found.username },
      {
        action: 'session.sign_in',
        targetType: 'operator',
        targetId: found.operatorId,
        outcome: 'succeeded',
      },
    );
    return { token, csrfToken, operator };
  }

  private prunedAt = 0;

  /** At most every 10 minutes a process forgets old failed sign-ins and sessions long over. */
  private async pruneNowAndThen(): Promise<void> {
    const now = Date.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    const { lockout, sessionMaxMs } = this.deps.consoleSettings;
    await this.repo.prune(
      new Date(now - 2 * lockout.windowMs),
      new Date(now - Math.max(sessionMaxMs, DAY_MS)),
    );
  }

  /** The session a cookie's token names, if it is still good and its operator still enabled. */
  async session(token: string | undefined): Promise<ActiveSession | undefined> {
    if (!token || token.length > 128) return undefined;
    const hash = tokenHash(token);
    const row = await this.repo.findSession(hash);
    const now = new Date();
    if (!row || !sessionAlive(row, this.deps.consoleSettings.sessionIdleMs, now)) return undefined;
    const operator = await this.repo.findById(row.operatorId);
    if (!operator || operator.disabledAt) return undefined;
    if (now.getTime() - row.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await this.repo.touchSession(hash);
    return { tokenHash: hash, csrfToken: row.csrfToken, operator: operatorWithoutSecrets(operator) };
  }

  async signOut(actor: Actor, session: ActiveSession): Promise<void> {
    await this.repo.endSession(session.tokenHash);
    await this.record(actor, {
      action: 'session.sign_out',
      targetType: 'operator',
      targetId: session.operator.operatorId,
      outcome: 'succeeded',
    });
  }

  async signOutEverywhere(actor: Actor, operatorId: string): Promise<number> {
    const ended = await this.repo.endSessionsOf(operatorId);
    await this.record(actor, {
      action: 'session.sign_out_everywhere',
      targetType: 'operator',
      targetId: operatorId,
      after: { sessions_ended: ended },
      outcome: 'succeeded',
    });
    return ended;
  }

  auditLog(filter: AuditFilter, limit: number, beforeId?: string): Promise<AuditRow[]> {
    return this.repo.audit(filter, limit, beforeId);
  }
}

/** Whether a CSRF token sent with a change is the session's. */
export function csrfTokenMatches(session: ActiveSession, sent: string | undefined): boolean {
  if (!sent) return false;
  const a = Buffer.from(session.csrfToken);
  const b = Buffer.from(sent);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** An operator as the console and the CLI show it. */
export function operatorView(o: Operator) {
  return {
    operator_id: o.operatorId,
    username: o.username,
    role: o.role,
    totp_enabled: o.totpEnabled,
    disabled: o.disabledAt !== null,
    disabled_at: o.disabledAt ? o.disabledAt.toISOString() : null,
    created_at: o.createdAt.toISOString(),
  };
}

/** An audit entry as the console shows it. */
export function auditView(r: AuditRow) {
  return {
    id: r.id,
    at: r.at.toISOString(),
    operator_id: r.operatorId,
    operator: r.operatorUsername,
    action: r.action,
    target_type: r.targetType,
    target_id: r.targetId,
    before: r.before ?? null,
    after: r.after ?? null,
    outcome: r.outcome,
    error_code: r.errorCode,
    client_ip: r.clientIp,
    request_id: r.requestId,
  };
}
