/**
 * `durapay start` (what `npm start` runs) as a newcomer would: an empty data directory, no
 * DATABASE_URL and no TEMPORAL_ADDRESS, so it starts its own embedded Postgres and Temporal
 * dev server. Then Ctrl-C, and nothing may be left running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { envelope } from '../support/http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DURAPAY_BIN } from '../../src/platform/paths';
import { freePort } from '../support/ports';
import { signedFetch } from '../support/signing';
import { globalState } from '../support/state';
import { responseConformance } from '../support/openapi-conformance';
import { until } from '../support/wait';

jest.setTimeout(240_000);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-start-'));
// Under root, Postgres runs as the `postgres` user, which must be able to reach its data dir.
fs.chmodSync(dataDir, 0o755);
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

/** Running, i.e. neither gone nor a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function startOnce(ports: { api: number; temporal: number; ui: number; pg: number }) {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DURAPAY_DATA_DIR: dataDir,
    TEMPORAL_CLI_PATH: globalState().cliPath,
    PORT: String(ports.api),
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    DURAPAY_PG_PORT: String(ports.pg),
    LOG_LEVEL: 'warn',
  };
  const started = Date.now();
  // detached: its own process group, as a terminal's foreground job would be.
  const child = spawn(process.execPath, [DURAPAY_BIN, 'start'], {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (stderr.includes('Press Ctrl-C to stop.')) {
        clearInterval(timer);
        resolve();
      }
    }, 100);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`durapay start exited with ${code}:\n${stderr}`));
    });
  });
  return { child, seconds: (Date.now() - started) / 1000, stderr: () => stderr, stdout: () => stdout };
}

async function ctrlC(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  process.kill(-child.pid!, 'SIGINT');
  return exited;
}

test('when durapay start runs on an empty machine state, then the API is ready, the UI answers, and Ctrl-C leaves nothing behind; a second start reuses the data', async () => {
  const ports = {
    api: await freePort(),
    temporal: await freePort(),
    ui: await freePort(),
    pg: await freePort(),
  };

  const first = await startOnce(ports);
  const api = `http://127.0.0.1:${ports.api}`;
  responseConformance().register(api);
  const ready = await fetch(`${api}/readyz`);
  expect(ready.status).toBe(200);
  expect((await envelope(ready)).data).toEqual({ status: 'ready', database: 'ok', temporal: 'ok' });
  // Bound to 127.0.0.1 only: the sandbox checkout is not for the network. (A server bound to
  // 0.0.0.0 would answer on 127.0.0.2 too, which every Linux routes to loopback.)
  await expect(fetch(`http://127.0.0.2:${ports.api}/healthz`)).rejects.toThrow();
  expect(first.stderr()).toContain(`API           http://localhost:${ports.api}`);
  // The console, and the command that makes its first operator.
  expect(first.stderr()).toContain(
    `Console       http://localhost:${ports.api}/console   (first operator: npx durapay operators create --username NAME --role admin)`,
  );
  expect(first.stderr()).toContain(`Temporal UI   http://localhost:${ports.ui}`);
  expect((await fetch(`http://127.0.0.1:${ports.ui}/`)).status).toBe(200);
  expect(fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
  expect(fs.existsSync(path.join(dataDir, 'temporal.sqlite'))).toBe(true);

  // The first start on an empty database creates the dev app, shows its secrets once, and
  // keeps them in dev-app.json for `durapay sign`.
  const devAppFile = path.join(dataDir, 'dev-app.json');
  expect(fs.statSync(devAppFile).mode & 0o777).toBe(0o600);
  const dev = JSON.parse(fs.readFileSync(devAppFile, 'utf8')) as {
    app_id: string;
    secret: string;
    scopes: string[];
  };
  expect(dev.scopes).toEqual(['payments', 'merchants']);
  expect(first.stderr()).toContain(`app_id          ${dev.app_id}`);
  expect(first.stderr()).toContain(`secret          ${dev.secret}`);
  const signed = await signedFetch(api, dev, 'GET', '/api/v1/pay/query/P1');
  expect(signed.status).toBe(422); // authenticated; no such order
  expect(first.stdout()).not.toContain(dev.secret);

  // Without a WeChat Pay account, the offline WeChat Pay sandbox is mounted and its keys kept.
  const wechatKeys = path.join(dataDir, 'wechatpay-sandbox', 'wechatpay-sandbox-keys.json');
  expect(fs.statSync(wechatKeys).mode & 0o777).toBe(0o600);
  const { spMchid } = JSON.parse(fs.readFileSync(wechatKeys, 'utf8')) as { spMchid: string };
  expect(first.stderr()).toContain(
    `WeChat Pay    offline v3 sandbox at http://127.0.0.1:${ports.api}/wechatpay (sp_mchid ${spMchid})`,
  );
  const unsigned = await fetch(
    `${api}/wechatpay/v3/pay/partner/transactions/out-trade-no/P1?sp_mchid=${spMchid}`,
  );
  expect({ status: unsigned.status, code: ((await unsigned.json()) as { code: string }).code }).toEqual({
    status: 401,
    code: 'SIGN_ERROR',
  });
  // A WeChat Pay order through the whole stack: the worker reaches the sandbox with the settings
  // npm start gave it. The merchant's sub_mchid is attached as a client attaches it (SPEC §5.8),
  // and the offline WeChat Pay confirms it belongs to this service provider.
  const merchant = await signedFetch(api, dev, 'POST', '/api/v1/merchant', {
    json: { merchant_id: 'TEA-1', merchant_name: 'Tea House' },
  });
  expect((await envelope(merchant)).code).toBe('success');
  const attached = await signedFetch(api, dev, 'PUT', '/api/v1/merchant/TEA-1/channel-accounts/wechatpay', {
    json: { sub_mchid: '1900000109' },
  });
  expect((await envelope(attached)).code).toBe('success');
  const wechatpay = await envelope<{ pay_credential: { code_url: string } }>(
    await signedFetch(api, dev, 'POST', '/api/v1/pay/unified-order', {
      json: {
        merchant_order_no: 'WX-START-1',
        channel_code: 'wechatpay',
        merchant_id: 'TEA-1',
        pay_method: 'qr_code',
        amount: 100,
        subject: 'Tea',
        notify_url: 'http://127.0.0.1:9/hook',
      },
    }),
  );
  expect(wechatpay.code).toBe('success');
  expect(wechatpay.data!.pay_credential.code_url).toMatch(
    `http://127.0.0.1:${ports.api}/wechatpay/checkout/`,
  );

  // Without an Alipay app, the offline Alipay gateway is mounted and its keys kept; an Alipay order
  // goes through the whole stack with the settings npm start gave the API and the worker.
  const alipayKeys = path.join(dataDir, 'alipay-sandbox', 'alipay-sandbox-keys.json');
  expect(fs.statSync(alipayKeys).mode & 0o777).toBe(0o600);
  const { appId } = JSON.parse(fs.readFileSync(alipayKeys, 'utf8')) as { appId: string };
  expect(first.stderr()).toContain(
    `Alipay        offline gateway at http://127.0.0.1:${ports.api}/alipay/gateway.do (app_id ${appId})`,
  );
  const alipay = await envelope<{ trade_no: string; pay_credential: { qr_code: string } }>(
    await signedFetch(api, dev, 'POST', '/api/v1/pay/unified-order', {
      json: {
        merchant_order_no: 'ALI-START-1',
        channel_code: 'alipay',
        pay_method: 'qr_code',
        amount: 100,
        subject: 'Tea',
        notify_url: 'http://127.0.0.1:9/hook',
      },
    }),
  );
  expect(alipay.code).toBe('success');
  const paid = await fetch(alipay.data!.pay_credential.qr_code, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"result":"success"}',
  });
  expect(paid.status).toBe(200);
  await until('the Alipay order paid', async () => {
    const q = await envelope<{ status: string }>(
      await signedFetch(api, dev, 'GET', `/api/v1/pay/query/${alipay.data!.trade_no}`),
    );
    return q.data?.status === 'paid' ? true : undefined;
  });

  const tree = descendants(first.child.pid!);
  // postgres (wrapper + server), temporal, worker, api at least.
  expect(tree.length).toBeGreaterThanOrEqual(5);
  // Nothing is left running once durapay has exited: it waits for what it started.
  expect(await ctrlC(first.child)).toBe(0);
  expect(tree.filter(running)).toEqual([]);
  expect(first.stderr()).toContain('Stopped.');

  const second = await startOnce(ports);
  try {
    expect(second.stderr()).toContain('0 migration(s) applied');
    expect(second.stderr()).toMatch(/Dev app\s+app_[a-z2-7]{16} \(credentials in /);
    expect(second.stderr()).not.toContain('secrets are shown this once');
    expect(second.stderr()).toContain(`(sp_mchid ${spMchid})`);
    expect((await fetch(`${api}/readyz`)).status).toBe(200);
    process.stderr.write(
      `[e2e] first start ${first.seconds.toFixed(1)}s, second start ${second.seconds.toFixed(1)}s\n`,
    );
  } finally {
    const tree2 = descendants(second.child.pid!);
    expect(await ctrlC(second.child)).toBe(0);
    expect(tree2.filter(running)).toEqual([]);
  }
});
