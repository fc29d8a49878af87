/**
 * `npm run chaos` end to end, with its short profile: its own stack (durapay start, on a
 * scratch database of the tests' Postgres) under steady load while the worker, the API, the
 * Temporal dev server and Postgres are each killed twice; the run passes only when every kill
 * was survived and no invariant of money or of nothing lost was broken.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTool } from '../support/scripts';

jest.setTimeout(900_000);

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-chaos-test-'));
let passed = false;
// A failed run's report (with its evidence: rows, notifications, histories) is kept.
afterAll(() => {
  if (passed) fs.rmSync(outDir, { recursive: true, force: true });
  else process.stderr.write(`[chaos] report kept in ${outDir}\n`);
});

test('when each part of the stack is killed twice under load, then every kill is survived and no invariant is broken', async () => {
  const seed = Math.floor(Math.random() * 2 ** 31);
  const { code, stdout, stderr } = await runTool('chaos/main.ts', [
    ...['--duration', '90', '--kills', '2', '--settle', '120', '--seed', String(seed), '--out-dir', outDir],
  ]);
  // The figures, in the test's output: kills survived, orders, violations.
  process.stderr.write(
    `[chaos] seed ${seed}\n${stdout
      .split('\n')
      .filter((l) => l.startsWith('|') || /^(orders|chaos|supervisor)/.test(l))
      .join('\n')}\n`,
  );
  expect({ code, out: code === 0 ? '' : `${stdout.slice(-4000)}\n${stderr.slice(-3000)}` }).toEqual({
    code: 0,
    out: '',
  });

  const file = fs.readdirSync(outDir).find((f) => f.endsWith('.json'));
  const report = JSON.parse(fs.readFileSync(path.join(outDir, file!), 'utf8')) as {
    survived: number;
    orders: { answered: number; paid: number; closed: number };
    violations: string[];
  };
  expect(report.survived).toBe(8);
  expect(report.violations).toEqual([]);
  expect(report.orders.answered).toBeGreaterThan(20);
  expect(report.orders.paid).toBeGreaterThan(0);
  expect(report.orders.closed).toBeGreaterThan(0);
  passed = true;
});
