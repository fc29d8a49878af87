/**
 * `npm run chaos -- --scenario barcode` with its short profile: tills take barcode payments from
 * sandbox buyers of every kind on its own stack while the worker is killed after a payment was
 * taken at the channel and before the order heard of it, and before and after a reverse; the
 * run passes only when every kill was survived and the money the channel keeps is exactly the
 * orders paid.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTool } from '../support/scripts';

jest.setTimeout(600_000);

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-chaos-barcode-test-'));
let passed = false;
// A failed run's report is kept.
afterAll(() => {
  if (passed) fs.rmSync(outDir, { recursive: true, force: true });
  else process.stderr.write(`[chaos barcode] report kept in ${outDir}\n`);
});

test('when barcode payments are taken while the worker is killed after the charge and around the reverse, then the channel keeps money exactly for the orders paid, each asked of it once', async () => {
  const seed = Math.floor(Math.random() * 2 ** 31);
  const { code, stdout, stderr } = await runTool('chaos/main.ts', [
    ...['--scenario', 'barcode', '--duration', '20', '--kills', '1', '--settle', '120', '--min-orders', '30'],
    ...['--seed', String(seed), '--out-dir', outDir],
  ]);
  process.stderr.write(
    `[chaos barcode] seed ${seed}\n${stdout
      .split('\n')
      .filter((l) => l.startsWith('|') || /^(barcode orders|chaos)/.test(l))
      .join('\n')}\n`,
  );
  expect({ code, out: code === 0 ? '' : `${stdout.slice(-4000)}\n${stderr.slice(-3000)}` }).toEqual({
    code: 0,
    out: '',
  });
  const file = fs.readdirSync(outDir).find((f) => f.endsWith('.json'));
  const report = JSON.parse(fs.readFileSync(path.join(outDir, file!), 'utf8')) as {
    kills: { activity: string; point: string; recoveredMs?: number }[];
    orders: { created: number; paid: number; reversed: number; refused: number; channelKeeps: number };
    violations: string[];
  };
  // Each point was reached and the worker killed there once, and came back.
  expect(report.kills.map((k) => `${k.activity} ${k.point} ${k.recoveredMs !== undefined}`).sort()).toEqual([
    'payBarcodeAtChannel after true',
    'reverseBarcodePayment after true',
    'reverseBarcodePayment before true',
  ]);
  expect(report.violations).toEqual([]);
  expect(report.orders.created).toBeGreaterThanOrEqual(30);
  expect(report.orders.paid).toBeGreaterThan(0);
  expect(report.orders.reversed).toBeGreaterThan(0);
  expect(report.orders.refused).toBeGreaterThan(0);
  expect(report.orders.channelKeeps).toBe(report.orders.paid);
  passed = true;
});
