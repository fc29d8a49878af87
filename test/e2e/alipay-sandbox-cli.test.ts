/**
 * `durapay sandbox alipay`: the offline Alipay gateway on its own port, as a developer of any
 * Alipay client would run it. The settings it prints are all durapay needs: the test loads them
 * as configuration (so they pass its start-up checks), builds durapay's Alipay adapter from that
 * configuration alone, and takes, queries and closes a trade with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AlipayChannel } from '../../src/channels/alipay';
import { loadConfig } from '../../src/config';
import { freePort } from '../support/ports';
import { until } from '../support/wait';
import { durapayBin } from '../support/state';

jest.setTimeout(60_000);

let child: ChildProcess | undefined;
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-alipay-keys-'));

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGINT');
    await exited;
  }
  fs.rmSync(keyDir, { recursive: true, force: true });
});

test('when durapay sandbox alipay runs, then the settings it prints configure durapay to take, query and close a trade there', async () => {
  const port = await freePort();
  let stderr = '';
  child = spawn(
    process.execPath,
    [durapayBin(), 'sandbox', 'alipay', '--port', String(port), '--keys', keyDir],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await until('the gateway prints its settings', async () =>
    /ALIPAY_PUBLIC_KEY_FILE=/.test(stderr) ? true : undefined,
  );
  expect(stderr).toContain(`offline Alipay gateway on http://127.0.0.1:${port}/alipay/gateway.do`);
  const settings = Object.fromEntries(
    [...stderr.matchAll(/^ {2}(ALIPAY_[A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
  );
  // Keys are named by file, never printed.
  expect(Object.keys(settings).sort()).toEqual([
    'ALIPAY_APP_ID',
    'ALIPAY_GATEWAY_URL',
    'ALIPAY_PRIVATE_KEY_FILE',
    'ALIPAY_PUBLIC_KEY_FILE',
    'ALIPAY_SELLER_ID',
  ]);
  expect(stderr).not.toContain('PRIVATE KEY-----');
  expect(fs.statSync(settings.ALIPAY_PRIVATE_KEY_FILE!).mode & 0o777).toBe(0o600);

  const config = loadConfig(settings).alipay!;
  const channel = new AlipayChannel({ ...config, timeoutMs: 5_000 });
  const tradeNo = `P${Date.now()}0000000000`;
  const created = await channel.payments.create(
    { currency: 'CNY' },
    {
      tradeNo,
      amount: 1_234,
      payMethod: 'qr_code',
      subject: 'CLI tea',
      expireAt: new Date(Date.now() + 3_600_000),
      callbackUrl: 'http://127.0.0.1:9/notify',
      profitSharing: false,
    },
  );
  const qrCode = created.payCredential.qr_code as string;
  expect(qrCode).toContain(`http://127.0.0.1:${port}/alipay/cashier/`);
  // The buyer scans: the trade waits for payment at Alipay.
  expect((await fetch(qrCode)).status).toBe(200);
  expect(await channel.payments.query({}, tradeNo)).toEqual({ status: 'pending' });
  expect(await channel.payments.close({}, tradeNo)).toEqual({ status: 'closed' });
});
