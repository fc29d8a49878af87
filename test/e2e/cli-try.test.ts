/**
 * `durapay try`, run as a newcomer runs it once the gateway is up: signed as the dev app whose
 * credentials `npm start` saved in the data directory, against the API of this test's stack.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { AppCredentials } from '../../src/modules/apps';
import { DURAPAY_BIN } from '../../src/platform/paths';
import { startTestStack, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { freePort } from '../support/ports';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';

jest.setTimeout(120_000);
const run = promisify(execFile);

let stack: TestStack;
let dev: AppCredentials;
let dataDir: string;
const receiver = new Receiver();

beforeAll(async () => {
  // Real time: an order stays pending for its 30 minutes, as it would for a person at the checkout.
  stack = await startTestStack({ timeScale: 1 });
  await receiver.start();
  dev = await stack.createApp(['payments', 'merchants'], 'dev');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-try-'));
  // What the first `npm start` writes.
  fs.writeFileSync(
    path.join(dataDir, 'dev-app.json'),
    `${JSON.stringify({ name: 'dev', ...dev, base_url: stack.baseUrl }, null, 2)}\n`,
    { mode: 0o600 },
  );
});
afterAll(async () => {
  await receiver.stop();
  await stack?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The API's port, which the CLI's configuration reads as PORT. */
function apiPort(): string {
  return new URL(stack.baseUrl).port;
}

async function durapay(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [DURAPAY_BIN, ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DURAPAY_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ...env,
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function queryOrder(tradeNo: string) {
  return envelope<Record<string, unknown>>(
    await signedFetch(stack.baseUrl, dev, 'GET', `/api/v1/pay/query/${tradeNo}`),
  );
}

test('when durapay try runs beside a running gateway, then it creates a sandbox order as the dev app and prints its trade_no, amount and a pay_url that pays it', async () => {
  // No --url: the gateway is found at the configured PORT, on localhost.
  const tried = await durapay(
    ['try', '--amount', '250', '--subject', 'Green tea', '--notify-url', receiver.url],
    {
      PORT: apiPort(),
    },
  );
  expect(tried).toMatchObject({ code: 0, stderr: 'open the pay_url and press Pay\n' });
  const lines = tried.stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(3);
  const tradeNo = /^trade_no\s+([A-Z0-9]{1,32})$/.exec(lines[0]!)?.[1];
  expect(tradeNo).toBeDefined();
  expect(lines[1]).toMatch(/^amount\s+250 fen$/);
  const payUrl = lines[2]!;
  expect(payUrl).toBe(`${stack.baseUrl}/sandbox/pay/${tradeNo}`);

  const order = await queryOrder(tradeNo!);
  expect(order.code).toBe('success');
  expect(order.data).toMatchObject({
    trade_no: tradeNo,
    status: 'pending',
    amount: 250,
    subject: 'Green tea',
    channel_code: 'sandbox',
    pay_method: 'qr_code',
    merchant_id: null,
  });
  expect(order.data!.merchant_order_no).toMatch(/^try-/);

  // The pay_url is the sandbox checkout: its page, and the buyer's Pay on it.
  const page = await fetch(payUrl);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(await page.text()).toContain(tradeNo);
  const paid = await fetch(payUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"result":"success"}',
  });
  expect(paid.status).toBe(200);
  await until(`order ${tradeNo} paid`, async () =>
    (await queryOrder(tradeNo!)).data?.status === 'paid' ? true : undefined,
  );
  // The notify_url given is the one notified.
  const notified = await until('payment.succeeded at the receiver', async () =>
    receiver.received.find((r) => r.body.includes(tradeNo!)),
  );
  expect(JSON.parse(notified.body)).toMatchObject({ type: 'payment.succeeded', data: { trade_no: tradeNo } });
});

test('when durapay try is given --json and --url, then it prints the API data alone, and each run is a new order', async () => {
  const runs = [];
  for (let i = 0; i < 2; i++) {
    const tried = await durapay(['try', '--json', '--url', stack.baseUrl]);
    expect(tried).toMatchObject({ code: 0, stderr: '' });
    expect(tried.stdout.trimEnd().split('\n')).toHaveLength(1);
    runs.push(
      JSON.parse(tried.stdout) as {
        trade_no: string;
        pay_credential: { pay_url: string; qr_code: string };
        is_idempotent: boolean;
      },
    );
  }
  for (const data of runs) {
    expect(data.is_idempotent).toBe(false);
    expect(data.pay_credential.pay_url).toBe(`${stack.baseUrl}/sandbox/pay/${data.trade_no}`);
    expect((await queryOrder(data.trade_no)).data).toMatchObject({ status: 'pending', amount: 100 });
  }
  expect(runs[0]!.trade_no).not.toBe(runs[1]!.trade_no);
});

test('when durapay try is given --barcode, then it prints a sandbox buyer code and the order going paying to paid, as a till sees it', async () => {
  const tried = await durapay(['try', '--barcode', '--amount', '320', '--url', stack.baseUrl]);
  expect({ code: tried.code, stderr: tried.stderr }).toEqual({ code: 0, stderr: '' });
  const lines = tried.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^auth_code 991\d{15} \(a sandbox buyer who confirms later\)$/);
  const tradeNo = /^trade_no\s+([A-Z0-9]{1,32})$/.exec(lines[1]!)?.[1];
  expect(tradeNo).toBeDefined();
  expect(lines.slice(2)).toEqual(['amount    320 fen', 'status    paying', 'status    paid']);
  expect((await queryOrder(tradeNo!)).data).toMatchObject({
    status: 'paid',
    pay_method: 'barcode',
    device_id: 'durapay-try',
  });
});

test('when durapay try --barcode names a buyer the sandbox does not have, then it lists those it has and exits 1', async () => {
  const tried = await durapay(['try', '--barcode', 'rich', '--url', stack.baseUrl]);
  expect(tried.code).toBe(1);
  expect(tried.stderr).toContain('--barcode takes one of pays, confirms_later, never_confirms');
});

test('when no gateway answers at the URL, then durapay try says so on one line and exits 1', async () => {
  const nowhere = `http://127.0.0.1:${await freePort()}`;
  const tried = await durapay(['try', '--url', nowhere]);
  expect(tried.code).toBe(1);
  expect(tried.stdout).toBe('');
  expect(tried.stderr).toBe(
    `durapay: no durapay gateway answers at ${nowhere} (ECONNREFUSED): start it with npm start, or give --url\n`,
  );
});

test('when the API refuses the order, then durapay try prints its code and message and exits 1', async () => {
  const tried = await durapay(['try', '--url', stack.baseUrl, '--amount', '0']);
  expect(tried.code).toBe(1);
  expect(tried.stdout).toBe('');
  expect(tried.stderr).toMatch(/^durapay: invalid_\w+: .*amount.*\n$/);
});

test('when there is no dev app and no app in the environment, then durapay try says how to get one and exits 1', async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-try-empty-'));
  try {
    const tried = await durapay(['try', '--url', stack.baseUrl], { DURAPAY_DATA_DIR: empty });
    expect(tried.code).toBe(1);
    expect(tried.stderr).toContain('run npm start once to create the dev app');
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});
