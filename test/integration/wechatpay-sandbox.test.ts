/**
 * The offline WeChat Pay v3 sandbox driven by wechatpay-axios-plugin alone, over real HTTP, with
 * the library's response verification on: every answer below passed the library's check of
 * Wechatpay-Signature against the platform public key, or the call would have thrown. Callbacks
 * land on a local receiver and are checked with the library's own Rsa and AesGcm; a profit-sharing
 * receiver's name is sealed with the library's Rsa.encrypt.
 *
 * Longer than 300 lines: the sandbox's whole API, each endpoint, error and injected fault with a
 * test of its own, sharing the client and callback helpers at the top.
 */
import { X509Certificate, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Aes, Formatter, Rsa, Wechatpay } from 'wechatpay-axios-plugin';
import {
  createWechatpaySandbox,
  generateWechatpaySandboxKeys,
  loadOrCreateWechatpaySandboxKeys,
  wechatpaySettings,
  type WechatpaySandbox,
  type WechatpaySandboxKeys,
} from '../../sandbox/wechatpay';
import { CALLBACK_RETRY_DELAYS_MS } from '../../sandbox/wechatpay/callbacks';
import { loadConfig } from '../../src/config';
import { walletAuthCode } from '../../sandbox/wallet-buyers';
import { RecordedBackground } from '../support/background';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(30_000);

/** Every delay of the sandbox at 1 %: a retry after 1.5 s instead of 15 s, a refund in 0.3 s. */
const TIME_SCALE = 0.01;
const REFUND_DELAY_MS = 30_000;
const SUB_MCHID = '1900000109';
/** How long a test waits for a callback or a settled refund before it fails. */
const WAIT_MS = 5_000;
const RFC3339_CST = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+08:00$/;

type Kind = 'native' | 'jsapi' | 'app' | 'h5';
interface LibraryResponse {
  status: number;
  data: unknown;
  headers: unknown;
}
/**
 * The library's chain, where each property is the next path segment (`_name_` a placeholder
 * filled from the config): its d.ts types that by an index signature, which strict indexing
 * reads as possibly undefined, so the segments used here are named.
 */
type Segment =
  | 'v3'
  | 'pay'
  | 'partner'
  | 'transactions'
  | Kind
  | 'codepay'
  | 'outTradeNo'
  | '_out_trade_no_'
  | 'close'
  | 'reverse';
type SharingSegment =
  | 'profitsharing'
  | 'receivers'
  | 'add'
  | 'orders'
  | '_out_order_no_'
  | 'unfreeze'
  | 'returnOrders'
  | '_out_return_no_';
type AbnormalRefundSegment = '_refund_id_' | 'applyAbnormalRefund';
type Chain = {
  readonly [
    K in
      | Segment
      | SharingSegment
      | AbnormalRefundSegment
      | 'refund'
      | 'domestic'
      | 'refunds'
      | '_out_refund_no_'
      | 'certificates'
  ]: Chain;
} & {
  get(config: Record<string, unknown>): Promise<LibraryResponse>;
  post(data: unknown, config?: Record<string, unknown>): Promise<LibraryResponse>;
};
interface ErrorBody {
  code: string;
  message: string;
}
interface Transaction {
  sp_mchid: string;
  sub_mchid: string;
  out_trade_no: string;
  transaction_id?: string;
  trade_type: string;
  trade_state: string;
  success_time?: string;
  attach?: string;
  amount: { total: number; payer_total?: number; currency: string; payer_currency: string };
}
interface Refund {
  refund_id: string;
  out_refund_no: string;
  transaction_id: string;
  out_trade_no: string;
  status: string;
  success_time?: string;
  amount: { total: number; refund: number; payer_refund: number; discount_refund: number };
}
interface Sharing {
  sub_mchid: string;
  transaction_id: string;
  out_order_no: string;
  order_id: string;
  state: string;
  receivers: {
    amount: number;
    description: string;
    type: string;
    account: string;
    result: string;
    fail_reason?: string;
    detail_id: string;
    create_time: string;
    finish_time?: string;
  }[];
}
interface Notification {
  id: string;
  create_time: string;
  resource_type: string;
  event_type: string;
  summary: string;
  resource: {
    original_type: string;
    algorithm: string;
    ciphertext: string;
    associated_data: string;
    nonce: string;
  };
}

let keys: WechatpaySandboxKeys;
let sandbox: WechatpaySandbox;
/** The sandbox's callbacks and settlements, with what it scheduled for later. */
let background: RecordedBackground;
/** Failures of the sandbox's own tasks: none may happen. */
const taskFailures: unknown[] = [];
let server: http.Server;
let base = '';
let wxpay: Chain;
const sink = new Receiver();
let sequence = 0;

/** The library's shape of a client; `certs` is what response verification uses. */
function client(privateKey: string, certs: Record<string, string>, serial = keys.merchantSerial): Chain {
  const wechatpay = new Wechatpay({
    mchid: keys.spMchid,
    serial,
    privateKey,
    certs,
    baseURL: `${base}/`,
  });
  return wechatpay as unknown as Chain;
}

/** Answers of any status come back (and are verified by the library) instead of thrown. */
const ANY_STATUS = { validateStatus: () => true };

async function call<T>(request: Promise<LibraryResponse>) {
  const res = await request;
  return { status: res.status, data: res.data as T, headers: res.headers as Record<string, string> };
}

function tradeNo(): string {
  return `DP${Date.now()}${sequence++}`;
}

function order(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sp_appid: keys.spAppid,
    sp_mchid: keys.spMchid,
    sub_mchid: SUB_MCHID,
    description: 'durapay sandbox test',
    out_trade_no: tradeNo(),
    notify_url: sink.url,
    amount: { total: 100, currency: 'CNY' },
    ...overrides,
  };
}

const create = (kind: Kind, body: Record<string, unknown>) =>
  call<Record<string, string> & ErrorBody>(wxpay.v3.pay.partner.transactions[kind].post(body, ANY_STATUS));

const query = (outTradeNo: string) =>
  call<Transaction & ErrorBody>(
    wxpay.v3.pay.partner.transactions.outTradeNo._out_trade_no_.get({
      params: { sp_mchid: keys.spMchid, sub_mchid: SUB_MCHID },
      out_trade_no: outTradeNo,
      ...ANY_STATUS,
    }),
  );

const close = (outTradeNo: string) =>
  call<ErrorBody | ''>(
    wxpay.v3.pay.partner.transactions.outTradeNo._out_trade_no_.close.post(
      { sp_mchid: keys.spMchid, sub_mchid: SUB_MCHID },
      { out_trade_no: outTradeNo, ...ANY_STATUS },
    ),
  );

const refund = (body: Record<string, unknown>) =>
  call<Refund & ErrorBody>(
    wxpay.v3.refund.domestic.refunds.post({ sub_mchid: SUB_MCHID, ...body }, ANY_STATUS),
  );

const queryRefund = (outRefundNo: string) =>
  call<Refund & ErrorBody>(
    wxpay.v3.refund.domestic.refunds._out_refund_no_.get({
      params: { sub_mchid: SUB_MCHID },
      out_refund_no: outRefundNo,
      ...ANY_STATUS,
    }),
  );

/** Names the platform key that sealed a request's sensitive field (a receiver's name). */
const platformSerial = () => ({ 'Wechatpay-Serial': keys.platformPublicKeyId });
const seal = (text: string) => Rsa.encrypt(text, keys.platformPublicKeyPem);

const addReceiver = (body: Record<string, unknown>, headers: Record<string, string> = platformSerial()) =>
  call<Record<string, string> & ErrorBody>(
    wxpay.v3.profitsharing.receivers.add.post(
      { sub_mchid: SUB_MCHID, appid: keys.spAppid, ...body },
      { headers, ...ANY_STATUS },
    ),
  );

const share = (body: Record<string, unknown>, headers: Record<string, string> = platformSerial()) =>
  call<Sharing & ErrorBody>(
    wxpay.v3.profitsharing.orders.post(
      {
        sub_mchid: SUB_MCHID,
        appid: keys.spAppid,
        out_order_no: tradeNo(),
        unfreeze_unsplit: false,
        ...body,
      },
      { headers, ...ANY_STATUS },
    ),
  );

const querySharing = (outOrderNo: string, transactionId: string) =>
  call<Sharing & ErrorBody>(
    wxpay.v3.profitsharing.orders._out_order_no_.get({
      params: { sub_mchid: SUB_MCHID, transaction_id: transactionId },
      out_order_no: outOrderNo,
      ...ANY_STATUS,
    }),
  );

const unfreeze = (body: Record<string, unknown>) =>
  call<Sharing & ErrorBody>(
    wxpay.v3.profitsharing.orders.unfreeze.post(
      { sub_mchid: SUB_MCHID, out_order_no: tradeNo(), description: '解冻全部剩余资金', ...body },
      ANY_STATUS,
    ),
  );

interface ReturnOrder {
  sub_mchid: string;
  order_id: string;
  out_order_no: string;
  out_return_no: string;
  return_id: string;
  return_mchid: string;
  amount: number;
  description: string;
  result: string;
  fail_reason?: string;
  create_time: string;
  finish_time?: string;
}

const returnOrder = (body: Record<string, unknown>) =>
  call<ReturnOrder & ErrorBody>(
    wxpay.v3.profitsharing.returnOrders.post({ sub_mchid: SUB_MCHID, ...body }, ANY_STATUS),
  );

const queryReturnOrder = (outReturnNo: string, outOrderNo: string) =>
  call<ReturnOrder & ErrorBody>(
    wxpay.v3.profitsharing.returnOrders._out_return_no_.get({
      params: { sub_mchid: SUB_MCHID, out_order_no: outOrderNo },
      out_return_no: outReturnNo,
      ...ANY_STATUS,
    }),
  );

const applyAbnormalRefund = (
  refundId: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = platformSerial(),
) =>
  call<Refund & ErrorBody>(
    wxpay.v3.refund.domestic.refunds._refund_id_.applyAbnormalRefund.post(
      { sub_mchid: SUB_MCHID, ...body },
      { refund_id: refundId, headers, ...ANY_STATUS },
    ),
  );

/** The buyer at the checkout, as a script: POST {"result"} to the checkout URL. */
async function buyer(
  checkoutUrl: string,
  result: string,
): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(checkoutUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** A Native order paid at its checkout; its out_trade_no. */
async function paidOrder(overrides: Record<string, unknown> = {}): Promise<string> {
  const body = order(overrides);
  const created = await create('native', body);
  expect(created.status).toBe(200);
  expect((await buyer(created.data.code_url!, 'pay')).body).toEqual({ trade_state: 'SUCCESS' });
  return body.out_trade_no as string;
}

/** A paid order whose funds are frozen for sharing (or not); its transaction_id. */
async function paidTransaction(profitSharing = true): Promise<string> {
  const outTradeNo = await paidOrder({ settle_info: { profit_sharing: profitSharing } });
  return (await query(outTradeNo)).data.transaction_id!;
}

/** A personal receiver added for SUB_MCHID, fresh for each test; its type and account. */
async function personalReceiver(): Promise<{ type: string; account: string }> {
  const receiver = { type: 'PERSONAL_OPENID', account: `oRecv${tradeNo()}` };
  expect((await addReceiver({ ...receiver, relation_type: 'PARTNER' })).status).toBe(200);
  return receiver;
}

/** Checks a callback as a merchant must, with the library: signature first, then decryption. */
function openCallback(received: ReceivedRequest): { notification: Notification; plaintext: unknown } {
  const h = received.headers;
  expect(h['content-type']).toBe('application/json');
  expect(h['wechatpay-serial']).toBe(keys.platformPublicKeyId);
  expect(h['wechatpay-signature-type']).toBe('WECHATPAY2-SHA256-RSA2048');
  expect(
    Rsa.verify(
      Formatter.response(h['wechatpay-timestamp']!, h['wechatpay-nonce']!, received.body),
      h['wechatpay-signature']!,
      keys.platformPublicKeyPem,
    ),
  ).toBe(true);
  const notification = JSON.parse(received.body) as Notification;
  const { ciphertext, nonce, associated_data: aad } = notification.resource;
  const plaintext = JSON.parse(Aes.AesGcm.decrypt(ciphertext, keys.apiV3Key, nonce, aad)) as unknown;
  return { notification, plaintext };
}

beforeAll(async () => {
  keys = generateWechatpaySandboxKeys();
  await sink.start();
  const app = express();
  app.disable('x-powered-by');
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechatpay`;
  background = new RecordedBackground((err) => taskFailures.push(err));
  sandbox = createWechatpaySandbox({
    keys,
    publicBaseUrl: base,
    timeScale: TIME_SCALE,
    refundDelayMs: REFUND_DELAY_MS,
    background,
  });
  // Mounted below a prefix, as in a bigger app: the signed path is the full one.
  app.use('/wechatpay', sandbox.router);
  wxpay = client(keys.merchantPrivateKeyPem, { [keys.platformPublicKeyId]: keys.platformPublicKeyPem });
});

afterEach(() => {
  expect(taskFailures.splice(0)).toEqual([]);
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await sink.stop();
});

describe('creating orders', () => {
  test('when a Native order is created, then code_url is its checkout and the signed answer verifies', async () => {
    const res = await create('native', order());
    expect(res.status).toBe(200);
    expect(Object.keys(res.data)).toEqual(['code_url']);
    expect(res.data.code_url).toMatch(new RegExp(`^${base}/checkout/[A-Za-z0-9_-]{24}$`));
    expect(res.headers['wechatpay-serial']).toBe(keys.platformPublicKeyId);
    expect(res.headers['wechatpay-nonce']).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(res.headers['wechatpay-signature-type']).toBe('WECHATPAY2-SHA256-RSA2048');
    expect(res.headers['request-id']).toMatch(/^[0-9A-F]{28}-0$/);
    expect(res.headers['content-type']).toMatch(/^application\/json(;|$)/);
  });

  test('when a JSAPI order is created for a payer, then the answer is a prepay_id', async () => {
    const res = await create('jsapi', order({ payer: { sp_openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' } }));
    expect(res.status).toBe(200);
    expect(Object.keys(res.data)).toEqual(['prepay_id']);
    expect(res.data.prepay_id).toMatch(/^wx[0-9a-z]{26}$/);
  });

  test('when an APP order is created, then the answer is a prepay_id', async () => {
    const res = await create('app', order());
    expect(res.status).toBe(200);
    expect(res.data.prepay_id).toMatch(/^wx[0-9a-z]{26}$/);
  });

  test('when an H5 order is created with its scene, then h5_url is its checkout', async () => {
    const scene = { payer_client_ip: '203.0.113.7', h5_info: { type: 'Wap' } };
    const res = await create('h5', order({ scene_info: scene }));
    expect(res.status).toBe(200);
    expect(res.data.h5_url).toMatch(new RegExp(`^${base}/checkout/[A-Za-z0-9_-]{24}$`));
  });

  test('when a JSAPI order has no payer, then it is refused with PARAM_ERROR naming payer', async () => {
    const res = await create('jsapi', order());
    expect(res.status).toBe(400);
    expect(res.data.code).toBe('PARAM_ERROR');
    expect(res.data.message).toContain('payer.sp_openid');
  });

  test('when an H5 order has no scene_info, then it is refused with PARAM_ERROR naming it', async () => {
    const res = await create('h5', order());
    expect(res.status).toBe(400);
    expect(res.data).toMatchObject({ code: 'PARAM_ERROR', message: expect.stringContaining('scene_info') });
  });

  test('when amount.total is missing, then the answer is a signed PARAM_ERROR naming the field', async () => {
    const res = await create('native', order({ amount: { currency: 'CNY' } }));
    expect(res.status).toBe(400);
    expect(res.data.code).toBe('PARAM_ERROR');
    expect(res.data.message).toContain('amount.total');
    expect(res.headers['wechatpay-signature']).toEqual(expect.any(String));
  });

  test('when the same out_trade_no is created again with the same parameters, then the same answer comes back', async () => {
    const body = order();
    const first = await create('native', body);
    const second = await create('native', body);
    expect(second.status).toBe(200);
    expect(second.data.code_url).toBe(first.data.code_url);
  });

  test('when the same out_trade_no is created again with another amount, then it is refused with INVALID_REQUEST', async () => {
    const body = order();
    expect((await create('native', body)).status).toBe(200);
    const res = await create('native', { ...body, amount: { total: 101, currency: 'CNY' } });
    expect(res.status).toBe(400);
    expect(res.data.code).toBe('INVALID_REQUEST');
  });

  test('when the description injects [sandbox:system-error], then the create answers 500 SYSTEM_ERROR', async () => {
    const res = await create('native', order({ description: 'boom [sandbox:system-error]' }));
    expect(res.status).toBe(500);
    expect(res.data.code).toBe('SYSTEM_ERROR');
  });
});

describe('code payments (付款码)', () => {
  /** WeChat Pay's own sample request of 付款码支付 (partner), with this sandbox's merchant and app. */
  const publishedSample = () => ({
    sp_appid: keys.spAppid,
    sp_mchid: keys.spMchid,
    sub_appid: 'wxd678efh567hg6787',
    sub_mchid: SUB_MCHID,
    description: 'Image形象店-深圳腾大-QQ公仔',
    out_trade_no: tradeNo(),
    attach: '自定义数据说明',
    goods_tag: 'WXG',
    support_fapiao: true,
    payer: { auth_code: '130061098828009406' },
    amount: { total: 100, currency: 'CNY' },
    scene_info: {
      device_id: '013467007045764',
      device_ip: '128.0.0.1',
      store_info: { id: '0001', out_id: 'A1111' },
    },
    detail: {
      cost_price: 608800,
      invoice_id: '微信123',
      goods_detail: [
        {
          merchant_goods_id: '1246464644',
          wxpay_goods_id: '1001',
          goods_name: 'iPhoneX 256G',
          quantity: 1,
          unit_price: 528800,
        },
      ],
    },
    settle_info: { profit_sharing: true },
  });
  const codepay = (body: Record<string, unknown>) =>
    call<Transaction & ErrorBody>(wxpay.v3.pay.partner.transactions.codepay.post(body, ANY_STATUS));
  const reverse = (outTradeNo: string) =>
    call<Record<string, string> & ErrorBody>(
      wxpay.v3.pay.partner.transactions.outTradeNo._out_trade_no_.reverse.post(
        { sp_appid: keys.spAppid, sp_mchid: keys.spMchid, sub_mchid: SUB_MCHID },
        { out_trade_no: outTradeNo, ...ANY_STATUS },
      ),
    );

  test('when WeChat Pay’s published sample request is sent, then it is paid at once: a signed SUCCESS transaction of trade_type MICROPAY, without the code', async () => {
    const body = publishedSample();
    const res = await codepay(body);
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({
      out_trade_no: body.out_trade_no,
      trade_type: 'MICROPAY',
      trade_state: 'SUCCESS',
      transaction_id: expect.stringMatching(/^4200\d+$/),
      success_time: expect.stringMatching(RFC3339_CST),
      amount: { total: 100, payer_total: 100, currency: 'CNY' },
    });
    expect(JSON.stringify(res.data)).not.toContain('130061098828009406');
    expect((await query(String(body.out_trade_no))).data.trade_state).toBe('SUCCESS');
  });

  test('when the buyer must enter a password, then the answer is a signed 202 USERPAYING, a query reads USERPAYING, and the reverse closes it REVOKED', async () => {
    const body = {
      ...publishedSample(),
      payer: { auth_code: walletAuthCode('wechatpay', 'never_confirms') },
    };
    const res = await codepay(body);
    expect({ status: res.status, code: res.data.code }).toEqual({ status: 202, code: 'USERPAYING' });
    expect(res.headers['wechatpay-signature']).toEqual(expect.any(String));
    expect((await query(String(body.out_trade_no))).data.trade_state).toBe('USERPAYING');
    const reversed = await reverse(String(body.out_trade_no));
    expect(reversed).toMatchObject({
      status: 200,
      data: { out_trade_no: body.out_trade_no, sub_mchid: SUB_MCHID },
    });
    expect((await query(String(body.out_trade_no))).data.trade_state).toBe('REVOKED');
    expect(sandbox.codepay(String(body.out_trade_no))).toMatchObject({
      kept: false,
      givenBack: false,
      reverses: 1,
    });
  });

  test('when a code is not WeChat Pay’s, has no store, or the balance is short, then it is refused: PARAM_ERROR naming the field, or NOT_ENOUGH', async () => {
    const notWechat = await codepay({ ...publishedSample(), payer: { auth_code: '281234567890123456' } });
    expect({ status: notWechat.status, code: notWechat.data.code }).toEqual({
      status: 400,
      code: 'PARAM_ERROR',
    });
    const noStore = await codepay({ ...publishedSample(), scene_info: { device_id: '013467007045764' } });
    expect({ status: noStore.status, code: noStore.data.code }).toEqual({ status: 400, code: 'PARAM_ERROR' });
    expect(noStore.data.message).toContain('store_info');
    const short = await codepay({
      ...publishedSample(),
      payer: { auth_code: walletAuthCode('wechatpay', 'insufficient') },
    });
    expect({ status: short.status, code: short.data.code }).toEqual({ status: 403, code: 'NOT_ENOUGH' });
  });

  test('when a paid code payment is reversed, then the money is given back and it reads REVOKED; an unknown one is 404 ORDER_NOT_EXIST', async () => {
    const body = publishedSample();
    expect((await codepay(body)).status).toBe(200);
    expect((await reverse(String(body.out_trade_no))).status).toBe(200);
    expect((await query(String(body.out_trade_no))).data.trade_state).toBe('REVOKED');
    expect(sandbox.codepay(String(body.out_trade_no))).toMatchObject({ kept: false, givenBack: true });
    const unknown = await reverse(tradeNo());
    expect({ status: unknown.status, code: unknown.data.code }).toEqual({
      status: 404,
      code: 'ORDER_NOT_EXIST',
    });
  });
});

describe('amounts', () => {
  test('when an order’s amount.total is above 2^31 − 1 fen, then it is refused with 400 PARAM_ERROR; 2^31 − 1 is taken', async () => {
    const over = await create('native', order({ amount: { total: 2 ** 31, currency: 'CNY' } }));
    expect(over).toMatchObject({ status: 400, data: { code: 'PARAM_ERROR' } });
    const most = await create('native', order({ amount: { total: 2 ** 31 - 1, currency: 'CNY' } }));
    expect(most.status).toBe(200);
  });
});

describe('signatures', () => {
  test('when a request is signed with another private key, then it is refused with a signed 401 SIGN_ERROR', async () => {
    const stranger = generateWechatpaySandboxKeys();
    const forger = client(stranger.merchantPrivateKeyPem, {
      [keys.platformPublicKeyId]: keys.platformPublicKeyPem,
    });
    const res = await call<ErrorBody>(forger.v3.pay.partner.transactions.native.post(order(), ANY_STATUS));
    expect(res.status).toBe(401);
    expect(res.data.code).toBe('SIGN_ERROR');
  });

  test('when a request names another certificate serial, then it is refused with 401 SIGN_ERROR', async () => {
    const certs = { [keys.platformPublicKeyId]: keys.platformPublicKeyPem };
    const other = client(keys.merchantPrivateKeyPem, certs, 'ABCDEF0123456789ABCDEF0123456789ABCDEF01');
    const res = await call<ErrorBody>(other.v3.pay.partner.transactions.native.post(order(), ANY_STATUS));
    expect(res.status).toBe(401);
    expect(res.data.code).toBe('SIGN_ERROR');
    expect(res.data.message).toContain('serial_no');
  });

  test('when the answer is checked against another platform key, then the library refuses it', async () => {
    const stranger = generateWechatpaySandboxKeys();
    const doubter = client(keys.merchantPrivateKeyPem, {
      [keys.platformPublicKeyId]: stranger.platformPublicKeyPem,
    });
    await expect(doubter.v3.pay.partner.transactions.native.post(order())).rejects.toMatchObject({
      code: 'EV3_RES_HEADER_SIGNATURE_DIGEST',
    });
  });
});

describe('querying, paying and closing', () => {
  test('when an unpaid order is queried, then it reads NOTPAY with its amount and no transaction_id', async () => {
    const body = order({ attach: 'cart-7' });
    await create('native', body);
    const res = await query(body.out_trade_no as string);
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({
      sp_mchid: keys.spMchid,
      sub_mchid: SUB_MCHID,
      out_trade_no: body.out_trade_no,
      trade_type: 'NATIVE',
      trade_state: 'NOTPAY',
      attach: 'cart-7',
      amount: { total: 100, currency: 'CNY', payer_currency: 'CNY' },
    });
    expect(res.data.transaction_id).toBeUndefined();
  });

  test('when an unknown order is queried, then the answer is 404 ORDER_NOT_EXIST', async () => {
    const res = await query('NO_SUCH_ORDER_1');
    expect(res.status).toBe(404);
    expect(res.data.code).toBe('ORDER_NOT_EXIST');
  });

  test('when the buyer pays at the checkout, then the query shows SUCCESS with a transaction_id', async () => {
    const outTradeNo = await paidOrder();
    const res = await query(outTradeNo);
    expect(res.data.trade_state).toBe('SUCCESS');
    expect(res.data.transaction_id).toMatch(/^\d{28}$/);
    expect(res.data.success_time).toMatch(RFC3339_CST);
    expect(res.data.amount).toEqual({ total: 100, payer_total: 100, currency: 'CNY', payer_currency: 'CNY' });
  });

  test('when the checkout page is opened and its Pay form submitted, then the order is paid', async () => {
    const created = await create('native', order({ description: '<b>Tea & "cake"</b>' }));
    const page = await fetch(created.data.code_url!);
    const html = await page.text();
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).toContain('&#60;b&#62;Tea &#38; &#34;cake&#34;&#60;/b&#62;');
    expect(html).toContain('name="result" value="pay"');
    const submitted = await fetch(created.data.code_url!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: 'result=pay',
      redirect: 'manual',
    });
    expect(submitted.status).toBe(303);
    expect(await (await fetch(created.data.code_url!)).text()).toContain('SUCCESS (支付成功)');
  });

  test('when a JSAPI order is paid through its prepay_id, then it reads SUCCESS', async () => {
    const body = order({ payer: { sp_openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' } });
    const created = await create('jsapi', body);
    const paid = await buyer(`${base}/checkout/prepay/${created.data.prepay_id}`, 'pay');
    expect(paid).toEqual({ status: 200, body: { trade_state: 'SUCCESS' } });
    expect((await query(body.out_trade_no as string)).data.trade_state).toBe('SUCCESS');
  });

  test('when the buyer is still paying and then fails, then the order reads USERPAYING then PAYERROR', async () => {
    const body = order();
    const created = await create('native', body);
    expect((await buyer(created.data.code_url!, 'userpaying')).body.trade_state).toBe('USERPAYING');
    expect((await query(body.out_trade_no as string)).data.trade_state).toBe('USERPAYING');
    expect((await buyer(created.data.code_url!, 'payerror')).body.trade_state).toBe('PAYERROR');
    expect((await query(body.out_trade_no as string)).data.trade_state).toBe('PAYERROR');
  });

  test('when an unpaid order is closed, then the answer is a signed 204 and the order reads CLOSED', async () => {
    const body = order();
    const created = await create('native', body);
    const closed = await close(body.out_trade_no as string);
    expect(closed.status).toBe(204);
    expect(closed.data).toBe('');
    expect((await query(body.out_trade_no as string)).data.trade_state).toBe('CLOSED');
    expect((await close(body.out_trade_no as string)).status).toBe(204);
    const late = await buyer(created.data.code_url!, 'pay');
    expect(late).toMatchObject({ status: 400, body: { code: 'ORDER_CLOSED' } });
  });

  test('when a paid order is closed, then the answer is 400 ORDERPAID', async () => {
    const outTradeNo = await paidOrder();
    const res = await close(outTradeNo);
    expect(res.status).toBe(400);
    expect(res.data).toMatchObject({ code: 'ORDERPAID' });
    expect((await query(outTradeNo)).data.trade_state).toBe('SUCCESS');
  });

  test('when an unpaid order passes its time_expire, then it reads CLOSED', async () => {
    // Whole seconds in +08:00, 1.5 to 2.5 s ahead.
    const expire = new Date(Date.now() + 8 * 3600_000 + 2500).toISOString().slice(0, 19) + '+08:00';
    const body = order({ time_expire: expire });
    const outTradeNo = body.out_trade_no as string;
    expect((await create('native', body)).status).toBe(200);
    expect((await query(outTradeNo)).data.trade_state).toBe('NOTPAY');
    const closedAt = await until(
      'the order to expire',
      async () => ((await query(outTradeNo)).data.trade_state === 'CLOSED' ? Date.now() : undefined),
      WAIT_MS,
    );
    expect(closedAt).toBeGreaterThanOrEqual(Date.parse(expire));
  });
});

describe('refunds', () => {
  test('when a paid order is refunded, then the refund goes PROCESSING → SUCCESS and the order reads REFUND', async () => {
    const outTradeNo = await paidOrder();
    const outRefundNo = `R${randomUUID().replaceAll('-', '')}`;
    const res = await refund({
      out_trade_no: outTradeNo,
      out_refund_no: outRefundNo,
      amount: { refund: 30, total: 100, currency: 'CNY' },
    });
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({
      out_refund_no: outRefundNo,
      out_trade_no: outTradeNo,
      status: 'PROCESSING',
      channel: 'ORIGINAL',
      amount: { total: 100, refund: 30, payer_refund: 30, discount_refund: 0, currency: 'CNY' },
    });
    expect(res.data.refund_id).toMatch(/^\d{29}$/);
    expect((await queryRefund(outRefundNo)).data.status).toBe('PROCESSING');
    const settled = await until(
      'the refund to succeed',
      async () => {
        const q = await queryRefund(outRefundNo);
        return q.data.status === 'SUCCESS' ? q.data : undefined;
      },
      WAIT_MS,
    );
    expect(settled.refund_id).toBe(res.data.refund_id);
    expect(settled.success_time).toMatch(RFC3339_CST);
    expect((await query(outTradeNo)).data.trade_state).toBe('REFUND');
    const again = await refund({
      out_trade_no: outTradeNo,
      out_refund_no: outRefundNo,
      amount: { refund: 30, total: 100, currency: 'CNY' },
    });
    expect(again.data).toMatchObject({ refund_id: res.data.refund_id, status: 'SUCCESS' });
  });

  test('when a refund asks for more than remains refundable, then it is refused with 400 INVALID_REQUEST', async () => {
    const outTradeNo = await paidOrder();
    const amount = (n: number) => ({ refund: n, total: 100, currency: 'CNY' });
    expect(
      (await refund({ out_trade_no: outTradeNo, out_refund_no: tradeNo(), amount: amount(60) })).status,
    ).toBe(200);
    const over = await refund({ out_trade_no: outTradeNo, out_refund_no: tradeNo(), amount: amount(41) });
    expect(over.status).toBe(400);
    expect(over.data.code).toBe('INVALID_REQUEST');
    expect(
      (await refund({ out_trade_no: outTradeNo, out_refund_no: tradeNo(), amount: amount(40) })).status,
    ).toBe(200);
  });

  test('when an unpaid order is refunded, then it is refused with 400 INVALID_REQUEST', async () => {
    const body = order();
    await create('native', body);
    const res = await refund({
      out_trade_no: body.out_trade_no,
      out_refund_no: tradeNo(),
      amount: { refund: 1, total: 100, currency: 'CNY' },
    });
    expect(res.status).toBe(400);
    expect(res.data.code).toBe('INVALID_REQUEST');
  });

  test('when an unknown refund is queried, then the answer is 404 RESOURCE_NOT_EXISTS', async () => {
    const res = await queryRefund('NO_SUCH_REFUND');
    expect(res.status).toBe(404);
    expect(res.data.code).toBe('RESOURCE_NOT_EXISTS');
  });
});

describe('profit sharing', () => {
  async function finished(outOrderNo: string, transactionId: string): Promise<Sharing> {
    return until(
      'the sharing order to finish',
      async () => {
        const q = await querySharing(outOrderNo, transactionId);
        return q.data.state === 'FINISHED' ? q.data : undefined;
      },
      WAIT_MS,
    );
  }

  test('when a merchant receiver is added with its name encrypted, then the sandbox keeps the decrypted name', async () => {
    const account = `19${String(Date.now()).slice(-8)}`;
    const body = {
      type: 'MERCHANT_ID',
      account,
      name: seal('深圳市某某科技有限公司'),
      relation_type: 'PARTNER',
    };
    const res = await addReceiver(body);
    expect(res.status).toBe(200);
    expect(res.data).toEqual({
      sub_mchid: SUB_MCHID,
      type: 'MERCHANT_ID',
      account,
      relation_type: 'PARTNER',
    });
    expect(sandbox.receivers(SUB_MCHID)).toContainEqual({
      type: 'MERCHANT_ID',
      account,
      name: '深圳市某某科技有限公司',
      relation_type: 'PARTNER',
    });
    // Adding it again (a freshly sealed name) is fine.
    expect((await addReceiver({ ...body, name: seal('深圳市某某科技有限公司') })).status).toBe(200);
    const custom = await addReceiver({
      type: 'PERSONAL_OPENID',
      account: `oRecv${tradeNo()}`,
      relation_type: 'CUSTOM',
      custom_relation: '表哥',
    });
    expect(custom.data).toMatchObject({ relation_type: 'CUSTOM', custom_relation: '表哥' });
  });

  test('when an encrypted name comes without the platform Wechatpay-Serial, then it is refused with 400 PARAM_ERROR', async () => {
    const body = {
      type: 'MERCHANT_ID',
      account: '1900000110',
      name: seal('某某公司'),
      relation_type: 'STORE',
    };
    const missing = await addReceiver(body, {});
    expect(missing.status).toBe(400);
    expect(missing.data).toMatchObject({
      code: 'PARAM_ERROR',
      message: expect.stringContaining('Wechatpay-Serial'),
    });
    const other = await addReceiver(body, { 'Wechatpay-Serial': 'PUB_KEY_ID_0000' });
    expect(other.status).toBe(400);
    expect(other.data.code).toBe('PARAM_ERROR');
    const stranger = generateWechatpaySandboxKeys();
    const unreadable = await addReceiver({
      ...body,
      name: Rsa.encrypt('某某公司', stranger.platformPublicKeyPem),
    });
    expect(unreadable.status).toBe(400);
    expect(unreadable.data).toMatchObject({
      code: 'PARAM_ERROR',
      message: expect.stringContaining('decrypt'),
    });
    const unnamed = await addReceiver({ type: 'MERCHANT_ID', account: '1900000110', relation_type: 'STORE' });
    expect(unnamed.status).toBe(400);
    expect(unnamed.data).toMatchObject({ code: 'PARAM_ERROR', message: expect.stringContaining('name') });
    expect(sandbox.receivers(SUB_MCHID).some((r) => r.account === '1900000110')).toBe(false);
  });

  test('when a receiver is added under another appid, then it is refused with 400 APPID_MCHID_NOT_MATCH', async () => {
    const res = await addReceiver({
      appid: 'wx0000000000000000',
      type: 'PERSONAL_OPENID',
      account: 'oRecvOther',
      relation_type: 'USER',
    });
    expect(res.status).toBe(400);
    expect(res.data.code).toBe('APPID_MCHID_NOT_MATCH');
  });

  test('when a paid profit_sharing transaction is shared, then the order is PROCESSING and a query later reads FINISHED with each receiver SUCCESS', async () => {
    const transactionId = await paidTransaction();
    const person = await personalReceiver();
    const account = `19${String(Date.now()).slice(-8)}`;
    await addReceiver({ type: 'MERCHANT_ID', account, name: seal('某某门店'), relation_type: 'STORE' });
    const res = await share({
      transaction_id: transactionId,
      receivers: [
        { ...person, amount: 10, description: '分给合伙人' },
        { type: 'MERCHANT_ID', account, name: seal('某某门店'), amount: 20, description: '分给门店' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({
      sub_mchid: SUB_MCHID,
      transaction_id: transactionId,
      state: 'PROCESSING',
    });
    expect(res.data.order_id).toMatch(/^\d+$/);
    expect(res.data.receivers).toHaveLength(2);
    for (const r of res.data.receivers) {
      expect(r.result).toBe('PENDING');
      expect(r.detail_id).toMatch(/^\d+$/);
      expect(r.create_time).toMatch(RFC3339_CST);
      expect(r.finish_time).toBeUndefined();
    }
    expect(res.data.receivers[1]).toMatchObject({
      type: 'MERCHANT_ID',
      account,
      amount: 20,
      description: '分给门店',
    });
    const settled = await finished(res.data.out_order_no, transactionId);
    expect(settled.order_id).toBe(res.data.order_id);
    expect(settled.receivers.map((r) => r.result)).toEqual(['SUCCESS', 'SUCCESS']);
    expect(settled.receivers[0]!.finish_time).toMatch(RFC3339_CST);
    expect(sandbox.sharing(transactionId)).toEqual({
      orders: [
        {
          out_order_no: res.data.out_order_no,
          state: 'FINISHED',
          receivers: [
            { ...person, amount: 10, result: 'SUCCESS' },
            { type: 'MERCHANT_ID', account, amount: 20, result: 'SUCCESS' },
          ],
        },
      ],
      unfrozen: false,
    });
  });

  test('when a sharing asks for more than remains unshared, then it is refused with 400 NOT_ENOUGH', async () => {
    const transactionId = await paidTransaction();
    const receiver = await personalReceiver();
    const shareOf = (amount: number) =>
      share({ transaction_id: transactionId, receivers: [{ ...receiver, amount, description: '分账' }] });
    expect((await shareOf(60)).status).toBe(200);
    const over = await shareOf(41);
    expect(over.status).toBe(400);
    expect(over.data.code).toBe('NOT_ENOUGH');
    expect((await shareOf(40)).status).toBe(200);
  });

  test('when a receiver was never added, then the sharing is refused with 400 INVALID_REQUEST', async () => {
    const transactionId = await paidTransaction();
    const res = await share({
      transaction_id: transactionId,
      receivers: [{ type: 'PERSONAL_OPENID', account: 'oNeverAdded', amount: 1, description: '分账' }],
    });
    expect(res.status).toBe(400);
    expect(res.data).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('未添加') });
    expect(sandbox.sharing(transactionId)).toBeUndefined();
  });

  test('when the transaction was paid without settle_info.profit_sharing, then the sharing is refused with 400 INVALID_REQUEST', async () => {
    const transactionId = await paidTransaction(false);
    const receiver = await personalReceiver();
    const res = await share({
      transaction_id: transactionId,
      receivers: [{ ...receiver, amount: 1, description: '分账' }],
    });
    expect(res.status).toBe(400);
    expect(res.data).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('profit_sharing'),
    });
    const unknown = await share({
      transaction_id: '4200000000000000000000000000',
      receivers: [{ ...receiver, amount: 1, description: '分账' }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.data.code).toBe('INVALID_REQUEST');
  });

  test('when the same out_order_no is shared again, then the same order comes back, and with another amount it is refused', async () => {
    const transactionId = await paidTransaction();
    const receiver = await personalReceiver();
    const body = {
      transaction_id: transactionId,
      out_order_no: tradeNo(),
      receivers: [{ ...receiver, amount: 70, description: '分账' }],
    };
    const first = await share(body);
    const again = await share(body);
    expect(again.status).toBe(200);
    expect(again.data.order_id).toBe(first.data.order_id);
    expect(again.data.receivers[0]!.detail_id).toBe(first.data.receivers[0]!.detail_id);
    const changed = await share({ ...body, receivers: [{ ...receiver, amount: 20, description: '分账' }] });
    expect(changed.status).toBe(400);
    expect(changed.data.code).toBe('INVALID_REQUEST');
    expect(sandbox.sharing(transactionId)!.orders).toHaveLength(1);
  });

  test('when a receiver description injects [sandbox:share-closed], then that receiver ends CLOSED with ACCOUNT_ABNORMAL and its share is back', async () => {
    const transactionId = await paidTransaction();
    const [good, bad] = [await personalReceiver(), await personalReceiver()];
    const res = await share({
      transaction_id: transactionId,
      receivers: [
        { ...good, amount: 30, description: '分账' },
        { ...bad, amount: 70, description: '分账 [sandbox:share-closed]' },
      ],
    });
    expect(res.status).toBe(200);
    const settled = await finished(res.data.out_order_no, transactionId);
    expect(settled.receivers.map((r) => [r.result, r.fail_reason])).toEqual([
      ['SUCCESS', undefined],
      ['CLOSED', 'ACCOUNT_ABNORMAL'],
    ]);
    expect(sandbox.sharing(transactionId)!.orders[0]!.receivers[1]).toMatchObject({ result: 'CLOSED' });
    const rest = await share({
      transaction_id: transactionId,
      receivers: [{ ...good, amount: 70, description: '再分' }],
    });
    expect(rest.status).toBe(200);
  });

  test('when the rest is unfrozen, then the unfreeze order is PROCESSING, a later query reads FINISHED, and a later sharing is refused as 订单已解冻', async () => {
    const transactionId = await paidTransaction();
    const receiver = await personalReceiver();
    expect(
      (
        await share({
          transaction_id: transactionId,
          receivers: [{ ...receiver, amount: 10, description: '分账' }],
        })
      ).status,
    ).toBe(200);
    const body = { transaction_id: transactionId, out_order_no: tradeNo() };
    const res = await unfreeze(body);
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({
      sub_mchid: SUB_MCHID,
      transaction_id: transactionId,
      out_order_no: body.out_order_no,
      state: 'PROCESSING',
      receivers: [],
    });
    expect(res.data.order_id).toMatch(/^\d+$/);
    expect((await unfreeze(body)).data.order_id).toBe(res.data.order_id);
    await until('the unfreeze finished', async () =>
      (await querySharing(body.out_order_no, transactionId)).data.state === 'FINISHED' ? true : undefined,
    );
    expect(sandbox.sharing(transactionId)).toMatchObject({ unfrozen: true });
    expect(sandbox.sharing(transactionId)!.orders).toHaveLength(1);
    const late = await share({
      transaction_id: transactionId,
      receivers: [{ ...receiver, amount: 1, description: '分账' }],
    });
    expect(late.status).toBe(400);
    expect(late.data).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('订单已解冻'),
    });
  });

  test('when a sharing asks unfreeze_unsplit, then once it finishes the transaction reads unfrozen and no more is shared', async () => {
    const transactionId = await paidTransaction();
    const receiver = await personalReceiver();
    const res = await share({
      transaction_id: transactionId,
      unfreeze_unsplit: true,
      receivers: [{ ...receiver, amount: 10, description: '分账' }],
    });
    expect(res.status).toBe(200);
    expect(sandbox.sharing(transactionId)!.unfrozen).toBe(false);
    await finished(res.data.out_order_no, transactionId);
    expect(sandbox.sharing(transactionId)).toMatchObject({ unfrozen: true, orders: [{ state: 'FINISHED' }] });
    const late = await share({
      transaction_id: transactionId,
      receivers: [{ ...receiver, amount: 1, description: '分账' }],
    });
    expect(late.status).toBe(400);
    expect(late.data.code).toBe('INVALID_REQUEST');
  });

  test('when an unknown sharing order is queried, then the answer is 404 RESOURCE_NOT_EXISTS', async () => {
    const res = await querySharing('NO_SUCH_SHARING', '4200000000000000000000000000');
    expect(res.status).toBe(404);
    expect(res.data.code).toBe('RESOURCE_NOT_EXISTS');
  });
});

describe('share returns (分账回退)', () => {
  const RETURN_MCHID = '86693852';

  /** A paid transaction of 100 whose sharing order gave a merchant receiver 60 (FINISHED). */
  async function sharedToMerchant(): Promise<{ transactionId: string; outOrderNo: string; orderId: string }> {
    const transactionId = await paidTransaction();
    const added = await addReceiver({
      type: 'MERCHANT_ID',
      account: RETURN_MCHID,
      name: seal('示例商户全称'),
      relation_type: 'PARTNER',
    });
    expect(added.status).toBe(200);
    const res = await share({
      transaction_id: transactionId,
      receivers: [{ type: 'MERCHANT_ID', account: RETURN_MCHID, amount: 60, description: '分给商户' }],
    });
    expect(res.status).toBe(200);
    await until(
      'the sharing order to finish',
      async () =>
        (await querySharing(res.data.out_order_no, transactionId)).data.state === 'FINISHED'
          ? true
          : undefined,
      WAIT_MS,
    );
    return { transactionId, outOrderNo: res.data.out_order_no, orderId: res.data.order_id };
  }

  test('when a return is asked as WeChat Pay’s published example asks it, then the signed answer is the return order, SUCCESS, and a repeat is the same order', async () => {
    const { transactionId, outOrderNo, orderId } = await sharedToMerchant();
    // The request example of 请求分账回退API (partner), with this sandbox's own numbers.
    const body = {
      out_order_no: outOrderNo,
      out_return_no: `R${tradeNo()}`,
      return_mchid: RETURN_MCHID,
      amount: 10,
      description: '用户退款',
    };
    const res = await returnOrder(body);
    expect(res.status).toBe(200);
    expect(res.data).toEqual({
      sub_mchid: SUB_MCHID,
      order_id: orderId,
      ...body,
      return_id: expect.stringMatching(/^\d+$/) as unknown,
      result: 'SUCCESS',
      create_time: expect.stringMatching(RFC3339_CST) as unknown,
      finish_time: expect.stringMatching(RFC3339_CST) as unknown,
    });
    expect((await returnOrder(body)).data.return_id).toBe(res.data.return_id);
    expect((await queryReturnOrder(body.out_return_no, outOrderNo)).data).toEqual(res.data);
    const changed = await returnOrder({ ...body, amount: 11 });
    expect(changed.status).toBe(400);
    expect(changed.data.code).toBe('INVALID_REQUEST');
    // Named by order_id (and both), as the API allows.
    const byId = await returnOrder({
      ...body,
      out_order_no: undefined,
      order_id: orderId,
      out_return_no: `R${tradeNo()}`,
    });
    expect(byId).toMatchObject({ status: 200, data: { out_order_no: outOrderNo, result: 'SUCCESS' } });
    expect(sandbox.returns(transactionId).map((r) => [r.amount, r.result])).toEqual([
      [10, 'SUCCESS'],
      [10, 'SUCCESS'],
    ]);
  });

  test('when returns would take back more than the receiver was given, then the one that would is refused with 400 INVALID_REQUEST and the rest still returns', async () => {
    const { transactionId, outOrderNo } = await sharedToMerchant();
    const back = (amount: number) =>
      returnOrder({
        out_order_no: outOrderNo,
        out_return_no: `R${tradeNo()}`,
        return_mchid: RETURN_MCHID,
        amount,
        description: '退款回退',
      });
    expect((await back(40)).data.result).toBe('SUCCESS');
    const over = await back(21);
    expect(over.status).toBe(400);
    expect(over.data).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('20 of 60'),
    });
    expect((await back(20)).data.result).toBe('SUCCESS');
    expect(sandbox.returns(transactionId).reduce((sum, r) => sum + r.amount, 0)).toBe(60);
  });

  test('when a return names a merchant the sharing order did not pay, an openid, or an unknown order, then it is refused', async () => {
    const { outOrderNo } = await sharedToMerchant();
    const base = { out_order_no: outOrderNo, amount: 1, description: '回退' };
    const stranger = await returnOrder({
      ...base,
      out_return_no: `R${tradeNo()}`,
      return_mchid: '1900000999',
    });
    expect(stranger.status).toBe(400);
    expect(stranger.data).toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringContaining('回退方不存在'),
    });
    const openid = await returnOrder({ ...base, out_return_no: `R${tradeNo()}`, return_mchid: 'oPersonal' });
    expect(openid).toMatchObject({ status: 400, data: { code: 'PARAM_ERROR' } });
    const unknown = await returnOrder({
      ...base,
      out_order_no: 'NO_SUCH_ORDER',
      out_return_no: `R${tradeNo()}`,
      return_mchid: RETURN_MCHID,
    });
    expect(unknown).toMatchObject({ status: 400, data: { code: 'INVALID_REQUEST' } });
    expect((await queryReturnOrder('NO_SUCH_RETURN', outOrderNo)).data.code).toBe('RESOURCE_NOT_EXISTS');
  });

  test('when a return’s description injects [sandbox:return-processing] or [sandbox:return-failed], then it is PROCESSING until its delay, or ends FAILED and returns nothing', async () => {
    const { transactionId, outOrderNo } = await sharedToMerchant();
    const slow = {
      out_order_no: outOrderNo,
      out_return_no: `R${tradeNo()}`,
      return_mchid: RETURN_MCHID,
      amount: 30,
      description: '回退 [sandbox:return-processing]',
    };
    expect((await returnOrder(slow)).data.result).toBe('PROCESSING');
    await until(
      'the slow return',
      async () =>
        (await queryReturnOrder(slow.out_return_no, outOrderNo)).data.result === 'SUCCESS' ? true : undefined,
      WAIT_MS,
    );
    const failed = await returnOrder({
      ...slow,
      out_return_no: `R${tradeNo()}`,
      description: '回退 [sandbox:return-failed]',
    });
    expect(failed.data).toMatchObject({ result: 'FAILED', fail_reason: 'ACCOUNT_ABNORMAL' });
    // A failed return took nothing back: the other 30 can still be returned.
    expect(
      (await returnOrder({ ...slow, out_return_no: `R${tradeNo()}`, description: '回退' })).data.result,
    ).toBe('SUCCESS');
    expect(sandbox.returns(transactionId).map((r) => r.result)).toEqual(['SUCCESS', 'FAILED', 'SUCCESS']);
  });
});

describe('abnormal refunds (发起异常退款)', () => {
  /** A paid order's refund of 10 that ended ABNORMAL; its out_refund_no and refund_id. */
  async function abnormalRefund(hook: Receiver): Promise<{ outRefundNo: string; refundId: string }> {
    const outTradeNo = await paidOrder();
    const outRefundNo = tradeNo();
    const res = await refund({
      out_trade_no: outTradeNo,
      out_refund_no: outRefundNo,
      reason: 'card closed [sandbox:abnormal]',
      notify_url: hook.url,
      amount: { refund: 10, total: 100, currency: 'CNY' },
    });
    await until('the ABNORMAL callback', async () => hook.received[0], WAIT_MS);
    expect(openCallback(hook.received[0]!).notification.event_type).toBe('REFUND.ABNORMAL');
    return { outRefundNo, refundId: res.data.refund_id };
  }

  const hooks: Receiver[] = [];
  async function hook(): Promise<Receiver> {
    const r = await new Receiver().answer(200).start();
    hooks.push(r);
    return r;
  }
  afterAll(async () => {
    await Promise.all(hooks.map((r) => r.stop()));
  });

  test('when an ABNORMAL refund is applied to a user’s bank card with its card and name sealed, then it is PROCESSING, then SUCCESS with a REFUND.SUCCESS callback', async () => {
    const h = await hook();
    const { outRefundNo, refundId } = await abnormalRefund(h);
    // The request example of 发起异常退款, sealed with the platform public key the library's way.
    const body = {
      out_refund_no: outRefundNo,
      type: 'USER_BANK_CARD',
      bank_type: 'ICBC_DEBIT',
      bank_account: seal('6222021234567890123'),
      real_name: seal('张三'),
    };
    const applied = await applyAbnormalRefund(refundId, body);
    expect(applied.status).toBe(200);
    expect(applied.data).toMatchObject({
      refund_id: refundId,
      out_refund_no: outRefundNo,
      status: 'PROCESSING',
    });
    expect(sandbox.abnormalRefundApplication(SUB_MCHID, outRefundNo)).toMatchObject({
      type: 'USER_BANK_CARD',
      bank_type: 'ICBC_DEBIT',
      bank_account: '6222021234567890123',
      real_name: '张三',
    });
    const received = await until('the REFUND.SUCCESS callback', async () => h.received[1], WAIT_MS);
    const { notification, plaintext } = openCallback(received);
    expect(notification.event_type).toBe('REFUND.SUCCESS');
    expect(plaintext).toMatchObject({ out_refund_no: outRefundNo, refund_status: 'SUCCESS' });
    expect((await queryRefund(outRefundNo)).data.status).toBe('SUCCESS');
    // Asked again the same way: the refund as it stands.
    expect((await applyAbnormalRefund(refundId, body)).data.status).toBe('SUCCESS');
  });

  test('when an ABNORMAL refund is applied to the merchant’s bank account, then it needs no card and ends SUCCESS', async () => {
    const h = await hook();
    const { outRefundNo, refundId } = await abnormalRefund(h);
    const applied = await applyAbnormalRefund(
      refundId,
      { out_refund_no: outRefundNo, type: 'MERCHANT_BANK_CARD' },
      {},
    );
    expect(applied.data.status).toBe('PROCESSING');
    await until('SUCCESS', async () =>
      (await queryRefund(outRefundNo)).data.status === 'SUCCESS' ? true : undefined,
    );
  });

  test('when an application lacks the card, is not sealed under a named key, names the wrong refund or one that is not ABNORMAL, then it is refused', async () => {
    const h = await hook();
    const { outRefundNo, refundId } = await abnormalRefund(h);
    const noCard = await applyAbnormalRefund(refundId, {
      out_refund_no: outRefundNo,
      type: 'USER_BANK_CARD',
      bank_type: 'ICBC_DEBIT',
    });
    expect(noCard).toMatchObject({ status: 400, data: { code: 'PARAM_ERROR' } });
    const sealedBody = {
      out_refund_no: outRefundNo,
      type: 'USER_BANK_CARD',
      bank_type: 'ICBC_DEBIT',
      bank_account: seal('6222021234567890123'),
      real_name: seal('张三'),
    };
    const noSerial = await applyAbnormalRefund(refundId, sealedBody, {});
    expect(noSerial).toMatchObject({ status: 400, data: { code: 'PARAM_ERROR' } });
    expect(noSerial.data.message).not.toContain('6222');
    const wrongId = await applyAbnormalRefund('50000000000000000000000000000', sealedBody);
    expect(wrongId).toMatchObject({ status: 404, data: { code: 'RESOURCE_NOT_EXISTS' } });
    const outTradeNo = await paidOrder();
    const normal = tradeNo();
    const ok = await refund({
      out_trade_no: outTradeNo,
      out_refund_no: normal,
      amount: { refund: 10, total: 100, currency: 'CNY' },
    });
    const notAbnormal = await applyAbnormalRefund(ok.data.refund_id, {
      ...sealedBody,
      out_refund_no: normal,
    });
    expect(notAbnormal).toMatchObject({ status: 400, data: { code: 'INVALID_REQUEST' } });
    expect(sandbox.abnormalRefundApplication(SUB_MCHID, outRefundNo)).toBeUndefined();
  });
});

describe('callbacks', () => {
  const receivers: Receiver[] = [];
  async function receiver(...statuses: number[]): Promise<Receiver> {
    const r = await new Receiver().answer(...(statuses.length > 0 ? statuses : [200])).start();
    receivers.push(r);
    return r;
  }
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
  });

  test('when an order is paid, then notify_url gets a signed TRANSACTION.SUCCESS whose resource is the transaction', async () => {
    const hook = await receiver();
    const outTradeNo = await paidOrder({ notify_url: hook.url });
    const received = await until('the payment callback', async () => hook.received[0], WAIT_MS);
    const { notification, plaintext } = openCallback(received);
    expect(notification).toMatchObject({
      resource_type: 'encrypt-resource',
      event_type: 'TRANSACTION.SUCCESS',
      summary: '支付成功',
      resource: {
        original_type: 'transaction',
        algorithm: 'AEAD_AES_256_GCM',
        associated_data: 'transaction',
      },
    });
    expect(notification.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(notification.create_time).toMatch(RFC3339_CST);
    expect(notification.resource.nonce).toMatch(/^[A-Za-z0-9]{12}$/);
    expect(plaintext).toEqual((await query(outTradeNo)).data);
    expect(plaintext).toMatchObject({ out_trade_no: outTradeNo, trade_state: 'SUCCESS' });
  });

  test('when notify_url answers 500, then the same callback is sent again, after WeChat’s first gap, until it is acknowledged', async () => {
    const hook = await receiver(500, 200);
    const outTradeNo = await paidOrder({ notify_url: hook.url });
    await sandbox.idle(outTradeNo);
    expect(hook.received).toHaveLength(2);
    const [first, second] = hook.received.map((r) => openCallback(r).notification);
    expect(second!.id).toBe(first!.id);
    // At once, then 15 s × 0.01 later.
    expect(CALLBACK_RETRY_DELAYS_MS[0]).toBe(15_000);
    expect(background.delaysFor(outTradeNo)).toEqual([0, 15_000 * TIME_SCALE]);
  });

  test('when a refund succeeds, then its notify_url gets a signed REFUND.SUCCESS with the refund', async () => {
    const hook = await receiver();
    const outTradeNo = await paidOrder();
    const outRefundNo = tradeNo();
    const res = await refund({
      out_trade_no: outTradeNo,
      out_refund_no: outRefundNo,
      notify_url: hook.url,
      amount: { refund: 100, total: 100, currency: 'CNY' },
    });
    const received = await until('the refund callback', async () => hook.received[0], WAIT_MS);
    const { notification, plaintext } = openCallback(received);
    expect(notification).toMatchObject({
      event_type: 'REFUND.SUCCESS',
      summary: '退款成功',
      resource: { original_type: 'refund', associated_data: 'refund' },
    });
    expect(plaintext).toMatchObject({
      sp_mchid: keys.spMchid,
      sub_mchid: SUB_MCHID,
      out_trade_no: outTradeNo,
      transaction_id: res.data.transaction_id,
      refund_id: res.data.refund_id,
      out_refund_no: outRefundNo,
      refund_status: 'SUCCESS',
      user_received_account: '支付用户零钱',
      amount: { total: 100, refund: 100, payer_total: 100, payer_refund: 100 },
    });
    expect((plaintext as { success_time: string }).success_time).toMatch(RFC3339_CST);
  });

  test('when a refund reason injects [sandbox:abnormal], then it ends ABNORMAL with a REFUND.ABNORMAL callback', async () => {
    const hook = await receiver();
    const outTradeNo = await paidOrder();
    const outRefundNo = tradeNo();
    await refund({
      out_trade_no: outTradeNo,
      out_refund_no: outRefundNo,
      reason: 'test [sandbox:abnormal]',
      notify_url: hook.url,
      amount: { refund: 10, total: 100, currency: 'CNY' },
    });
    const received = await until('the refund callback', async () => hook.received[0], WAIT_MS);
    expect(openCallback(received).notification.event_type).toBe('REFUND.ABNORMAL');
    expect((await queryRefund(outRefundNo)).data.status).toBe('ABNORMAL');
    expect((await query(outTradeNo)).data.trade_state).toBe('SUCCESS');
  });

  test('when the description injects [sandbox:callback-lost], then no payment callback is sent', async () => {
    const hook = await receiver();
    const outTradeNo = await paidOrder({ notify_url: hook.url, description: 'lost [sandbox:callback-lost]' });
    await sandbox.idle(outTradeNo);
    expect(hook.received).toHaveLength(0);
  });

  test('when the description injects [sandbox:callback-duplicate], then the callback arrives twice with one id', async () => {
    const hook = await receiver();
    const outTradeNo = await paidOrder({
      notify_url: hook.url,
      description: 'twice [sandbox:callback-duplicate]',
    });
    await sandbox.idle(outTradeNo);
    const ids = hook.received.map((r) => openCallback(r).notification.id);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(ids[0]);
  });

  test('when the description injects [sandbox:callback-out-of-order], then the payment callback waits for a refund and comes after the refund’s', async () => {
    const hook = await receiver();
    const outTradeNo = await paidOrder({
      notify_url: hook.url,
      description: 'swapped [sandbox:callback-out-of-order]',
    });
    // Held for a refund, not for a time: nothing is due until one is announced.
    await sandbox.idle(outTradeNo);
    expect(hook.received).toHaveLength(0);
    await refund({
      out_trade_no: outTradeNo,
      out_refund_no: tradeNo(),
      notify_url: hook.url,
      amount: { refund: 40, total: 100, currency: 'CNY' },
    });
    await sandbox.idle(outTradeNo);
    expect(hook.received.map((r) => openCallback(r).notification.event_type)).toEqual([
      'REFUND.SUCCESS',
      'TRANSACTION.SUCCESS',
    ]);
  });

  test('when the description injects [sandbox:callback-late], then the callback is scheduled 5 s × timeScale late, and arrives', async () => {
    const hook = await receiver();
    const outTradeNo = await paidOrder({ notify_url: hook.url, description: 'late [sandbox:callback-late]' });
    expect(background.delaysFor(outTradeNo)).toEqual([5_000 * TIME_SCALE]);
    await sandbox.idle(outTradeNo);
    expect(hook.received).toHaveLength(1);
    expect(openCallback(hook.received[0]!).notification.event_type).toBe('TRANSACTION.SUCCESS');
  });
});

describe('keys', () => {
  test('when keys are kept in a directory, then a restart loads the same keys from owner-only files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wechatpay-sandbox-'));
    try {
      const made = loadOrCreateWechatpaySandboxKeys(path.join(dir, 'keys'));
      expect(made.spMchid).toMatch(/^\d{10}$/);
      expect(made.spAppid).toMatch(/^wx[0-9a-f]{16}$/);
      expect(made.merchantSerial).toMatch(/^[0-9A-F]{40}$/);
      expect(made.platformPublicKeyId).toMatch(/^PUB_KEY_ID_\d{32}$/);
      expect(made.apiV3Key).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(loadOrCreateWechatpaySandboxKeys(path.join(dir, 'keys'))).toEqual(made);
      const settings = wechatpaySettings(made, 'http://127.0.0.1:8080/wechatpay/', path.join(dir, 'keys'));
      expect(settings.WECHATPAY_BASE_URL).toBe('http://127.0.0.1:8080/wechatpay');
      for (const name of [
        'WECHATPAY_MERCHANT_PRIVATE_KEY_FILE',
        'WECHATPAY_APIV3_KEY_FILE',
        'WECHATPAY_PUBLIC_KEY_FILE',
      ]) {
        const file = settings[name]!;
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      }
      expect(fs.readFileSync(settings.WECHATPAY_MERCHANT_PRIVATE_KEY_FILE!, 'utf8')).toBe(
        made.merchantPrivateKeyPem,
      );
      expect(fs.readFileSync(settings.WECHATPAY_APIV3_KEY_FILE!, 'utf8')).toBe(made.apiV3Key);
      const json = path.join(dir, 'keys', 'wechatpay-sandbox-keys.json');
      expect(fs.statSync(json).mode & 0o777).toBe(0o600);
      expect(wechatpaySettings(made, 'http://x/wechatpay').WECHATPAY_MERCHANT_PRIVATE_KEY).toBe(
        made.merchantPrivateKeyPem,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('when settings are asked for certificate mode, then they name no public key and ask durapay to download certificates', () => {
    const settings = wechatpaySettings(keys, base, undefined, 'certificate');
    expect(settings.WECHATPAY_PLATFORM_CERTIFICATES).toBe('download');
    expect(Object.keys(settings).filter((k) => k.startsWith('WECHATPAY_PUBLIC_KEY'))).toEqual([]);
    expect(loadConfig(settings).wechatpay).toMatchObject({ platformCertificates: true });
  });
});

describe('platform certificates', () => {
  test('when /v3/certificates is asked for, then each certificate is sealed with the APIv3 key under its serial, and the answer is signed', async () => {
    const res = await call<{ data: { serial_no: string; encrypt_certificate: Record<string, string> }[] }>(
      wxpay.v3.certificates.get({ ...ANY_STATUS }),
    );
    expect(res.status).toBe(200);
    const [listed] = res.data.data;
    expect(listed!.serial_no).toBe(sandbox.platformCertificates()[0]!.serial);
    const { ciphertext, nonce, associated_data: aad } = listed!.encrypt_certificate;
    expect(aad).toBe('certificate');
    const pem = Aes.AesGcm.decrypt(ciphertext!, keys.apiV3Key, nonce!, aad);
    const cert = new X509Certificate(pem);
    expect(cert.serialNumber.toUpperCase()).toBe(listed!.serial_no);
    // The public key mode's key and the certificate's are one pair here.
    expect(cert.publicKey.export({ type: 'spki', format: 'pem' })).toBe(keys.platformPublicKeyPem);
  });
});
