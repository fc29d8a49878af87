/**
 * `npm run fuzz` end to end, with a short profile: it brings up its own stack (durapay start, on
 * a scratch database of the tests' Postgres), sends generated requests over every endpoint, and
 * checks every answer against the contract. The run passes only with 0 violations.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { globalState } from '../support/state';

jest.setTimeout(600_000);

const ROOT = path.join(__dirname, '..', '..');
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-fuzz-test-'));
afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

/** The short profile CI runs; `npm run fuzz` alone sends 10 000. */
const REQUESTS = 3_000;

test('when the fuzzer sends its short profile, then every answer is as the contract says: 0 violations', async () => {
  const { cliPath, adminUrl } = globalState();
  const seed = Math.floor(Math.random() * 2 ** 31);
  const child = spawn(
    process.execPath,
    [
      '--require',
      'tsx/cjs',
      path.join(ROOT, 'fuzz', 'main.ts'),
      '--requests',
      String(REQUESTS),
      '--seed',
      String(seed),
      '--out-dir',
      outDir,
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TEMPORAL_CLI_PATH: cliPath,
        DATABASE_URL: adminUrl,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  // The figures, in the test's output: requests fuzzed, families, violations.
  process.stderr.write(
    `[fuzz] ${stdout.split('\n').find((l) => l.startsWith('fuzz:')) ?? stdout.slice(-2000)}\n`,
  );
  expect({ code, out: code === 0 ? '' : `${stdout.slice(-4000)}\n${stderr.slice(-2000)}` }).toEqual({
    code: 0,
    out: '',
  });

  const file = fs.readdirSync(outDir).find((f) => f.endsWith('.json'));
  const report = JSON.parse(fs.readFileSync(path.join(outDir, file!), 'utf8')) as {
    seed: number;
    requests: number;
    violations: number;
    families: Record<string, { requests: number }>;
  };
  expect(report).toMatchObject({ seed, requests: REQUESTS, violations: 0 });
  expect(Object.keys(report.families).length).toBeGreaterThanOrEqual(15);
});
