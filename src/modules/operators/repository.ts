// Longer than 400 lines: the only code on the console's four tables (operators, sessions, failed
// sign-ins, the audit log), as each module keeps its SQL in one repository.
import { QueryTypes, type Transaction } from 'sequelize';
import { SEALED_FIELD_PREFIX, SealedColumn } from '../../platform/crypto/sealed-column';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';
import {
  keysetAt,
  keysetPageOf,
  SearchConditions,
  type KeysetPage,
  type KeysetResult,
} from '../../platform/pagination';
import type { OperatorRole } from './roles';

/** An operator as the rest of durapay sees it: never the password hash nor the TOTP secret. */
export interface Operator {
  operatorId: string;
  username: string;
  role: OperatorRole;
  totpEnabled: boolean;
  disabledAt: Date | null;
  passwordChangedAt: Date;
  createdAt: Date;
}

export interface OperatorWithSecrets extends Operator {
  passwordHash: string;
  /** The TOTP secret, opened; null when TOTP is off. */
  totpSecret: string | null;
}

export interface SessionRow {
  tokenHash: string;
  operatorId: string;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
}

export interface AuditRow {
  id: string;
  at: Date;
  /** `at` to the microsecond, as list positions keep it (platform/pagination.ts). */
  atKey: string;
  operatorId: string | null;
  operatorUsername: string;
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
  outcome: 'succeeded' | 'refused';
  errorCode: string | null;
  clientIp: string | null;
  requestId: string | null;
}

export interface NewAuditRow {
  operatorId: string | null;
  operatorUsername: string;
  action: string;
  targetType: string;
  targetId: string;
  before?: unknown;
  after?: unknown;
  outcome: 'succeeded' | 'refused';
  errorCode?: string | null;
  clientIp?: string | null;
  requestId?: string | null;
}

export interface AuditFilter {
  operator?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  from?: Date;
  to?: Date;
}

interface OperatorDbRow {
  operator_id: string;
  username: string;
  role: OperatorRole;
  password_hash: string;
  totp_secret: string | null;
  disabled_at: Date | null;
  password_changed_at: Date;
  created_at: Date;
}

const SELECT_OPERATOR = `SELECT operator_id, username, role, password_hash, totp_secret, disabled_at,
  password_changed_at, created_at FROM console_operators`;

/** The only code that touches the console's tables: operators, sessions, failed sign-ins, audit log. */
export class OperatorRepository {
  private readonly totpSecrets: SealedColumn<string>;

  constructor(
    private readonly db: Database,
    keyring: Keyring | undefined,
  ) {
    this.totpSecrets = new SealedColumn<string>(keyring, 'console_operators.totp_secret', () => {
      throw new Error('is not sealed');
    });
  }

  private toOperator(row: OperatorDbRow): OperatorWithSecrets {
    return {
      operatorId: row.operator_id,
      username: row.username,
      role: row.role,
      totpEnabled: row.totp_secret !== null,
      disabledAt: row.disabled_at,
      passwordChangedAt: row.password_changed_at,
      createdAt: row.created_at,
      passwordHash: row.password_hash,
      totpSecret: this.totpSecrets.open(row.totp_secret, row.operator_id),
    };
  }

  private async one(where: string, replacements: unknown[]): Promise<OperatorWithSecrets | undefined> {
    const rows = await this.db.sequelize.query<OperatorDbRow>(`${SELECT_OPERATOR} WHERE ${where}`, {
      type: QueryTypes.SELECT,
      replacements,
    });
    return rows[0] && this.toOperator(rows[0]);
  }

  findByUsername(username: string): Promise<OperatorWithSecrets | undefined> {
    return this.one('lower(username) = lower(?)', [username]);
  }

  findById(operatorId: string): Promise<OperatorWithSecrets | undefined> {
    return this.one('operator_id = ?', [operatorId]);
  }

  async list(): Promise<Operator[]> {
    const rows = await this.db.sequelize.query<OperatorDbRow>(
      `${SELECT_OPERATOR} ORDER BY created_at, operator_id`,
      {
        type: QueryTypes.SELECT,
      },
    );
    return rows.map((r) => strip(this.toOperator(r)));
  }

  /** Operators newest first by (created_at, operator_id), a keyset page at a time (the console's list). */
  async page(page: KeysetPage): Promise<KeysetResult<Operator>> {
    const where = new SearchConditions({ limit: page.limit + 1 }).after(
      'created_at',
      [{ column: 'operator_id', value: page.after?.key ?? '' }],
      page.after?.at,
    );
    const rows = await this.db.sequelize.query<OperatorDbRow & { cursor_at: string }>(
      `SELECT operator_id, username, role, password_hash, totp_secret, disabled_at, password_changed_at, created_at,
              ${keysetAt('created_at')} AS cursor_at
         FROM console_operators ${where.sql()}
        ORDER BY console_operators.created_at DESC, console_operators.operator_id DESC LIMIT :limit`,
      { type: QueryTypes.SELECT, replacements: where.replacements },
    );
    const found = keysetPageOf(rows, page.limit, (r) => ({ at: r.cursor_at, key: r.operator_id }));
    return { rows: found.rows.map((r) => strip(this.toOperator(r))), next: found.next };
  }

  async countAdmins(transaction?: Transaction): Promise<number> {
    const [row] = await this.db.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM console_operators WHERE role = 'admin' AND disabled_at IS NULL`,
      { type: QueryTypes.SELECT, transaction },
    );
    return Number(row?.n ?? 0);
  }

  /** Serializes the changes that may remove an admin, until the transaction ends. */
  async lockAdmins(transaction: Transaction): Promise<void> {
    await this.db.sequelize.query("SELECT pg_advisory_xact_lock(hashtext('durapay.console.admins'))", {
      transaction,
    });
  }

  /** Inserts an operator; false when the username is taken (case-insensitively). */
  async insert(o: {
    operatorId: string;
    username: string;
    role: OperatorRole;
    passwordHash: string;
  }): Promise<boolean> {
    const [rows] = await this.db.sequelize.query(
      `INSERT INTO console_operators (operator_id, username, role, password_hash)
       VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING operator_id`,
      { replacements: [o.operatorId, o.username, o.role, o.passwordHash] },
    );
    return (rows as unknown[]).length === 1;
  }

  async update(
    operatorId: string,
    change: { role?: OperatorRole; passwordHash?: string; totpSecret?: string | null; disabled?: boolean },
    transaction?: Transaction,
  ): Promise<void> {
    const sets: string[] = ['updated_at = now()'];
    const replacements: unknown[] = [];
    const set = (sql: string, value?: unknown) => {
      sets.push(sql);
      if (value !== undefined) replacements.push(value);
    };
    if (change.role !== undefined) set('role = ?', change.role);
    if (change.passwordHash !== undefined) {
      set('password_hash = ?', change.passwordHash);
      set('password_changed_at = now()');
    }
    // null (TOTP off) is a value here: pushed as it is.
    if (change.totpSecret !== undefined) {
      sets.push('totp_last_step = NULL');
      sets.push('totp_secret = ?');
      replacements.push(this.totpSecrets.seal(change.totpSecret, operatorId));
    }
    if (change.disabled !== undefined) set(change.disabled ? 'disabled_at = now()' : 'disabled_at = NULL');
    await this.db.sequelize.query(`UPDATE console_operators SET ${sets.join(', ')} WHERE operator_id = ?`, {
      replacements: [...replacements, operatorId],
      transaction,
    });
  }

  // Sessions

  async insertSession(s: {
    tokenHash: string;
    operatorId: string;
    csrfToken: string;
    clientIp: string | undefined;
    userAgent: string | undefined;
    expiresAt: Date;
  }): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO console_sessions (token_hash, operator_id, csrf_token, client_ip, user_agent, expires_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      {
        replacements: [
          s.tokenHash,
          s.operatorId,
          s.csrfToken,
          s.clientIp?.slice(0, 64) ?? null,
          s.userAgent?.slice(0, 256) ?? null,
          s.expiresAt,
        ],
      },
    );
  }

  async findSession(tokenHash: string): Promise<SessionRow | undefined> {
    const rows = await this.db.sequelize.query<{
      token_hash: string;
      operator_id: string;
      csrf_token: string;
      created_at: Date;
      last_seen_at: Date;
      expires_at: Date;
      ended_at: Date | null;
    }>(
      `SELECT token_hash, operator_id, csrf_token, created_at, last_seen_at, expires_at, ended_at
         FROM console_sessions WHERE token_hash = ?`,
      { type: QueryTypes.SELECT, replacements: [tokenHash] },
    );
    const r = rows[0];
    return (
      r && {
        tokenHash: r.token_hash,
        operatorId: r.operator_id,
        csrfToken: r.csrf_token,
        createdAt: r.created_at,
        lastSeenAt: r.last_seen_at,
        expiresAt: r.expires_at,
        endedAt: r.ended_at,
      }
    );
  }

  async touchSession(tokenHash: string): Promise<void> {
    await this.db.sequelize.query('UPDATE console_sessions SET last_seen_at = now() WHERE token_hash = ?', {
      replacements: [tokenHash],
    });
  }

  async endSession(tokenHash: string): Promise<void> {
    await this.db.sequelize.query(
      'UPDATE console_sessions SET ended_at = now() WHERE token_hash = ? AND ended_at IS NULL',
      { replacements: [tokenHash] },
    );
  }

  /** Ends every open session of an operator; how many there were. */
  async endSessionsOf(operatorId: string, transaction?: Transaction): Promise<number> {
    const [rows] = await this.db.sequelize.query(
      `UPDATE console_sessions SET ended_at = now() WHERE operator_id = ? AND ended_at IS NULL
       RETURNING token_hash`,
      { replacements: [operatorId], transaction },
    );
    return (rows as unknown[]).length;
  }

  // Failed sign-ins

  /** Records a sign-in attempt as failed (until `forgetAttempt`); its id. */
  async recordFailure(username: string, clientIp: string): Promise<string> {
    const [rows] = await this.db.sequelize.query(
      'INSERT INTO console_login_failures (username, client_ip) VALUES (?, ?) RETURNING id::text AS id',
      { replacements: [username.slice(0, 64), clientIp.slice(0, 64)] },
    );
    return (rows as { id: string }[])[0]!.id;
  }

  async forgetAttempt(id: string): Promise<void> {
    await this.db.sequelize.query('DELETE FROM console_login_failures WHERE id = ?', { replacements: [id] });
  }

  /**
   * Takes a TOTP time step for a sign-in: true once per step and operator, and never for a step
   * at or before one taken already, so that a code seen by someone else does not sign in again.
   */
  async claimTotpStep(operatorId: string, step: number): Promise<boolean> {
    const [rows] = await this.db.sequelize.query(
      `UPDATE console_operators SET totp_last_step = ?
        WHERE operator_id = ? AND (totp_last_step IS NULL OR totp_last_step < ?) RETURNING operator_id`,
      { replacements: [step, operatorId, step] },
    );
    return (rows as unknown[]).length === 1;
  }

  async failuresSince(
    username: string,
    clientIp: string,
    since: Date,
  ): Promise<{ byUsername: number; byAddress: number }> {
    const [row] = await this.db.sequelize.query<{ by_username: string; by_address: string }>(
      `SELECT
         (SELECT count(*) FROM console_login_failures WHERE lower(username) = lower(?) AND at >= ?) AS by_username,
         (SELECT count(*) FROM console_login_failures WHERE client_ip = ? AND at >= ?) AS by_address`,
      { type: QueryTypes.SELECT, replacements: [username.slice(0, 64), since, clientIp.slice(0, 64), since] },
    );
    return { byUsername: Number(row?.by_username ?? 0), byAddress: Number(row?.by_address ?? 0) };
  }

  /**
   * Forgets failed sign-ins older than `failuresBefore` and sessions that ended or expired before
   * `sessionsBefore`: neither counts for anything any more (the audit log keeps what happened).
   */
  async prune(failuresBefore: Date, sessionsBefore: Date): Promise<void> {
    await this.db.sequelize.query('DELETE FROM console_login_failures WHERE at < ?', {
      replacements: [failuresBefore],
    });
    await this.db.sequelize.query(
      'DELETE FROM console_sessions WHERE COALESCE(ended_at, expires_at) < ? AND expires_at < ?',
      { replacements: [sessionsBefore, sessionsBefore] },
    );
  }

  /** A good sign-in forgets the username's failures (not the address's). */
  async clearFailures(username: string): Promise<void> {
    await this.db.sequelize.query('DELETE FROM console_login_failures WHERE lower(username) = lower(?)', {
      replacements: [username.slice(0, 64)],
    });
  }

  // Audit log: appended, never changed (the table's trigger refuses it anyway).

  async appendAudit(e: NewAuditRow, transaction?: Transaction): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO console_audit_log
         (operator_id, operator_username, action, target_type, target_id, before, after, outcome,
          error_code, client_ip, request_id)
       VALUES (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?)`,
      {
        replacements: [
          e.operatorId,
          e.operatorUsername.slice(0, 96),
          e.action.slice(0, 64),
          e.targetType.slice(0, 32),
          e.targetId.slice(0, 128),
          e.before === undefined ? null : JSON.stringify(e.before),
          e.after === undefined ? null : JSON.stringify(e.after),
          e.outcome,
          e.errorCode ?? null,
          e.clientIp?.slice(0, 64) ?? null,
          e.requestId?.slice(0, 128) ?? null,
        ],
        transaction,
      },
    );
  }

  /**
   * Appends a sign-in refused by a lockout unless one of this lockout (the same username, or the
   * same address) is in the log since `since`: one entry per lock, however many attempts hit it.
   * Checked and appended under one lock, so attempts at once record it once.
   */
  async appendLockoutOnce(
    e: NewAuditRow,
    by: { username: string } | { clientIp: string },
    since: Date,
  ): Promise<void> {
    const key = 'username' in by ? `u:${by.username.toLowerCase()}` : `a:${by.clientIp}`;
    await this.db.sequelize.transaction(async (transaction) => {
      await this.db.sequelize.query('SELECT pg_advisory_xact_lock(hashtext(?))', {
        replacements: [`durapay.console.lockout:${key}`],
        transaction,
      });
      const [found] = await this.db.sequelize.query<{ one: number }>(
        `SELECT 1 AS one FROM console_audit_log
          WHERE at >= ? AND action = 'session.sign_in' AND error_code = 'rate_limited'
            AND ${'username' in by ? "lower(after->>'username') = lower(?)" : 'client_ip = ?'}
          LIMIT 1`,
        {
          type: QueryTypes.SELECT,
          replacements: [since, 'username' in by ? by.username : by.clientIp],
          transaction,
        },
      );
      if (!found) await this.appendAudit(e, transaction);
    });
  }

  /**
   * The audit log, newest first (by its serial id), by keyset: entries before the id `beforeId`.
   * The id is selected as text (a bigint may pass 2^53), so the ORDER BY names the table's column:
   * a bare `id` there would be the text output column, and `10` would sort before `9`.
   */
  async audit(filter: AuditFilter, limit: number, beforeId?: string): Promise<AuditRow[]> {
    const where = new SearchConditions({ limit })
      .equals('operator_username', 'operator', filter.operator)
      .equals('action', 'action', filter.action)
      .equals('target_type', 'targetType', filter.targetType)
      .equals('target_id', 'targetId', filter.targetId)
      .compare('at', '>=', 'from', filter.from)
      .compare('at', '<', 'to', filter.to)
      .compare('id', '<', 'beforeId', beforeId, 'bigint');
    const rows = await this.db.sequelize.query<{
      id: string;
      at: Date;
      at_key: string;
      operator_id: string | null;
      operator_username: string;
      action: string;
      target_type: string;
      target_id: string;
      before: unknown;
      after: unknown;
      outcome: 'succeeded' | 'refused';
      error_code: string | null;
      client_ip: string | null;
      request_id: string | null;
    }>(
      `SELECT id::text AS id, at, ${keysetAt('at')} AS at_key, operator_id, operator_username, action, target_type, target_id, before, after,
              outcome, error_code, client_ip, request_id
         FROM console_audit_log ${where.sql()}
        ORDER BY console_audit_log.id DESC LIMIT :limit`,
      { type: QueryTypes.SELECT, replacements: where.replacements },
    );
    return rows.map((r) => ({
      id: r.id,
      at: r.at,
      atKey: r.at_key,
      operatorId: r.operator_id,
      operatorUsername: r.operator_username,
      action: r.action,
      targetType: r.target_type,
      targetId: r.target_id,
      before: r.before,
      after: r.after,
      outcome: r.outcome,
      errorCode: r.error_code,
      clientIp: r.client_ip,
      requestId: r.request_id,
    }));
  }

  /** How many operators' TOTP secrets the payload key `keyId` sealed (`durapay keys retire` refuses while any). */
  async totpSecretsSealedWith(keyId: string): Promise<number> {
    const [row] = await this.db.sequelize.query<{ n: string }>(
      'SELECT count(*) AS n FROM console_operators WHERE starts_with(totp_secret, ?)',
      { type: QueryTypes.SELECT, replacements: [`${SEALED_FIELD_PREFIX}${keyId}:`] },
    );
    return Number(row?.n ?? 0);
  }

  /**
   * Seals the TOTP secrets an older key sealed again with the current one (`durapay keys reseal
   * --rotate`), compare-and-set; one that does not open is left as it is and named.
   */
  async resealTotpSecrets(): Promise<{
    resealed: number;
    unopened: { operatorId: string; reason: string }[];
  }> {
    const rows = await this.db.sequelize.query<{ operator_id: string; totp_secret: string }>(
      'SELECT operator_id, totp_secret FROM console_operators WHERE totp_secret IS NOT NULL ORDER BY operator_id',
      { type: QueryTypes.SELECT },
    );
    let resealed = 0;
    const unopened: { operatorId: string; reason: string }[] = [];
    for (const row of rows) {
      let sealed: string | null | undefined;
      try {
        sealed = this.totpSecrets.reseal(row.totp_secret, row.operator_id, true);
      } catch (err) {
        unopened.push({ operatorId: row.operator_id, reason: (err as Error).message });
        continue;
      }
      if (!sealed) continue;
      const [changed] = await this.db.sequelize.query(
        `UPDATE console_operators SET totp_secret = ? WHERE operator_id = ? AND totp_secret = ?
         RETURNING operator_id`,
        { replacements: [sealed, row.operator_id, row.totp_secret] },
      );
      resealed += (changed as unknown[]).length;
    }
    return { resealed, unopened };
  }

  transaction<T>(work: (t: Transaction) => Promise<T>): Promise<T> {
    return this.db.sequelize.transaction(work);
  }
}

function strip(o: OperatorWithSecrets): Operator {
  const { passwordHash: _h, totpSecret: _t, ...rest } = o;
  return rest;
}

export { strip as operatorWithoutSecrets };
