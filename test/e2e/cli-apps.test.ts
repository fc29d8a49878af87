/**
 * The `durapay apps` and `durapay sign` commands, run as a user runs them, against the same
 * database the API of this test serves from.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestStack, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
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

async function durapay(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [durapayBin(), ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: stack.database.url,
      DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
      LOG_LEVEL: 'warn',
    },
  });
}

async function durapayFails(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await durapay(...args);
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
  throw new Error(`durapay ${args.join(' ')} succeeded`);
}

/** Calls the API with headers printed by `durapay sign`. */
async function callWithSign(appId: string, secret: string, path: string): Promise<Response> {
  const { stdout } = await durapay(
    'sign',
    '--app-id',
    appId,
    '--secret',
    secret,
    '--path',
    path,
    '--format',
    'json',
  );
  const headers = JSON.parse(stdout) as Record<string, string>;
  return fetch(`${stack.baseUrl}${path}`, { headers });
}

test('when an app is created, listed, disabled, enabled and rotated through the CLI, then the API follows each step', async () => {
  const created = await durapay('apps', 'create', '--name', 'shop one', '--scopes', 'payments', '--json');
  const lines = created.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const app = JSON.parse(lines[0]!) as {
    app_id: string;
    secret: string;
    webhook_secret: string;
    scopes: string[];
  };
  expect(Object.keys(app).sort()).toEqual(['app_id', 'scopes', 'secret', 'webhook_secret']);
  expect(app.app_id).toMatch(/^app_[a-z2-7]{16}$/);
  expect(app.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(app.webhook_secret).toMatch(/^whsec_/);
  expect(app.scopes).toEqual(['payments']);

  const listed = await durapay('apps', 'list', '--json');
  const rows = listed.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(rows).toContainEqual(
    expect.objectContaining({ app_id: app.app_id, name: 'shop one', status: 'active' }),
  );
  expect(listed.stdout).not.toContain(app.secret);

  // Signed with `durapay sign`: authenticated, then no such order.
  expect((await callWithSign(app.app_id, app.secret, '/api/v1/pay/query/P1')).status).toBe(422);

  await durapay('apps', 'disable', app.app_id);
  const disabled = await callWithSign(app.app_id, app.secret, '/api/v1/pay/query/P1');
  expect(disabled.status).toBe(403);
  expect((await envelope(disabled)).code).toBe('permission_denied');

  await durapay('apps', 'enable', app.app_id);
  expect((await callWithSign(app.app_id, app.secret, '/api/v1/pay/query/P1')).status).toBe(422);

  const rotated = JSON.parse((await durapay('apps', 'rotate-secret', app.app_id, '--json')).stdout) as {
    secret: string;
  };
  expect(rotated.secret).not.toBe(app.secret);
  expect((await callWithSign(app.app_id, app.secret, '/api/v1/pay/query/P1')).status).toBe(401);
  expect((await callWithSign(app.app_id, rotated.secret, '/api/v1/pay/query/P1')).status).toBe(422);
});

test('when the CLI gets a bad argument, then it exits non-zero with a message and changes nothing', async () => {
  expect(await durapayFails('apps', 'create', '--name', 'x', '--scopes', 'payments,admin')).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('unknown scope(s): admin'),
  });
  expect(await durapayFails('apps', 'disable', 'not-an-app')).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('is not an app id'),
  });
  expect(await durapayFails('apps', 'disable', 'app_aaaaaaaaaaaaaaaa')).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('no app app_aaaaaaaaaaaaaaaa'),
  });
});

test('when sign is given a body on stdin, then it prints a Content-Digest of exactly those bytes', async () => {
  const child = run(process.execPath, [
    durapayBin(),
    'sign',
    '--app-id',
    'app_aaaaaaaaaaaaaaaa',
    '--secret',
    's',
    '--method',
    'post',
    '--path',
    '/api/v1/pay/close',
    '--body',
    '-',
  ]);
  child.child.stdin!.end('{"trade_no":"P1"}');
  const { stdout } = await child;
  expect(stdout).toContain('Content-Digest: sha-256=:');
  expect(stdout).toMatch(
    /^Signature-Input: sig1=\("@method" "@path" "@query" "content-digest"\);created=\d+;nonce="[^"]+";keyid="app_aaaaaaaaaaaaaaaa";alg="hmac-sha256"$/m,
  );
  expect(stdout).toMatch(/^Signature: sig1=:[A-Za-z0-9+/]+=*:$/m);
});
