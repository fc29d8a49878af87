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
import { WechatpayChannel } from '../../src/channels/wechatpay';
import { loadConfig } from '../../src/config';
import { freePort } from '../support/ports';
import { until } from '../support/wait';
import { durapayBin } from '../support/state';

jest.setTimeout(60_000);

let child: ChildProcess | undefined;
const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-wx-keys-'));

async function stop(): Promise<void> {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGINT');
    await exited;
  }
}

afterAll(async () => {
  await stop();
  fs.rmSync(keyDir, { recursive: true, force: true });
});

/** Starts the sandbox and reads the settings it prints once `ready` shows in them. */
async function start(
  extra: string[],
  ready: RegExp,
): Promise<{ port: number; settings: Record<string, string>; stderr: string }> {
  const port = await freePort();
  let stderr = '';
  child = spawn(
    process.execPath,
    [durapayBin(), 'sandbox', 'wechatpay', '--port', String(port), '--keys', keyDir, ...extra],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await until('the sandbox prints its settings', async () =>
    ready.test(stderr) && /SP_MCHID=/.test(stderr) ? true : undefined,
  );
  const settings = Object.fromEntries(
    [...stderr.matchAll(/^ {2}(WECHATPAY_[A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
  );
  return { port, settings, stderr };
}

test('when durapay sandbox wechatpay runs, then the settings it prints let a v3 client take and query an order', async () => {
  const { port, settings, stderr } = await start([], /WECHATPAY_PUBLIC_KEY_FILE=/);
  expect(stderr).toContain(`offline WeChat Pay v3 sandbox on http://127.0.0.1:${port}/wechatpay`);
  // Secrets are named by file, never printed.
  expect(Object.keys(settings).sort()).toEqual([
    'WECHATPAY_APIV2_KEY_FILE',
    'WECHATPAY_APIV3_KEY_FILE',
    'WECHATPAY_BASE_URL',
    'WECHATPAY_MERCHANT_PRIVATE_KEY_FILE',
    'WECHATPAY_MERCHANT_SERIAL',
    'WECHATPAY_PAPAY_PLAN_ID',
    'WECHATPAY_PUBLIC_KEY_FILE',
    'WECHATPAY_PUBLIC_KEY_ID',
    'WECHATPAY_SP_APPID',
    'WECHATPAY_SP_APP_SECRET_FILE',
    'WECHATPAY_SP_MCHID',
  ]);
  expect(stderr).not.toContain('PRIVATE KEY-----');
  expect(fs.statSync(settings.WECHATPAY_MERCHANT_PRIVATE_KEY_FILE!).mode & 0o777).toBe(0o600);
  // 委托代扣's API v2 key: 32 characters in a file of its own, as private as the rest.
  expect(fs.statSync(settings.WECHATPAY_APIV2_KEY_FILE!).mode & 0o777).toBe(0o600);
  expect(fs.readFileSync(settings.WECHATPAY_APIV2_KEY_FILE!, 'utf8').trim()).toMatch(/^[0-9a-f]{32}$/);

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

test('when it runs with --platform-certificates, then durapay configured from what it prints downloads its certificates and takes an order', async () => {
  await stop();
  const { settings } = await start(['--platform-certificates'], /WECHATPAY_PLATFORM_CERTIFICATES=download/);
  expect(Object.keys(settings).filter((k) => k.startsWith('WECHATPAY_PUBLIC_KEY'))).toEqual([]);
  const config = loadConfig(settings).wechatpay!;
  expect(config.platformCertificates).toBe(true);
  const channel = new WechatpayChannel({ ...config, timeoutMs: 5_000 });
  const tradeNo = `CLIC${Date.now()}`;
  const created = await channel.payments.create(
    { subMerchantNo: '1900000109', currency: 'CNY' },
    {
      tradeNo,
      amount: 1,
      payMethod: 'qr_code',
      subject: 'Tea',
      expireAt: new Date(Date.now() + 600_000),
      callbackUrl: 'http://127.0.0.1:9/notify',
      profitSharing: false,
    },
  );
  expect(created.payCredential.code_url).toContain('/wechatpay/checkout/');
  expect(await channel.payments.query({ subMerchantNo: '1900000109' }, tradeNo)).toMatchObject({
    status: 'pending',
  });
});
