/**
 * The operator console's accounts and sessions (SPEC §12) over HTTP against the real API and
 * Postgres: sign-in, lockout, TOTP, the session cookie, CSRF and origin checks, roles, the
 * separation from apps' HMAC credentials, and the append-only audit log.
 */
import { QueryTypes } from 'sequelize';
import { OperatorRepository, totpCode } from '../../src/modules/operators';
import { newPayloadKeyEntry, parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { DEFAULT_CONSOLE_SETTINGS } from '../../src/platform/config';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import {
  clientFor,
  consoleRequest,
  operatorsOf,
  sessionCookieOf,
  signIn,
  signInAs,
  type ConsoleClient,
} from '../support/console';
import { signedFetch } from '../support/signing';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let admin: ConsoleClient;

beforeAll(async () => {
  stack = await startTestStack();
  app = await stack.createApp(['payments']);
  admin = await signIn(stack, 'admin');
});
afterAll(async () => {
  await stack?.stop();
});

const cli = { operatorId: null, username: 'cli:test' };

async function newOperator(role: 'viewer' | 'operator' | 'admin' = 'operator') {
  const username = uniqueName(`u-${role}`).slice(0, 60);
  const password = `correct horse ${uniqueName('battery')}`;
  const made = await operatorsOf(stack).create(cli, { username, role, password });
  return { operatorId: made.operator.operatorId, username, password, role };
}

async function auditRows(where: string, replacements: unknown[]) {
  return stack.database.db.sequelize.query<{
    action: string;
    outcome: string;
    error_code: string | null;
    operator_username: string;
    target_id: string;
    before: unknown;
    after: unknown;
    client_ip: string | null;
  }>(`SELECT * FROM console_audit_log WHERE ${where} ORDER BY id`, { type: QueryTypes.SELECT, replacements });
}

describe('signing in', () => {
  test('when an operator signs in with the right password, then the session cookie is HttpOnly, SameSite=Strict, Secure and scoped to /console, and the session shows the operator', async () => {
    const who = await newOperator('viewer');
    const answer = await signInAs(stack, who.username, who.password);
    expect(answer.status).toBe(200);
    expect(answer.data!.operator).toMatchObject({
      username: who.username,
      role: 'viewer',
      totp_enabled: false,
    });
    expect(answer.data!.csrf_token).toMatch(/^[A-Za-z0-9_-]{24,}$/);
    const line = answer.headers.getSetCookie().find((c) => c.startsWith('durapay_console='))!;
    const attributes = line.split(';').map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(
      expect.arrayContaining(['httponly', 'samesite=strict', 'secure', 'path=/console']),
    );
    expect(answer.headers.get('cache-control')).toBe('no-store');

    const session = await consoleRequest(stack, 'GET', '/session', {
      headers: { cookie: sessionCookieOf(answer.headers)! },
    });
    expect(session.status).toBe(200);
    expect(session.data).toMatchObject({
      operator: { operator_id: who.operatorId },
      csrf_token: answer.data!.csrf_token,
    });
    const [row] = await auditRows("action = 'session.sign_in' AND target_id = ?", [who.operatorId]);
    expect(row).toMatchObject({
      outcome: 'succeeded',
      operator_username: who.username,
      client_ip: expect.stringMatching(/127\.0\.0\.1/),
    });
  });

  test('when the password is wrong or the username unknown, then both are 401 unauthorized with the same message, and both are audited as refused', async () => {
    const who = await newOperator();
    const wrong = await signInAs(stack, who.username, 'not the password at all');
    const unknown = await signInAs(stack, uniqueName('nobody'), 'not the password at all');
    expect([wrong.status, wrong.code]).toEqual([401, 'unauthorized']);
    expect([unknown.status, unknown.code]).toEqual([401, 'unauthorized']);
    expect(unknown.message).toBe(wrong.message);
    expect(wrong.headers.getSetCookie()).toEqual([]);
    const rows = await auditRows("action = 'session.sign_in' AND target_id = ?", [who.operatorId]);
    expect(rows.map((r) => [r.outcome, r.error_code])).toEqual([['refused', 'unauthorized']]);
  });

  test('when the sign-in body is not what it should be, then 400 invalid_param names the field', async () => {
    const missing = await consoleRequest(stack, 'POST', '/session', { body: { username: 'x' } });
    expect([missing.status, missing.code]).toEqual([400, 'invalid_param']);
    expect(missing.message).toContain('"password"');
    const extra = await consoleRequest(stack, 'POST', '/session', {
      body: { username: 'x', password: 'y', admin: true },
    });
    expect([extra.status, extra.code]).toEqual([400, 'invalid_param']);
    expect(extra.message).toContain('"admin"');
  });

  test('when a username fails five times, then it is locked (429 rate_limited) even with the right password, and another username is not', async () => {
    const who = await newOperator();
    const other = await newOperator();
    for (let i = 0; i < DEFAULT_CONSOLE_SETTINGS.lockout.attempts; i += 1) {
      expect((await signInAs(stack, who.username, `wrong ${i}`)).status).toBe(401);
    }
    const locked = await signInAs(stack, who.username, who.password);
    expect([locked.status, locked.code]).toEqual([429, 'rate_limited']);
    expect(locked.message).toContain('username');
    expect((await signInAs(stack, other.username, other.password)).status).toBe(200);
    // The lockout ends with its window: the failures are older than it.
    await stack.database.db.sequelize.query(
      "UPDATE console_login_failures SET at = at - interval '16 minutes' WHERE lower(username) = lower(?)",
      { replacements: [who.username] },
    );
    expect((await signInAs(stack, who.username, who.password)).status).toBe(200);
  });

  test('when one address fails twenty times over many usernames, then it is locked for every username, and other addresses are not', async () => {
    const operators = operatorsOf(stack);
    const who = await newOperator();
    const address = `203.0.113.${Math.floor(Math.random() * 200) + 1}`;
    for (let i = 0; i < DEFAULT_CONSOLE_SETTINGS.lockout.addressAttempts; i += 1) {
      await expect(
        operators.signIn({ username: uniqueName('guess'), password: 'guess', clientIp: address }),
      ).rejects.toMatchObject({
        code: 'unauthorized',
      });
    }
    await expect(
      operators.signIn({ username: who.username, password: who.password, clientIp: address }),
    ).rejects.toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('address'),
    });
    await expect(
      operators.signIn({ username: who.username, password: who.password, clientIp: '198.51.100.7' }),
    ).resolves.toMatchObject({
      operator: { operatorId: who.operatorId },
    });
  });

  test('when thirty wrong sign-ins of one username arrive at once, for five rounds, then at most five are checked, the rest are refused unchecked, and the lock is audited once', async () => {
    const { attempts } = DEFAULT_CONSOLE_SETTINGS.lockout;
    for (let round = 0; round < 5; round += 1) {
      const who = await newOperator();
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => signInAs(stack, who.username, `wrong ${round}-${i}`)),
      );
      const statuses = answers.map((a) => a.status);
      // Each 401 is a password checked (and wrong); each 429 was refused before any check.
      expect(statuses.filter((st) => st === 401).length).toBeLessThanOrEqual(attempts);
      expect(statuses.filter((st) => st === 429).length).toBeGreaterThanOrEqual(30 - attempts);
      // Sent all at once, every attempt may count before any is checked: then none is.
      expect(statuses.every((st) => st === 401 || st === 429)).toBe(true);
      // The lock was audited once, not thirty times, and as no operator's own action.
      const rows = await auditRows("action = 'session.sign_in' AND target_id IN (?, ?)", [
        who.operatorId,
        who.username,
      ]);
      expect(rows.filter((r) => r.error_code === 'rate_limited').length).toBe(1);
      expect(rows.every((r) => r.operator_username === 'anonymous')).toBe(true);
      expect(rows.filter((r) => r.error_code === 'unauthorized')).toEqual(
        statuses
          .filter((st) => st === 401)
          .map(() => expect.objectContaining({ after: { username: who.username } })),
      );
    }
  });

  test('when an operator has TOTP on, then the password alone asks for "totp_code", a wrong code is refused, and the current code signs in', async () => {
    const who = await newOperator();
    const { secret } = await operatorsOf(stack).setTotp(cli, who.username, true);
    const noCode = await signInAs(stack, who.username, who.password);
    expect([noCode.status, noCode.code]).toEqual([401, 'unauthorized']);
    expect(noCode.message).toContain('"totp_code"');
    const wrongCode = await signInAs(
      stack,
      who.username,
      who.password,
      totpCode(secret!, Date.now() - 10 * 60_000),
    );
    expect([wrongCode.status, wrongCode.code]).toEqual([401, 'unauthorized']);
    const code = totpCode(secret!);
    const ok = await signInAs(stack, who.username, who.password, code);
    expect(ok.status).toBe(200);
    expect(ok.data!.operator).toMatchObject({ totp_enabled: true });
    // A code signs in once: seen over a shoulder, it is worth nothing.
    const again = await signInAs(stack, who.username, who.password, code);
    expect([again.status, again.code]).toEqual([401, 'unauthorized']);
    expect(again.message).toContain('used already');
    // The secret is kept sealed.
    const [row] = await stack.database.db.sequelize.query<{ totp_secret: string }>(
      'SELECT totp_secret FROM console_operators WHERE operator_id = ?',
      { type: QueryTypes.SELECT, replacements: [who.operatorId] },
    );
    expect(row!.totp_secret).not.toContain(secret!);
  });

  test('when TOTP is turned on, then the sessions signed in without it end', async () => {
    const who = await newOperator();
    const before = await clientFor(stack, who);
    expect((await before.get('/session')).status).toBe(200);
    await operatorsOf(stack).setTotp(cli, who.username, true);
    expect((await before.get('/session')).status).toBe(401);
  });

  test('when a disabled operator signs in, then it is refused like a wrong password', async () => {
    const who = await newOperator();
    await operatorsOf(stack).disable(cli, who.username);
    const answer = await signInAs(stack, who.username, who.password);
    expect([answer.status, answer.code]).toEqual([401, 'unauthorized']);
  });
});

describe('sessions', () => {
  test('when there is no session, or the cookie is made up, then the console API answers 401 unauthorized', async () => {
    expect((await consoleRequest(stack, 'GET', '/session')).status).toBe(401);
    const madeUp = await consoleRequest(stack, 'GET', '/operators', {
      headers: { cookie: 'durapay_console=made-up' },
    });
    expect([madeUp.status, madeUp.code]).toEqual([401, 'unauthorized']);
  });

  test('when a session has been idle too long, or is past its absolute end, then it is over', async () => {
    const idle = await clientFor(stack, await newOperator());
    const old = await clientFor(stack, await newOperator());
    await stack.database.db.sequelize.query(
      "UPDATE console_sessions SET last_seen_at = now() - interval '31 minutes' WHERE operator_id = ?",
      { replacements: [idle.operatorId] },
    );
    await stack.database.db.sequelize.query(
      "UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE operator_id = ?",
      { replacements: [old.operatorId] },
    );
    expect((await idle.get('/session')).status).toBe(401);
    expect((await old.get('/session')).status).toBe(401);
  });

  test('when an operator signs out, then that session ends; signing out everywhere ends the others too', async () => {
    const who = await newOperator();
    const first = await clientFor(stack, who);
    const second = await clientFor(stack, who);
    const third = await clientFor(stack, who);
    const out = await first.delete('/session');
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().join()).toMatch(/durapay_console=;/);
    expect((await first.get('/session')).status).toBe(401);
    expect((await second.get('/session')).status).toBe(200);
    const everywhere = await second.post('/session/sign-out-everywhere');
    expect(everywhere.data).toEqual({ sessions_ended: 2 });
    expect((await second.get('/session')).status).toBe(401);
    expect((await third.get('/session')).status).toBe(401);
  });
});

describe('CSRF and origins', () => {
  test("when a change comes without the CSRF token, or with another session's, then it is refused 403 permission_denied", async () => {
    const mine = await signIn(stack, 'admin');
    const theirs = await signIn(stack, 'admin');
    const none = await consoleRequest(stack, 'POST', '/session/sign-out-everywhere', {
      body: {},
      headers: { cookie: mine.cookie },
    });
    expect([none.status, none.code]).toEqual([403, 'permission_denied']);
    expect(none.message).toContain('X-CSRF-Token');
    const wrong = await consoleRequest(stack, 'POST', '/session/sign-out-everywhere', {
      body: {},
      headers: { cookie: mine.cookie, 'x-csrf-token': theirs.csrfToken },
    });
    expect([wrong.status, wrong.code]).toEqual([403, 'permission_denied']);
    expect((await mine.get('/session')).status).toBe(200);
  });

  test('when a change comes from another origin, even with the token, then it is refused; the same origin is not', async () => {
    const me = await signIn(stack, 'admin');
    const foreign = await me.post('/session/sign-out-everywhere', {}, { origin: 'https://evil.example' });
    expect([foreign.status, foreign.code]).toEqual([403, 'permission_denied']);
    const crossSite = await me.post('/session/sign-out-everywhere', {}, { 'sec-fetch-site': 'cross-site' });
    expect([crossSite.status, crossSite.code]).toEqual([403, 'permission_denied']);
    const signInFromElsewhere = await consoleRequest(stack, 'POST', '/session', {
      body: { username: me.username, password: me.password },
      headers: { origin: 'https://evil.example' },
    });
    expect([signInFromElsewhere.status, signInFromElsewhere.code]).toEqual([403, 'permission_denied']);
    expect((await me.get('/session')).status).toBe(200);
    const own = await me.post(
      '/session/sign-out-everywhere',
      {},
      { origin: stack.baseUrl, 'sec-fetch-site': 'same-origin' },
    );
    expect(own.status).toBe(200);
  });
});

describe('apps and operators stay apart', () => {
  test("when an app's HMAC-signed request reaches /console/api, then it is 401; a console session does not reach /api/v1", async () => {
    const signed = await signedFetch(stack.baseUrl, app, 'GET', '/console/api/orders');
    expect(signed.status).toBe(401);
    expect(((await signed.json()) as { code: string }).code).toBe('unauthorized');
    const withCookie = await fetch(`${stack.baseUrl}/api/v1/pay/query/P1`, {
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken },
    });
    expect(withCookie.status).toBe(401);
  });
});

describe('roles and operators', () => {
  test('when a viewer or an operator tries an admin change, then it is 403 and the attempt is in the audit log', async () => {
    const viewer = await signIn(stack, 'viewer');
    const operator = await signIn(stack, 'operator');
    for (const who of [viewer, operator]) {
      const answer = await who.post('/operators', {
        username: uniqueName('x'),
        role: 'admin',
        password: 'a long enough password',
      });
      expect([answer.status, answer.code]).toEqual([403, 'permission_denied']);
      expect((await who.get('/operators')).status).toBe(403);
      expect((await who.get('/audit')).status).toBe(403);
    }
    const rows = await auditRows("action = 'permission.denied' AND operator_username = ?", [viewer.username]);
    expect(rows).toEqual([
      expect.objectContaining({
        outcome: 'refused',
        error_code: 'permission_denied',
        target_id: 'POST /console/api/operators',
      }),
    ]);
  });

  test('when an admin creates an operator, changes its role and disables it, then each change holds, its sessions end, and each is audited with before and after', async () => {
    const username = uniqueName('new').slice(0, 60);
    const created = await admin.post<{ operator: { operator_id: string; role: string }; password: string }>(
      '/operators',
      { username, role: 'viewer' },
    );
    expect(created.status).toBe(200);
    const { operator_id: id } = created.data!.operator;
    expect(created.data!.password).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const duplicate = await admin.post('/operators', {
      username: username.toUpperCase(),
      role: 'viewer',
      password: 'a long enough password',
    });
    expect([duplicate.status, duplicate.code]).toEqual([400, 'invalid_param']);
    expect(duplicate.message).toContain('"username"');
    const weak = await admin.post('/operators', {
      username: uniqueName('weak'),
      role: 'viewer',
      password: 'short',
    });
    expect([weak.status, weak.code]).toEqual([400, 'invalid_param']);
    expect(weak.message).toContain('"password"');
    const badRole = await admin.post(`/operators/${id}/role`, { role: 'root' });
    expect([badRole.status, badRole.code]).toEqual([400, 'invalid_param']);
    expect(badRole.message).toContain('"role"');
    const likeAnId = await admin.post('/operators', { username: 'op_imposter', role: 'viewer' });
    expect([likeAnId.status, likeAnId.code]).toEqual([400, 'invalid_param']);
    expect(likeAnId.message).toContain('op_');
    // The refused changes are in the audit log too, with the code the admin was answered.
    const refusals = await auditRows(
      "operator_username = ? AND outcome = 'refused' AND action LIKE 'operator.%'",
      [admin.username],
    );
    expect(refusals.map((r) => [r.action, r.error_code])).toEqual(
      expect.arrayContaining([
        ['operator.create', 'invalid_param'],
        ['operator.set_role', 'invalid_param'],
      ]),
    );

    const them = await clientFor(stack, {
      operatorId: id,
      username,
      password: created.data!.password,
      role: 'viewer',
    });
    const promoted = await admin.post(`/operators/${id}/role`, { role: 'operator' });
    expect(promoted.data).toMatchObject({ operator: { role: 'operator' } });
    expect((await them.get('/session')).data).toMatchObject({ operator: { role: 'operator' } });
    const disabled = await admin.post(`/operators/${id}/disable`, {});
    expect(disabled.data).toMatchObject({ operator: { disabled: true } });
    expect((await them.get('/session')).status).toBe(401);
    expect((await admin.post('/operators/op_nobody/disable', {})).status).toBe(404);

    const rows = await auditRows("target_id = ? AND operator_username = ? AND outcome = 'succeeded'", [
      id,
      admin.username,
    ]);
    expect(rows.map((r) => r.action)).toEqual(['operator.create', 'operator.set_role', 'operator.disable']);
    expect(rows[1]).toMatchObject({
      before: expect.objectContaining({ role: 'viewer' }),
      after: expect.objectContaining({ role: 'operator' }),
    });
    expect(JSON.stringify(rows)).not.toContain(created.data!.password);
  });

  test('when the last admin would be demoted or disabled, then it is refused', async () => {
    // A stack of its own operators: the admins of this file's other tests would count.
    const operators = operatorsOf(stack);
    const admins = (await operators.list()).filter((o) => o.role === 'admin' && !o.disabledAt);
    for (const other of admins.slice(1)) await operators.disable(cli, other.operatorId);
    const last = admins[0]!;
    await expect(operators.setRole(cli, last.operatorId, 'viewer')).rejects.toMatchObject({
      code: 'invalid_param',
      message: expect.stringContaining('last admin'),
    });
    await expect(operators.disable(cli, last.operatorId)).rejects.toMatchObject({ code: 'invalid_param' });
    for (const other of admins.slice(1)) await operators.enable(cli, other.operatorId);
  });
});

describe('the audit log', () => {
  test('when the application (or anyone with SQL) tries to change or remove an audit entry, then the database refuses it', async () => {
    await expect(
      stack.database.db.sequelize.query("UPDATE console_audit_log SET action = 'nothing'"),
    ).rejects.toThrow(/append-only/);
    await expect(stack.database.db.sequelize.query('DELETE FROM console_audit_log')).rejects.toThrow(
      /append-only/,
    );
    await expect(stack.database.db.sequelize.query('TRUNCATE console_audit_log')).rejects.toThrow(
      /append-only/,
    );
  });

  test('when an admin reads the audit log, then it is newest first, filters by operator and action, and pages by keyset without repeats', async () => {
    const who = await newOperator();
    for (let i = 0; i < 3; i += 1) await signInAs(stack, who.username, `wrong ${i}`);
    await signInAs(stack, who.username, who.password);
    const first = await admin.get<{ list: { id: string; action: string; outcome: string }[]; next: string }>(
      `/audit?target_id=${who.operatorId}&action=session.sign_in&limit=2`,
    );
    expect(first.status).toBe(200);
    expect(first.data!.list.map((e) => e.outcome)).toEqual(['succeeded', 'refused']);
    const second = await admin.get<{ list: { id: string; outcome: string }[]; next: string | null }>(
      `/audit?target_id=${who.operatorId}&action=session.sign_in&limit=2&after=${first.data!.next}`,
    );
    expect(second.data!.list.map((e) => e.outcome)).toEqual(['refused', 'refused']);
    expect(second.data!.next).toBeNull();
    const ids = [...first.data!.list, ...second.data!.list].map((e) => e.id);
    expect(new Set(ids).size).toBe(4);
    const badCursor = await admin.get('/audit?after=nonsense');
    expect([badCursor.status, badCursor.code]).toEqual([400, 'invalid_param']);
    expect(badCursor.message).toContain('"after"');
  });
});

describe('payload key rotation', () => {
  test('when the payload keys rotate, then `keys reseal --rotate` seals TOTP secrets again, the old key opens none, and the code still signs in', async () => {
    const who = await newOperator();
    const { secret } = await operatorsOf(stack).setTotp(cli, who.username, true);
    const db = stack.database.db;
    const old = stack.payloadKeys.keyring;
    const entry = newPayloadKeyEntry('rotated');
    const rotated = parsePayloadKeys(`${entry},${stack.payloadKeys.env}`, 'rotated');
    expect(await new OperatorRepository(db, old).totpSecretsSealedWith(old.current.id)).toBeGreaterThan(0);
    expect((await new OperatorRepository(db, rotated).resealTotpSecrets()).resealed).toBeGreaterThan(0);
    expect(await new OperatorRepository(db, old).totpSecretsSealedWith(old.current.id)).toBe(0);
    expect((await new OperatorRepository(db, rotated).findById(who.operatorId))!.totpSecret).toBe(secret);
    // Sealed back with the stack's key: the API opens it again and the code signs in.
    const back = parsePayloadKeys(`${stack.payloadKeys.env},${entry}`, 'back');
    expect((await new OperatorRepository(db, back).resealTotpSecrets()).resealed).toBeGreaterThan(0);
    expect((await signInAs(stack, who.username, who.password, totpCode(secret!))).status).toBe(200);
  });
});
