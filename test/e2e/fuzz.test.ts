/**
 * `npm run fuzz` end to end, with a short profile: it brings up its own stack (durapay start, on
 * a scratch database of the tests' Postgres), sends generated requests over every endpoint, and
 * checks every answer against the contract. The run passes only with 0 violations.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTool } from '../support/scripts';

jest.setTimeout(600_000);

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-fuzz-test-'));
afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

/** The short profile CI runs; `npm run fuzz` alone sends 10 000. */
const REQUESTS = 3_000;

test('when the fuzzer sends its short profile, then every answer is as the contract says: 0 violations', async () => {
  const seed = Math.floor(Math.random() * 2 ** 31);
  const { code, stdout, stderr } = await runTool('fuzz/main.ts', [
    ...['--requests', String(REQUESTS), '--seed', String(seed), '--out-dir', outDir],
  ]);
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
