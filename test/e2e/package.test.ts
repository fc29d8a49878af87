/**
 * The package as a user receives it: `npm pack` of a copy of this checkout (which builds it),
 * installed into an empty directory, and its SDK export used from there against a running API.
 * The checkout itself is left untouched (its dist/ is not rebuilt).
 *
 * @runs-alone: `npm pack` builds the whole package and `npm install` runs in a scratch directory;
 * beside other files it outlasts its time limit (test/support/tiered-runner.ts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestStack, type TestStack } from '../support/harness';

jest.setTimeout(300_000);
const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');

let stack: TestStack;
let work: string;
beforeAll(async () => {
  stack = await startTestStack();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-pack-'));
});
afterAll(async () => {
  await stack?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

const npm = (args: string[], cwd: string) =>
  run('npm', args, { cwd, env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } });

test('when the packed tarball is installed in an empty directory, then its SDK creates and queries an order, and it carries the license', async () => {
  const copy = path.join(work, 'checkout');
  fs.mkdirSync(copy);
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'src', 'sandbox']) {
    fs.cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  }
  for (const file of ['README.md', 'LICENSE', 'CHANGELOG.md']) {
    fs.copyFileSync(path.join(ROOT, file), path.join(copy, file));
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  const packed = JSON.parse((await npm(['pack', '--json', '--pack-destination', work], copy)).stdout) as {
    filename: string;
    files: { path: string }[];
  }[];
  const files = packed[0]!.files.map((f) => f.path);
  expect(files).toEqual(expect.arrayContaining(['LICENSE', 'CHANGELOG.md', 'dist/src/sdk/index.js']));
  expect(files.some((f) => f.startsWith('src/'))).toBe(false);

  const consumer = path.join(work, 'consumer');
  fs.mkdirSync(consumer);
  fs.writeFileSync(
    path.join(consumer, 'package.json'),
    '{"name":"consumer","version":"1.0.0","private":true}',
  );
  await npm(['install', '--omit=dev', path.join(work, packed[0]!.filename)], consumer);
  const installed = JSON.parse(
    fs.readFileSync(path.join(consumer, 'node_modules', 'durapay', 'package.json'), 'utf8'),
  ) as { license: string };
  expect(installed.license).toBe('Apache-2.0');

  const app = await stack.createApp(['payments']);
  const script = `
    const { DurapayClient } = require('durapay');
    const client = new DurapayClient({ baseUrl: process.env.BASE_URL, appId: process.env.APP_ID, secret: process.env.SECRET });
    (async () => {
      const created = await client.createOrder({ merchant_order_no: 'PACK-' + Date.now(), pay_method: 'qr_code',
        amount: 100, subject: 'Packed', notify_url: 'http://127.0.0.1:9/hook' });
      const order = await client.queryOrder(created.trade_no);
      console.log(JSON.stringify({ created, order }));
    })().catch((err) => { console.error(err); process.exit(1); });`;
  const { stdout } = await run(process.execPath, ['-e', script], {
    cwd: consumer,
    env: { PATH: process.env.PATH, BASE_URL: stack.baseUrl, APP_ID: app.app_id, SECRET: app.secret },
  });
  const { created, order } = JSON.parse(stdout) as {
    created: { trade_no: string; is_idempotent: boolean };
    order: { trade_no: string; status: string; amount: number };
  };
  expect(created.trade_no).toMatch(/^P\d{24}$/);
  expect(created.is_idempotent).toBe(false);
  expect(order).toMatchObject({ trade_no: created.trade_no, status: 'pending', amount: 100 });
});
