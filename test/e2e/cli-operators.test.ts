/**
 * `durapay operators …` run as a user runs it, against the database the API of this test serves
 * from: the operators it makes sign in to the console, and each change it makes is audited.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { QueryTypes } from 'sequelize';
import { totpCode } from '../../src/modules/operators';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { signInAs } from '../support/console';
import { durapayBin } from '../support/state';

jest.setTimeout(120_000);
const run = promisify(execFile);

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

function env() {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: stack.database.url,
    DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
    DURAPAY_PAYLOAD_KEYS: stack.payloadKeys.env,
    LOG_LEVEL: 'warn',
  };
}

function durapay(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [durapayBin(), ...args], { env: env() });
}

/** Runs the CLI with `input` on its standard input. */
function durapayWithInput(
  input: string,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [durapayBin(), ...args], { env: env() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

async function fails(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await durapay(...args);
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
  throw new Error(`durapay ${args.join(' ')} succeeded`);
}

test('when an admin is created with a password from standard input, then it signs in to the console, is listed, and the change is audited as the command line', async () => {
  const username = uniqueName('admin').slice(0, 60);
  const password = 'a password long enough for the console';
  const made = await durapayWithInput(
    `${password}\n`,
    'operators',
    'create',
    '--username',
    username,
    '--role',
    'admin',
    '--password-stdin',
    '--json',
  );
  expect(made.code).toBe(0);
  const view = JSON.parse(made.stdout) as { operator_id: string; role: string };
  expect(view).toMatchObject({ username, role: 'admin', totp_enabled: false });
  expect(made.stdout + made.stderr).not.toContain(password);

  const signedIn = await signInAs(stack, username, password);
  expect(signedIn.status).toBe(200);
  const { stdout } = await durapay('operators', 'list', '--json');
  const listed = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { username: string });
  expect(listed.map((o) => o.username)).toContain(username);
  expect(stdout).not.toMatch(/scrypt|password/);

  const rows = await stack.database.db.sequelize.query<{ operator_username: string; action: string }>(
    'SELECT operator_username, action FROM console_audit_log WHERE target_id = ? ORDER BY id',
    { type: QueryTypes.SELECT, replacements: [view.operator_id] },
  );
  expect(rows[0]).toMatchObject({
    action: 'operator.create',
    operator_username: expect.stringMatching(/^cli:/),
  });
});

test('when a password is reset, TOTP turned on, the role changed and the operator disabled, then each takes effect at sign-in', async () => {
  const username = uniqueName('opr').slice(0, 60);
  const created = JSON.parse(
    (await durapay('operators', 'create', '--username', username, '--role', 'viewer', '--json')).stdout,
  ) as {
    password: string;
  };
  expect(created.password).toMatch(/^[A-Za-z0-9_-]{20}$/);
  expect((await signInAs(stack, username, created.password)).status).toBe(200);

  const reset = JSON.parse((await durapay('operators', 'reset-password', username, '--json')).stdout) as {
    password: string;
  };
  expect((await signInAs(stack, username, created.password)).status).toBe(401);
  expect((await signInAs(stack, username, reset.password)).status).toBe(200);

  const { secret, uri } = JSON.parse((await durapay('operators', 'totp', username, '--json')).stdout) as {
    secret: string;
    uri: string;
  };
  expect(uri).toMatch(/^otpauth:\/\/totp\/durapay:/);
  expect((await signInAs(stack, username, reset.password)).message).toContain('"totp_code"');
  expect((await signInAs(stack, username, reset.password, totpCode(secret))).status).toBe(200);

  await durapay('operators', 'set-role', username, '--role', 'operator');
  // A code signs in once: the next one (a step ahead, still in the window) signs in again.
  expect(
    (await signInAs(stack, username, reset.password, totpCode(secret, Date.now() + 30_000))).data,
  ).toMatchObject({
    operator: { role: 'operator' },
  });

  await durapay('operators', 'disable', username);
  expect((await signInAs(stack, username, reset.password, totpCode(secret))).status).toBe(401);
});

test('when the input is wrong, then the command says which and exits non-zero', async () => {
  const badRole = await fails('operators', 'create', '--username', uniqueName('x'), '--role', 'root');
  expect(badRole.code).not.toBe(0);
  expect(badRole.stderr).toContain('--role');
  const badName = await fails('operators', 'create', '--username', 'no spaces please', '--role', 'viewer');
  expect(badName.stderr).toContain('"username"');
  const weak = await durapayWithInput(
    'short\n',
    'operators',
    'create',
    '--username',
    uniqueName('w'),
    '--role',
    'viewer',
    '--password-stdin',
  );
  expect(weak.code).not.toBe(0);
  expect(weak.stderr).toContain('"password"');
  const unknown = await fails('operators', 'disable', 'nobody-at-all');
  expect(unknown.stderr).toContain('nobody-at-all');
});
