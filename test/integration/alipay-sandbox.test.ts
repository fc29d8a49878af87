// Longer than 300 lines: the gateway's whole API, each method, refusal and injected fault with a
// test of its own, sharing the client, the notification receiver and the buyer at the top.
/**
 * The offline Alipay gateway driven by alipay-sdk alone, over real HTTP, with the SDK's request
 * signing and answer verification on: every answer below passed the SDK's check of its sign
 * against the Alipay public key, or the call would have thrown. Notifications land on a local
 * receiver and are checked with the SDK's checkNotifySign. No Temporal, no database: an Express
 * app with the router on an ephemeral port.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AlipayFormData, AlipaySdk } from 'alipay-sdk';
import express from 'express';
import {
  NOTIFY_RETRY_DELAYS_MS,
  alipaySettings,
  createAlipaySandbox,
  generateAlipaySandboxKeys,
  loadOrCreateAlipaySandboxKeys,
  type AlipaySandbox,
  type AlipaySandboxKeys,
} from '../../sandbox/alipay';
import { RecordedBackground } from '../support/background';

jest.setTimeout(30_000);

/** Every delay at 1/2000: a retry after 120 ms instead of 4 min, a trade's 1m timeout in 30 ms. */
const TIME_SCALE = 0.0005;
/** A `[sandbox:slow]` refund's processing: 300 ms at TIME_SCALE. */
const REFUND_DELAY_MS = 600_000;
/** How long a test waits for a notification or a finished refund before it fails. */
const WAIT_MS = 5_000;
const BEIJING_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(64, 7),
]);

type Answer = Record<string, unknown> & { code: string; msg: string; sub_code?: string; sub_msg?: string };

/**
 * A merchant's notify_url: answers `success`, or for a trade given a script the next text of it
 * (the last repeats), so that a straggler of another test never takes a script's answer.
 */
class NotifyReceiver {
  readonly received: { at: number; body: string; fields: Record<string, string> }[] = [];
  private readonly scripts = new Map<string, string[]>();
  private server?: http.Server;
  url = '';

  answer(outTradeNo: string, ...texts: string[]): void {
    this.scripts.set(outTradeNo, texts);
  }

  for(outTradeNo: string) {
    return this.received.filter((r) => r.fields.out_trade_no === outTradeNo);
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const fields = Object.fromEntries(new URLSearchParams(body));
        this.received.push({ at: Date.now(), body, fields });
        const script = this.scripts.get(fields.out_trade_no ?? '') ?? ['success'];
        const text = script.length > 1 ? script.shift()! : script[0]!;
        res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/notify/alipay`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

let keys: AlipaySandboxKeys;
let sandbox: AlipaySandbox;
let server: http.Server;
let base = '';
let alipay: AlipaySdk;
const receiver = new NotifyReceiver();
let sequence = 0;

function client(
  privateKey = keys.appPrivateKeyPem,
  alipayPublicKey = keys.alipayPublicKeyPem,
  appId = keys.appId,
) {
  return new AlipaySdk({
    appId,
    privateKey,
    keyType: 'PKCS8',
    alipayPublicKey,
    gateway: `${base}/gateway.do`,
    camelcase: false,
  });
}

/**
 * Beijing time, as Alipay reads `timestamp`. The SDK formats the machine's local time, which is
 * wrong on a machine that is not on UTC+8 (this one may be UTC): the tests pass it themselves.
 */
function timestamp(offsetMs = 0): string {
  const iso = new Date(Date.now() + offsetMs + 8 * 3_600_000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

async function exec(
  method: string,
  bizContent: Record<string, unknown>,
  extra: Record<string, string> = {},
  sdk = alipay,
): Promise<Answer> {
  const params = { bizContent, timestamp: timestamp(), ...extra };
  return (await sdk.exec(method, params, { validateSign: true })) as unknown as Answer;
}

const outTradeNo = () => `P${Date.now()}${sequence++}`;

function order(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { out_trade_no: outTradeNo(), total_amount: '1.00', subject: 'durapay sandbox test', ...overrides };
}

const precreate = (biz: Record<string, unknown>) =>
  exec('alipay.trade.precreate', biz, { notify_url: receiver.url });
const query = (no: string) => exec('alipay.trade.query', { out_trade_no: no });
const refund = (biz: Record<string, unknown>) => exec('alipay.trade.refund', biz);
const refundQuery = (no: string, requestNo: string) =>
  exec('alipay.trade.fastpay.refund.query', { out_trade_no: no, out_request_no: requestNo });

/** The buyer at the cashier, as a script: POST {"result"} to the cashier URL. */
async function buyer(cashierUrl: string, result: string) {
  const res = await fetch(cashierUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** A precreated trade paid at its cashier; its out_trade_no. */
async function paidTrade(overrides: Record<string, unknown> = {}): Promise<string> {
  const biz = order(overrides);
  const created = await precreate(biz);
  expect(created.code).toBe('10000');
  expect((await buyer(created.qr_code as string, 'success')).body.trade_status).toBe('TRADE_SUCCESS');
  return biz.out_trade_no as string;
}

/** Polls until `probe` answers a value. */
async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The notifications of a trade once `count` arrived, each checked with the SDK first. */
async function notified(no: string, count = 1) {
  const got = await until(`${count} notification(s) of ${no}`, () =>
    receiver.for(no).length >= count ? receiver.for(no) : undefined,
  );
  for (const n of got) expect(alipay.checkNotifySign(n.fields)).toBe(true);
  return got.map((n) => n.fields);
}

/** The gateway's notifications, retries and slow refunds, with what it scheduled for later. */
let background: RecordedBackground;
/** Failures of the gateway's own tasks: none may happen. */
const taskFailures: unknown[] = [];

beforeAll(async () => {
  keys = generateAlipaySandboxKeys();
  await receiver.start();
  const app = express();
  app.disable('x-powered-by');
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/alipay`;
  background = new RecordedBackground((err) => taskFailures.push(err));
  sandbox = createAlipaySandbox({
    keys,
    publicBaseUrl: base,
    timeScale: TIME_SCALE,
    refundDelayMs: REFUND_DELAY_MS,
    background,
  });
  // Mounted below a prefix, as in a bigger app.
  app.use('/alipay', sandbox.router);
  alipay = client();
});

afterEach(() => {
  expect(taskFailures.splice(0)).toEqual([]);
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await receiver.stop();
});

describe('signatures and common parameters', () => {
  test('when a trade is precreated, then the verified answer names its cashier as qr_code', async () => {
    const biz = order();
    const res = await precreate(biz);
    expect(res).toMatchObject({ code: '10000', msg: 'Success', out_trade_no: biz.out_trade_no });
    expect(res.qr_code).toMatch(new RegExp(`^${base}/cashier/\\d{28}$`));
    expect(sandbox.requests('alipay.trade.precreate')).toBeGreaterThan(0);
  });

  test('when a request is signed with another private key, then the answer is a signed isv.invalid-signature', async () => {
    const stranger = client(generateAlipaySandboxKeys().appPrivateKeyPem);
    const res = await exec('alipay.trade.precreate', order(), {}, stranger);
    expect(res).toMatchObject({ code: '40002', msg: 'Invalid Arguments', sub_code: 'isv.invalid-signature' });
  });

  test('when the answer is checked against another Alipay public key, then the SDK refuses it', async () => {
    const misled = client(keys.appPrivateKeyPem, generateAlipaySandboxKeys().alipayPublicKeyPem);
    await expect(exec('alipay.trade.query', { out_trade_no: 'P0' }, {}, misled)).rejects.toThrow(/验签失败/);
  });

  test('when the app_id is not the gateway’s, then the answer is isv.invalid-app-id', async () => {
    const other = client(keys.appPrivateKeyPem, keys.alipayPublicKeyPem, '2021000000000000');
    expect((await exec('alipay.trade.query', { out_trade_no: 'P0' }, {}, other)).sub_code).toBe(
      'isv.invalid-app-id',
    );
  });

  test('when the timestamp is 8 hours behind Beijing time, then the answer is isv.invalid-timestamp', async () => {
    const res = await exec(
      'alipay.trade.query',
      { out_trade_no: 'P0' },
      { timestamp: timestamp(-8 * 3_600_000) },
    );
    expect(res).toMatchObject({ code: '40002', sub_code: 'isv.invalid-timestamp' });
    expect(res.sub_msg).toMatch(/UTC\+8/);
  });

  test('when the method does not exist, then the signed answer is isv.invalid-method', async () => {
    expect(await exec('alipay.trade.teleport', { out_trade_no: 'P0' })).toMatchObject({
      code: '40002',
      sub_code: 'isv.invalid-method',
    });
  });

  test('when subject is missing or total_amount malformed or out of range, then the answer names the field', async () => {
    const missing = await precreate({ out_trade_no: outTradeNo(), total_amount: '1.00' });
    expect(missing).toMatchObject({ code: '40002', sub_code: 'isv.missing-parameter' });
    expect(missing.sub_msg).toMatch(/subject/);
    const malformed = await precreate(order({ total_amount: '1' }));
    expect(malformed).toMatchObject({ code: '40002', sub_code: 'isv.invalid-parameter' });
    expect(malformed.sub_msg).toMatch(/total_amount/);
    expect((await precreate(order({ total_amount: '0.00' }))).sub_code).toBe('ACQ.TOTAL_FEE_EXCEED');
  });

  test('when the subject injects [sandbox:unavailable], then the answer is a signed 20000 ACQ.SYSTEM_ERROR', async () => {
    expect(await precreate(order({ subject: 'x [sandbox:unavailable]' }))).toMatchObject({
      code: '20000',
      msg: 'Service Currently Unavailable',
      sub_code: 'ACQ.SYSTEM_ERROR',
    });
  });
});

describe('paying', () => {
  test('when a precreated trade is paid at its cashier, then the query reads TRADE_SUCCESS and a verified notification arrives', async () => {
    const biz = order({ total_amount: '12.34' });
    const created = await precreate(biz);
    const no = biz.out_trade_no as string;
    expect((await query(no)).sub_code).toBe('ACQ.TRADE_NOT_EXIST');
    expect(await buyer(created.qr_code as string, 'success')).toMatchObject({
      status: 200,
      body: { trade_status: 'TRADE_SUCCESS', out_trade_no: no },
    });
    const paid = await query(no);
    expect(paid).toMatchObject({
      code: '10000',
      out_trade_no: no,
      trade_status: 'TRADE_SUCCESS',
      total_amount: '12.34',
      receipt_amount: '12.34',
      buyer_pay_amount: '12.34',
    });
    expect(paid.send_pay_date).toMatch(BEIJING_TIME);
    expect(paid.buyer_user_id).toMatch(/^2088\d{12}$/);
    const [notice] = await notified(no);
    expect(notice).toMatchObject({
      notify_type: 'trade_status_sync',
      app_id: keys.appId,
      seller_id: keys.sellerId,
      trade_no: paid.trade_no,
      trade_status: 'TRADE_SUCCESS',
      total_amount: '12.34',
      buyer_id: paid.buyer_user_id,
      sign_type: 'RSA2',
    });
    expect(notice!.gmt_payment).toBe(paid.send_pay_date);
    await until('the acknowledgement', () => (sandbox.notifications(no).acknowledged ? true : undefined));
  });

  test('when the cashier is opened, then it shows the escaped subject under a strict CSP and the trade exists', async () => {
    const biz = order({ subject: '<b>tea & "cake"</b>', total_amount: '8.80' });
    const created = await precreate(biz);
    const res = await fetch(created.qr_code as string);
    const html = await res.text();
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(html).toContain('&#60;b&#62;tea &#38; &#34;cake&#34;&#60;/b&#62;');
    expect(html).not.toContain('<b>tea');
    expect(html).toContain('¥8.80');
    expect((await query(biz.out_trade_no as string)).trade_status).toBe('WAIT_BUYER_PAY');
    expect((await buyer(created.qr_code as string, 'fail')).body.trade_status).toBe('WAIT_BUYER_PAY');
  });

  test('when a page payment URL is opened, then it redirects to the cashier and the trade exists only from then', async () => {
    const biz = order({ product_code: 'FAST_INSTANT_TRADE_PAY' });
    const no = biz.out_trade_no as string;
    const url = alipay.pageExecute('alipay.trade.page.pay', 'GET', {
      bizContent: biz,
      notify_url: receiver.url,
      return_url: 'http://merchant.example/return',
      timestamp: timestamp(),
    });
    expect(url.startsWith(`${base}/gateway.do?`)).toBe(true);
    expect((await query(no)).sub_code).toBe('ACQ.TRADE_NOT_EXIST');
    const first = await fetch(url, { redirect: 'manual' });
    expect(first.status).toBe(302);
    const cashier = first.headers.get('location')!;
    expect(cashier).toMatch(new RegExp(`^${base}/cashier/\\d{28}$`));
    expect((await fetch(url, { redirect: 'manual' })).headers.get('location')).toBe(cashier);
    expect(await query(no)).toMatchObject({ code: '10000', trade_status: 'WAIT_BUYER_PAY' });
    expect(sandbox.trade(no)).toMatchObject({
      method: 'alipay.trade.page.pay',
      exists: true,
      product_code: 'FAST_INSTANT_TRADE_PAY',
      return_url: 'http://merchant.example/return',
    });
    // The buyer pays on the page: back to the merchant's return_url with signed fields.
    const paid = await fetch(cashier, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: 'result=success',
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    const back = new URL(paid.headers.get('location')!);
    expect(back.origin + back.pathname).toBe('http://merchant.example/return');
    const fields = Object.fromEntries(back.searchParams);
    expect(fields).toMatchObject({
      method: 'alipay.trade.page.pay.return',
      out_trade_no: no,
      total_amount: '1.00',
    });
    expect(alipay.checkNotifySign(fields)).toBe(true);
  });

  test('when the form of a wap payment is posted, then it redirects to the cashier as its URL would', async () => {
    const biz = order({ product_code: 'QUICK_WAP_WAY' });
    const html = alipay.pageExecute('alipay.trade.wap.pay', 'POST', {
      bizContent: biz,
      timestamp: timestamp(),
    });
    const action = /action="([^"]+)"/.exec(html)![1]!;
    const inputs = [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map(
      ([, name, value]) => [name!, value!.replaceAll('&quot;', '"')] as [string, string],
    );
    const res = await fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(inputs).toString(),
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(
      `${base}/cashier/${sandbox.trade(biz.out_trade_no as string)!.trade_no}`,
    );
  });

  test('when a page payment URL is reused with another amount, then the gateway shows an error page', async () => {
    const biz = order({ product_code: 'QUICK_WAP_WAY' });
    const open = (b: Record<string, unknown>) =>
      fetch(alipay.pageExecute('alipay.trade.wap.pay', 'GET', { bizContent: b, timestamp: timestamp() }), {
        redirect: 'manual',
      });
    expect((await open(biz)).status).toBe(302);
    const other = await open({ ...biz, total_amount: '2.00' });
    expect(other.status).toBe(400);
    expect(await other.text()).toContain('ACQ.CONTEXT_INCONSISTENT');
    const { product_code: _code, ...bare } = order();
    expect(await (await open(bare)).text()).toContain('isv.missing-parameter');
  });

  test('when the app submits its order string, then the trade exists with a cashier to pay it at', async () => {
    const biz = order({ product_code: 'QUICK_MSECURITY_PAY' });
    const orderString = alipay.sdkExecute('alipay.trade.app.pay', {
      bizContent: biz,
      notify_url: receiver.url,
      timestamp: timestamp(),
    });
    const res = await fetch(`${base}/app-pay`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: orderString,
    });
    expect(res.status).toBe(200);
    const submitted = (await res.json()) as { cashier_url: string; trade_no: string };
    expect(submitted.cashier_url).toBe(`${base}/cashier/${submitted.trade_no}`);
    expect((await buyer(submitted.cashier_url, 'success')).body.trade_status).toBe('TRADE_SUCCESS');
    expect(await query(biz.out_trade_no as string)).toMatchObject({ trade_status: 'TRADE_SUCCESS' });
    const tampered = await fetch(`${base}/app-pay`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: orderString.replace('1.00', '9.00'),
    });
    expect(tampered.status).toBe(400);
    expect(await tampered.json()).toMatchObject({ sub_code: 'isv.invalid-signature' });
  });

  test('when trade.create has no buyer, then it is isv.missing-parameter; with buyer_id the trade is paid by that buyer', async () => {
    const missing = await exec('alipay.trade.create', order());
    expect(missing).toMatchObject({ code: '40002', sub_code: 'isv.missing-parameter' });
    expect(missing.sub_msg).toMatch(/buyer_id/);
    const biz = order({ buyer_id: '2088000000000042', product_code: 'JSAPI_PAY' });
    const created = await exec('alipay.trade.create', biz, { notify_url: receiver.url });
    expect(created).toMatchObject({ code: '10000', out_trade_no: biz.out_trade_no });
    expect(await query(biz.out_trade_no as string)).toMatchObject({
      trade_no: created.trade_no,
      trade_status: 'WAIT_BUYER_PAY',
    });
    await buyer(`${base}/cashier/${created.trade_no as string}`, 'success');
    expect(await query(biz.out_trade_no as string)).toMatchObject({
      trade_status: 'TRADE_SUCCESS',
      buyer_user_id: '2088000000000042',
    });
  });

  test('when the same out_trade_no is precreated again, then the same code comes back, and with another amount it is refused', async () => {
    const biz = order();
    const first = await precreate(biz);
    expect((await precreate(biz)).qr_code).toBe(first.qr_code);
    expect((await precreate({ ...biz, total_amount: '3.00' })).sub_code).toBe('ACQ.CONTEXT_INCONSISTENT');
  });

  test('when an unpaid trade is closed, then it reads TRADE_CLOSED, is notified and can no longer be paid', async () => {
    const biz = order({ buyer_id: '2088000000000043' });
    const created = await exec('alipay.trade.create', biz, { notify_url: receiver.url });
    const no = biz.out_trade_no as string;
    expect(await exec('alipay.trade.close', { out_trade_no: no })).toMatchObject({
      code: '10000',
      trade_no: created.trade_no,
      out_trade_no: no,
    });
    expect((await query(no)).trade_status).toBe('TRADE_CLOSED');
    const [notice] = await notified(no);
    expect(notice).toMatchObject({ trade_status: 'TRADE_CLOSED' });
    expect(notice!.gmt_close).toMatch(BEIJING_TIME);
    const late = await buyer(`${base}/cashier/${created.trade_no as string}`, 'success');
    expect(late.status).toBe(409);
    expect((await precreate(biz)).sub_code).toBe('ACQ.TRADE_HAS_CLOSE');
  });

  test('when a paid or unknown trade is closed, then the answer is ACQ.TRADE_STATUS_ERROR or ACQ.TRADE_NOT_EXIST', async () => {
    const no = await paidTrade();
    expect((await exec('alipay.trade.close', { out_trade_no: no })).sub_code).toBe('ACQ.TRADE_STATUS_ERROR');
    expect((await exec('alipay.trade.close', { out_trade_no: 'P404' })).sub_code).toBe('ACQ.TRADE_NOT_EXIST');
  });

  test('when a created trade passes its timeout_express, then it reads TRADE_CLOSED and TRADE_CLOSED is notified', async () => {
    const biz = order({ buyer_id: '2088000000000044', timeout_express: '1m' });
    await exec('alipay.trade.create', biz, { notify_url: receiver.url });
    const [notice] = await notified(biz.out_trade_no as string);
    expect(notice!.trade_status).toBe('TRADE_CLOSED');
    expect((await query(biz.out_trade_no as string)).trade_status).toBe('TRADE_CLOSED');
  });
});

describe('refunds', () => {
  test('when a paid trade is refunded in part and then in full, then each is at once and the trade ends TRADE_CLOSED', async () => {
    const no = await paidTrade();
    await notified(no);
    const part = await refund({ out_trade_no: no, refund_amount: '0.30', out_request_no: 'R1' });
    expect(part).toMatchObject({ code: '10000', out_trade_no: no, fund_change: 'Y', refund_fee: '0.30' });
    expect(part.gmt_refund_pay).toMatch(BEIJING_TIME);
    expect((await query(no)).trade_status).toBe('TRADE_SUCCESS');
    const rest = await refund({ out_trade_no: no, refund_amount: '0.70', out_request_no: 'R2' });
    expect(rest).toMatchObject({ fund_change: 'Y', refund_fee: '1.00' });
    expect((await query(no)).trade_status).toBe('TRADE_CLOSED');
    const notices = await notified(no, 3);
    expect(notices[1]).toMatchObject({ out_biz_no: 'R1', refund_fee: '0.30', trade_status: 'TRADE_SUCCESS' });
    expect(notices[2]).toMatchObject({ out_biz_no: 'R2', refund_fee: '1.00', trade_status: 'TRADE_CLOSED' });
    expect(notices[2]!.gmt_refund).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/);
  });

  test('when a refund is repeated, then the same refund answers without moving money, and another amount is refused', async () => {
    const no = await paidTrade();
    expect(
      (await refund({ out_trade_no: no, refund_amount: '0.40', out_request_no: 'R1' })).fund_change,
    ).toBe('Y');
    expect(await refund({ out_trade_no: no, refund_amount: '0.40', out_request_no: 'R1' })).toMatchObject({
      code: '10000',
      fund_change: 'N',
      refund_fee: '0.40',
    });
    expect((await refund({ out_trade_no: no, refund_amount: '0.50', out_request_no: 'R1' })).sub_code).toBe(
      'ACQ.DISCORDANT_REPEAT_REQUEST',
    );
    expect(sandbox.trade(no)!.refunds).toHaveLength(1);
  });

  test('when a refund asks for more than remains or the trade is unpaid, then it is refused', async () => {
    const no = await paidTrade();
    await refund({ out_trade_no: no, refund_amount: '0.60', out_request_no: 'R1' });
    expect((await refund({ out_trade_no: no, refund_amount: '0.41', out_request_no: 'R2' })).sub_code).toBe(
      'ACQ.REFUND_AMT_NOT_EQUAL_TOTAL',
    );
    const unpaid = order();
    await precreate(unpaid);
    await fetch((await precreate(unpaid)).qr_code as string);
    expect(
      (await refund({ out_trade_no: unpaid.out_trade_no, refund_amount: '0.10', out_request_no: 'R1' }))
        .sub_code,
    ).toBe('ACQ.TRADE_STATUS_ERROR');
  });

  test('when a refund is queried, then a done one reads REFUND_SUCCESS and an unknown one has no refund fields', async () => {
    const no = await paidTrade();
    await refund({
      out_trade_no: no,
      refund_amount: '0.25',
      out_request_no: 'R1',
      refund_reason: 'returned',
    });
    const found = await refundQuery(no, 'R1');
    expect(found).toMatchObject({
      code: '10000',
      out_trade_no: no,
      out_request_no: 'R1',
      total_amount: '1.00',
      refund_amount: '0.25',
      refund_status: 'REFUND_SUCCESS',
    });
    expect(found.gmt_refund_pay).toMatch(BEIJING_TIME);
    const missing = await refundQuery(no, 'R9');
    expect(missing.code).toBe('10000');
    expect(missing).not.toHaveProperty('refund_amount');
    expect(missing).not.toHaveProperty('out_request_no');
  });

  test('when the refund reason injects [sandbox:refuse], then it is ACQ.SELLER_BALANCE_NOT_ENOUGH and no refund exists', async () => {
    const no = await paidTrade();
    const res = await refund({
      out_trade_no: no,
      refund_amount: '0.10',
      out_request_no: 'R1',
      refund_reason: '[sandbox:refuse]',
    });
    expect(res).toMatchObject({
      code: '40004',
      msg: 'Business Failed',
      sub_code: 'ACQ.SELLER_BALANCE_NOT_ENOUGH',
    });
    expect(await refundQuery(no, 'R1')).not.toHaveProperty('refund_amount');
  });

  test('when the refund reason injects [sandbox:slow], then it is taken without moving money and done a little later', async () => {
    const no = await paidTrade();
    const res = await refund({
      out_trade_no: no,
      refund_amount: '1.00',
      out_request_no: 'R1',
      refund_reason: '[sandbox:slow]',
    });
    expect(res).toMatchObject({ code: '10000', fund_change: 'N', refund_fee: '0.00' });
    const processing = await refundQuery(no, 'R1');
    expect(processing).toMatchObject({ refund_amount: '1.00' });
    expect(processing).not.toHaveProperty('refund_status');
    await until('the slow refund', async () =>
      (await refundQuery(no, 'R1')).refund_status === 'REFUND_SUCCESS' ? true : undefined,
    );
    expect((await query(no)).trade_status).toBe('TRADE_CLOSED');
    const notices = await notified(no, 2);
    expect(notices[1]).toMatchObject({ out_biz_no: 'R1', refund_fee: '1.00' });
  });
});

describe('notifications', () => {
  test('when notify_url answers other than success, then the same notification is sent again, after Alipay’s first gap, until it does', async () => {
    const no = outTradeNo();
    receiver.answer(no, 'fail', ' success \n');
    await paidTrade({ out_trade_no: no });
    await sandbox.idle(no);
    const [first, second] = await notified(no, 2);
    expect(second).toEqual(first);
    const history = sandbox.notifications(no);
    expect(history).toMatchObject({ sent: 2, acknowledged: true });
    expect(receiver.for(no)).toHaveLength(2);
    // At once, then the first gap of Alipay's rhythm at TIME_SCALE.
    expect(background.delaysFor(no)).toEqual([0, NOTIFY_RETRY_DELAYS_MS[0]! * TIME_SCALE]);
  });

  test('when the subject injects [sandbox:notify-drop], then no notification is sent', async () => {
    const no = await paidTrade({ subject: 'dropped [sandbox:notify-drop]' });
    await sandbox.idle(no);
    expect(receiver.for(no)).toHaveLength(0);
    expect(sandbox.notifications(no)).toEqual({ sent: 0, acknowledged: false, bodies: [] });
  });

  test('when the subject injects [sandbox:notify-duplicate], then the notification arrives twice with one notify_id', async () => {
    const no = await paidTrade({ subject: 'twice [sandbox:notify-duplicate]' });
    await sandbox.idle(no);
    expect(receiver.for(no)).toHaveLength(2);
    const [first, second] = await notified(no, 2);
    expect(second!.notify_id).toBe(first!.notify_id);
  });

  test('when the subject injects [sandbox:notify-late], then the first notification is scheduled after the first retry delay, and arrives', async () => {
    const no = await paidTrade({ subject: 'late [sandbox:notify-late]' });
    expect(background.delaysFor(no)).toEqual([NOTIFY_RETRY_DELAYS_MS[0]! * TIME_SCALE]);
    await sandbox.idle(no);
    expect(receiver.for(no)).toHaveLength(1);
    expect(alipay.checkNotifySign(receiver.for(no)[0]!.fields)).toBe(true);
  });
});

describe('royalty', () => {
  const receiverId = '2088000000000777';

  test('when a receiver is bound and a paid trade settled to it, then the settle query reads SUCCESS', async () => {
    const bound = await exec('alipay.trade.royalty.relation.bind', {
      out_request_no: `bind_${sequence++}`,
      receiver_list: [{ type: 'userId', account: receiverId, name: 'Receiver', memo: 'partner' }],
    });
    expect(bound).toMatchObject({ code: '10000', result_code: 'SUCCESS' });
    expect(sandbox.relations()).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'userId', account: receiverId })]),
    );
    const tradeNo = (await query(await paidTrade())).trade_no as string;
    const settle = {
      out_request_no: `settle_${sequence++}`,
      trade_no: tradeNo,
      royalty_parameters: [{ trans_in_type: 'userId', trans_in: receiverId, amount: '0.30', desc: 'fee' }],
    };
    const settled = await exec('alipay.trade.order.settle', settle);
    expect(settled).toMatchObject({ code: '10000', trade_no: tradeNo });
    expect((await exec('alipay.trade.order.settle', settle)).settle_no).toBe(settled.settle_no);
    const found = await exec('alipay.trade.order.settle.query', {
      out_request_no: settle.out_request_no,
      trade_no: tradeNo,
    });
    expect(found).toMatchObject({
      code: '10000',
      out_request_no: settle.out_request_no,
      royalty_detail_list: [
        { operation_type: 'transfer', trans_in: receiverId, amount: '0.30', state: 'SUCCESS' },
      ],
    });
    expect(sandbox.settlements(tradeNo)).toEqual([
      expect.objectContaining({
        settle_no: settled.settle_no,
        royalty_parameters: settle.royalty_parameters,
      }),
    ]);
    const over = await exec('alipay.trade.order.settle', {
      ...settle,
      out_request_no: `settle_${sequence++}`,
      royalty_parameters: [{ trans_in_type: 'userId', trans_in: receiverId, amount: '0.71' }],
    });
    expect(over.sub_code).toBe('ACQ.ALLOC_AMOUNT_VALIDATE_ERROR');
  });

  test('when a settle names an unbound receiver or a bind a bad type, then each is refused', async () => {
    const tradeNo = (await query(await paidTrade())).trade_no as string;
    const unbound = await exec('alipay.trade.order.settle', {
      out_request_no: `settle_${sequence++}`,
      trade_no: tradeNo,
      royalty_parameters: [{ trans_in_type: 'userId', trans_in: '2088000000000999', amount: '0.10' }],
    });
    expect(unbound).toMatchObject({ code: '40004', sub_code: 'ACQ.ROYALTY_RECEIVER_INVALID' });
    const badType = await exec('alipay.trade.royalty.relation.bind', {
      out_request_no: `bind_${sequence++}`,
      receiver_list: [{ type: 'bankCard', account: '6222' }],
    });
    expect(badType).toMatchObject({ code: '40002', sub_code: 'isv.invalid-parameter' });
  });

  test('when a receiver’s desc injects [sandbox:settle-fail], then that detail ends FAIL', async () => {
    await exec('alipay.trade.royalty.relation.bind', {
      out_request_no: `bind_${sequence++}`,
      receiver_list: [{ type: 'loginName', account: 'partner@example.com', name: 'Partner' }],
    });
    const tradeNo = (await query(await paidTrade())).trade_no as string;
    const settled = await exec('alipay.trade.order.settle', {
      out_request_no: `settle_${sequence++}`,
      trade_no: tradeNo,
      royalty_parameters: [
        {
          trans_in_type: 'loginName',
          trans_in: 'partner@example.com',
          amount: '0.10',
          desc: '[sandbox:settle-fail]',
        },
      ],
    });
    const found = await exec('alipay.trade.order.settle.query', { settle_no: settled.settle_no });
    expect(found.royalty_detail_list).toEqual([
      expect.objectContaining({ state: 'FAIL', error_code: expect.any(String) as unknown }),
    ]);
  });
});

describe('royalty returned with refunds, and unfreezes', () => {
  const receiverId = '2088000000000778';

  /** A paid trade of 1.00 settled 0.30 to the receiver; its out_trade_no and trade_no. */
  async function settledTrade(): Promise<{ no: string; tradeNo: string }> {
    await exec('alipay.trade.royalty.relation.bind', {
      out_request_no: `bind_${sequence++}`,
      receiver_list: [{ type: 'userId', account: receiverId, name: 'Receiver' }],
    });
    const no = await paidTrade();
    const tradeNo = (await query(no)).trade_no as string;
    const settled = await exec('alipay.trade.order.settle', {
      out_request_no: `settle_${sequence++}`,
      trade_no: tradeNo,
      royalty_parameters: [{ trans_in_type: 'userId', trans_in: receiverId, amount: '0.30' }],
    });
    expect(settled.code).toBe('10000');
    return { no, tradeNo };
  }

  // The shape of Alipay's 直付通 refund guide (退款 & 退分账): royalty_type transfer, the receiver
  // as trans_out, the amount it gives back.
  const royaltyReturn = (amount: string) => ({
    royalty_type: 'transfer',
    trans_out_type: 'userId',
    trans_out: receiverId,
    amount,
  });

  test('when a refund names refund_royalty_parameters, then the receiver gives back that much, recorded once, and no more than it received', async () => {
    const { no, tradeNo } = await settledTrade();
    const first = {
      out_trade_no: no,
      out_request_no: `refund_${sequence++}`,
      refund_amount: '0.80',
      refund_royalty_parameters: [royaltyReturn('0.10')],
    };
    expect(await refund(first)).toMatchObject({ code: '10000', fund_change: 'Y' });
    // A repeat is the same refund: nothing more is taken back.
    expect(await refund(first)).toMatchObject({ code: '10000' });
    expect(sandbox.royaltyReturns(tradeNo)).toEqual([
      expect.objectContaining({
        out_request_no: first.out_request_no,
        trans_out_type: 'userId',
        trans_out: receiverId,
        amount: '0.10',
      }),
    ]);
    const over = await refund({
      out_trade_no: no,
      out_request_no: `refund_${sequence++}`,
      refund_amount: '0.20',
      refund_royalty_parameters: [royaltyReturn('0.21')],
    });
    expect(over).toMatchObject({ code: '40004', sub_code: 'ACQ.INVALID_PARAMETER' });
    expect(over.sub_msg).toMatch(/0\.20 of 0\.30 left/);
    // Refused whole: neither the refund nor the return was taken.
    expect(sandbox.trade(no)!.refunds).toHaveLength(1);
    expect(sandbox.royaltyReturns(tradeNo)).toHaveLength(1);
  });

  test('when a refund takes royalty back from an account its trade never settled to, then it is refused', async () => {
    const { no } = await settledTrade();
    const res = await refund({
      out_trade_no: no,
      out_request_no: `refund_${sequence++}`,
      refund_amount: '0.10',
      refund_royalty_parameters: [{ ...royaltyReturn('0.10'), trans_out: '2088000000000999' }],
    });
    expect(res).toMatchObject({ code: '40004', sub_code: 'ACQ.INVALID_PARAMETER' });
    expect(sandbox.trade(no)!.refunds).toEqual([]);
  });

  test('when a paid trade is settled with royalty_finish alone, then its frozen funds are released once and nothing more can be settled', async () => {
    const no = await paidTrade();
    const tradeNo = (await query(no)).trade_no as string;
    const unfreeze = {
      out_request_no: `unfreeze_${sequence++}`,
      trade_no: tradeNo,
      extend_params: { royalty_finish: 'true' },
    };
    const done = await exec('alipay.trade.order.settle', unfreeze);
    expect(done).toMatchObject({ code: '10000', trade_no: tradeNo });
    expect((await exec('alipay.trade.order.settle', unfreeze)).settle_no).toBe(done.settle_no);
    expect(sandbox.royaltyUnfreeze(tradeNo)).toMatchObject({
      out_request_no: unfreeze.out_request_no,
      settle_no: done.settle_no,
    });
    const later = await exec('alipay.trade.order.settle', {
      out_request_no: `settle_${sequence++}`,
      trade_no: tradeNo,
      royalty_parameters: [{ trans_in_type: 'userId', trans_in: receiverId, amount: '0.10' }],
    });
    expect(later).toMatchObject({ code: '40004', sub_code: 'ACQ.TRADE_SETTLE_ERROR' });
    const neither = await exec('alipay.trade.order.settle', {
      out_request_no: `settle_${sequence++}`,
      trade_no: tradeNo,
    });
    expect(neither).toMatchObject({ code: '40002', sub_code: 'isv.missing-parameter' });
  });
});

describe('onboarding (直付通)', () => {
  async function upload(content: Buffer, type = 'png'): Promise<Answer> {
    const form = new AlipayFormData();
    form.addField('image_type', type);
    form.addField('timestamp', timestamp());
    form.addFile('image_content', `cert.${type}`, content);
    const answer = await alipay.exec(
      'ant.merchant.expand.indirect.image.upload',
      {},
      { formData: form, validateSign: true },
    );
    return answer as unknown as Answer;
  }

  function application(imageId: string, overrides: Record<string, unknown> = {}) {
    return {
      external_id: `apl_${Date.now()}${sequence++}`,
      name: '杭州示例科技有限公司',
      alias_name: '示例科技',
      merchant_type: '01',
      mcc: 'B0002',
      cert_no: '91330100MA00000000',
      cert_type: '201',
      cert_image: imageId,
      legal_name: '张三',
      legal_cert_no: '330100199001010000',
      contact_infos: [{ name: '李四', mobile: '13800000000' }],
      service: ['当面付', 'app支付'],
      sign_time_with_isv: '2026-11-01',
      alipay_logon_id: 'merchant@example.com',
      default_settle_rule: {
        default_settle_type: 'alipayAccount',
        default_settle_target: 'merchant@example.com',
      },
      ...overrides,
    };
  }

  const zftQuery = (externalId: string) =>
    exec('ant.merchant.expand.indirect.zftorder.query', { external_id: externalId });

  test('when an image is uploaded and an application made, then its query moves 031 → 99 with an smid', async () => {
    const uploaded = await upload(PNG);
    expect(uploaded).toMatchObject({ code: '10000' });
    const body = application(uploaded.image_id as string);
    const created = await exec('ant.merchant.expand.indirect.zft.create', body);
    expect(created).toMatchObject({ code: '10000', order_id: expect.stringMatching(/^\d+$/) as unknown });
    expect((await exec('ant.merchant.expand.indirect.zft.create', body)).order_id).toBe(created.order_id);
    const first = await zftQuery(body.external_id);
    expect(first.orders).toEqual([
      expect.objectContaining({ order_id: created.order_id, external_id: body.external_id, status: '031' }),
    ]);
    const second = await zftQuery(body.external_id);
    expect(second.orders).toEqual([
      expect.objectContaining({
        status: '99',
        fk_audit: 'PASS',
        kz_audit: 'PASS',
        sub_confirm: 'FINISH',
        smid: expect.stringMatching(/^2088\d{12}$/) as unknown,
      }),
    ]);
    expect(sandbox.zftOrder(body.external_id)).toMatchObject({
      ...body,
      status: '99',
      order_id: created.order_id,
    });
  });

  test('when the name injects [sandbox:rejected], then the application moves 031 → -1 with a reason', async () => {
    const imageId = (await upload(PNG)).image_id as string;
    const body = application(imageId, { name: '示例 [sandbox:rejected]' });
    await exec('ant.merchant.expand.indirect.zft.create', body);
    expect(((await zftQuery(body.external_id)).orders as { status: string }[])[0]!.status).toBe('031');
    expect((await zftQuery(body.external_id)).orders).toEqual([
      expect.objectContaining({ status: '-1', fk_audit: 'REJECT', reason: expect.any(String) as unknown }),
    ]);
  });

  test('when an image is not what image_type says or an application names an unknown image, then each is refused', async () => {
    expect((await upload(Buffer.from('GIF89a not a png'))).sub_code).toBe('isv.invalid-file-extension');
    const created = await exec('ant.merchant.expand.indirect.zft.create', application('no-such-image'));
    expect(created).toMatchObject({ code: '40002', sub_code: 'isv.invalid-parameter' });
    expect(created.sub_msg).toMatch(/cert_image/);
    const unknown = await zftQuery('apl_never_submitted');
    expect(unknown).toMatchObject({ code: '40004', sub_code: 'ORDER_NOT_EXIST' });
  });
});

describe('keys', () => {
  test('when keys are kept in a directory, then a restart loads the same keys from owner-only files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'alipay-sandbox-'));
    try {
      const made = loadOrCreateAlipaySandboxKeys(path.join(dir, 'keys'));
      expect(made.appId).toMatch(/^2021\d{12}$/);
      expect(made.sellerId).toMatch(/^2088\d{12}$/);
      expect(made.appPrivateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      expect(loadOrCreateAlipaySandboxKeys(path.join(dir, 'keys'))).toEqual(made);
      const settings = alipaySettings(
        made,
        'http://127.0.0.1:3000/alipay/gateway.do',
        path.join(dir, 'keys'),
      );
      expect(settings).toMatchObject({
        ALIPAY_APP_ID: made.appId,
        ALIPAY_SELLER_ID: made.sellerId,
        ALIPAY_GATEWAY_URL: 'http://127.0.0.1:3000/alipay/gateway.do',
      });
      for (const name of ['ALIPAY_PRIVATE_KEY_FILE', 'ALIPAY_PUBLIC_KEY_FILE']) {
        expect(fs.statSync(settings[name]!).mode & 0o777).toBe(0o600);
      }
      expect(fs.readFileSync(settings.ALIPAY_PRIVATE_KEY_FILE!, 'utf8')).toBe(made.appPrivateKeyPem);
      expect(fs.readFileSync(settings.ALIPAY_PUBLIC_KEY_FILE!, 'utf8')).toBe(made.alipayPublicKeyPem);
      expect(fs.statSync(path.join(dir, 'keys', 'alipay-sandbox-keys.json')).mode & 0o777).toBe(0o600);
      expect(alipaySettings(made, 'http://x/alipay/')).toMatchObject({
        ALIPAY_GATEWAY_URL: 'http://x/alipay/gateway.do',
        ALIPAY_PRIVATE_KEY: made.appPrivateKeyPem,
        ALIPAY_PUBLIC_KEY: made.alipayPublicKeyPem,
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
