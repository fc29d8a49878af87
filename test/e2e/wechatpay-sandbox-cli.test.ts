/**
 * `durapay sandbox wechatpay`: the offline WeChat Pay v3 sandbox on its own port, as a developer
 * of any v3 client would run it. The settings it prints are all a client needs: the test builds
 * a wechatpay-axios-plugin client from them alone (response verification on) and takes an order.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Decorator } from 'wechatpay-axios-plugin';
import { DURAPAY_BIN } from '../../src/platform/paths';
import { freePort } from '../support/ports';
import { until } from '../support/wait';

jest.setTimeout(60_000);

let child: ChildProcess | undefined;
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-wx-keys-'));
afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGINT');
    await exited;
  }
  fs.rmSync(keyDir, { recursive: true, force: true });
});

test('when durapay sandbox wechatpay runs, then the settings it prints let a v3 client take and query an order', async () => {
  const port = await freePort();
  let stderr = '';
  child = spawn(
    process.execPath,
    [DURAPAY_BIN, 'sandbox', 'wechatpay', '--port', String(port), '--keys', keyDir],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await until('the sandbox prints its settings', async () =>
    /WECHATPAY_PUBLIC_KEY_FILE=/.test(stderr) ? true : undefined,
  );
  expect(stderr).toContain(`offline WeChat Pay v3 sandbox on http://127.0.0.1:${port}/wechatpay`);
  const settings = Object.fromEntries(
    [...stderr.matchAll(/^ {2}(WECHATPAY_[A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
  );
  // Secrets are named by file, never printed.
  expect(Object.keys(settings).sort()).toEqual([
    'WECHATPAY_APIV3_KEY_FILE',
    'WECHATPAY_BASE_URL',
    'WECHATPAY_MERCHANT_PRIVATE_KEY_FILE',
    'WECHATPAY_MERCHANT_SERIAL',
    'WECHATPAY_PUBLIC_KEY_FILE',
    'WECHATPAY_PUBLIC_KEY_ID',
    'WECHATPAY_SP_APPID',
    'WECHATPAY_SP_MCHID',
  ]);
  expect(stderr).not.toContain('PRIVATE KEY-----');
  expect(fs.statSync(settings.WECHATPAY_MERCHANT_PRIVATE_KEY_FILE!).mode & 0o777).toBe(0o600);

  // The library's client (what its chained API calls), built from the printed settings alone.
  const wxpay = new Decorator({
    mchid: settings.WECHATPAY_SP_MCHID!,
    serial: settings.WECHATPAY_MERCHANT_SERIAL!,
    privateKey: fs.readFileSync(settings.WECHATPAY_MERCHANT_PRIVATE_KEY_FILE!),
    certs: { [settings.WECHATPAY_PUBLIC_KEY_ID!]: fs.readFileSync(settings.WECHATPAY_PUBLIC_KEY_FILE!) },
    baseURL: `${settings.WECHATPAY_BASE_URL}/`,
  } as ConstructorParameters<typeof Decorator>[0]);
  const outTradeNo = `CLI${Date.now()}`;
  const created = await wxpay.request('v3/pay/partner/transactions/native', 'post', {
    sp_appid: settings.WECHATPAY_SP_APPID,
    sp_mchid: settings.WECHATPAY_SP_MCHID,
    sub_mchid: '1900000109',
    description: 'Tea',
    out_trade_no: outTradeNo,
    notify_url: 'http://127.0.0.1:9/notify',
    amount: { total: 1, currency: 'CNY' },
  });
  expect((created.data as { code_url: string }).code_url).toMatch(
    `http://127.0.0.1:${port}/wechatpay/checkout/`,
  );
  const queried = await wxpay.request(
    'v3/pay/partner/transactions/out-trade-no/{out_trade_no}',
    'get',
    undefined,
    {
      params: { sp_mchid: settings.WECHATPAY_SP_MCHID, sub_mchid: '1900000109' },
      out_trade_no: outTradeNo,
    },
  );
  expect(queried.data).toMatchObject({
    out_trade_no: outTradeNo,
    trade_state: 'NOTPAY',
    amount: { total: 1 },
  });
});
