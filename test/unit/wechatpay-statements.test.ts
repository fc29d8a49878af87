/**
 * durapay's WeChat Pay statements port (申请交易账单 through wechatpay-axios-plugin, signed
 * download of the link, gzip and SHA-1 read back) against the offline v3 sandbox's tradebill: an
 * empty day, a day not made yet, a link expired before its use, the statement's lines as the
 * sandbox steers them, the older layout, and a payment lost until released.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import express from 'express';
import {
  createWechatpaySandbox,
  generateWechatpaySandboxKeys,
  type WechatpaySandbox,
  type WechatpaySandboxKeys,
} from '../../sandbox/wechatpay';
import { shanghaiDay } from '../../sandbox/wechatpay/tradebill';
import { ChannelError } from '../../src/channels/errors';
import type { StatementFile, StatementRow } from '../../src/channels/ports';
import { WechatpayChannel } from '../../src/channels/wechatpay';
import { until } from '../support/wait';

jest.setTimeout(30_000);

let keys: WechatpaySandboxKeys;
let sandbox: WechatpaySandbox;
let server: http.Server;
let channel: WechatpayChannel;
let dir: string;
let sequence = 0;
let subMchidSequence = 0;

const no = (prefix: string) => `${prefix}${Date.now()}${sequence++}`;
/** A sub-merchant of its own per test: a statement lists one sub-merchant's day. */
const newSubMchid = () => `19000${String(Date.now() % 100_000).padStart(5, '0')}${subMchidSequence++}`;
const today = () => shanghaiDay(Date.now());

beforeAll(async () => {
  keys = generateWechatpaySandboxKeys();
  dir = mkdtempSync(path.join(tmpdir(), 'durapay-wechatpay-statements-'));
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechatpay`;
  sandbox = createWechatpaySandbox({ keys, publicBaseUrl: base, refundDelayMs: 50 });
  app.use('/wechatpay', sandbox.router);
  channel = new WechatpayChannel({
    baseUrl: base,
    spMchid: keys.spMchid,
    spAppid: keys.spAppid,
    merchantSerial: keys.merchantSerial,
    merchantPrivateKey: keys.merchantPrivateKeyPem,
    apiV3Key: keys.apiV3Key,
    publicKeyId: keys.platformPublicKeyId,
    publicKey: keys.platformPublicKeyPem,
    timeoutMs: 5_000,
  });
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** A Native order made by the adapter and paid at the sandbox's checkout; its transaction_id. */
async function pay(subMchid: string, amount: number, subject: string): Promise<{ tradeNo: string }> {
  const tradeNo = no('P');
  const created = await channel.payments.create(
    { currency: 'CNY', subMerchantNo: subMchid },
    {
      tradeNo,
      amount,
      payMethod: 'qr_code',
      subject,
      expireAt: new Date(Date.now() + 3_600_000),
      callbackUrl: 'http://127.0.0.1:9/unused',
      profitSharing: false,
    },
  );
  const paid = await fetch(String(created.payCredential.code_url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  expect(paid.status).toBe(200);
  return { tradeNo };
}

async function statement(
  subMchid: string,
): Promise<{ file: StatementFile; rows: StatementRow[]; path: string }> {
  const target = path.join(dir, `${no('bill')}.gz`);
  const file = await channel.statements.fetch({ subMerchantNo: subMchid }, today(), target);
  const rows: StatementRow[] = [];
  if (file.status === 'ready') for await (const row of channel.statements.parse(target, file)) rows.push(row);
  return { file, rows, path: target };
}

test('when nothing was paid on the day, then the statement is empty (NO_STATEMENT_EXIST)', async () => {
  expect((await statement(newSubMchid())).file).toEqual({ status: 'empty' });
});

test('when the statement is not made yet, then fetch says not ready, and once it is made, ready', async () => {
  const subMchid = newSubMchid();
  await pay(subMchid, 100, 'tea');
  sandbox.holdStatement(today(), 1);
  const first = await statement(subMchid);
  expect(first.file).toEqual({ status: 'not_ready', reason: expect.stringContaining('STATEMENT_CREATING') });
  expect((await statement(subMchid)).file).toMatchObject({ status: 'ready' });
});

test('when the link has expired before it is used, then the statement is asked for again and downloaded; links that keep expiring are a refusal', async () => {
  const subMchid = newSubMchid();
  await pay(subMchid, 100, 'tea');
  const asked = sandbox.statementRequests(today());
  sandbox.expireStatementLinks(1);
  const { file, rows } = await statement(subMchid);
  expect(file).toMatchObject({ status: 'ready', format: 'wechatpay-tradebill-gzip' });
  expect(rows).toHaveLength(1);
  expect(sandbox.statementRequests(today()) - asked).toBe(2);

  sandbox.expireStatementLinks(3);
  const err = await statement(subMchid).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ChannelError);
  expect(err).toMatchObject({ kind: 'refused' });
  expect(sandbox.statementRequests(today()) - asked).toBe(5);
  sandbox.expireStatementLinks(0);
});

test('when a day had payments and refunds, some steered, then the statement lists them as the sandbox wrote them, with its published hash', async () => {
  const subMchid = newSubMchid();
  const plain = await pay(subMchid, 1000, 'tea, green, 2 boxes');
  const plusOne = await pay(subMchid, 250, 'cake [statement:amount+1]');
  await pay(subMchid, 300, 'hidden [statement:omit]');
  const ctx = { subMerchantNo: subMchid };
  const refund = (refundNo: string, amount: number, reason: string) =>
    channel.refunds.refund(ctx, {
      tradeNo: plain.tradeNo,
      refundNo,
      amount,
      totalAmount: 1000,
      reason,
      callbackUrl: 'http://127.0.0.1:9/unused',
    });
  const settled = no('R');
  const shownProcessing = no('R');
  await refund(settled, 100, 'too sweet');
  await refund(shownProcessing, 200, 'late [statement:refund-processing]');
  for (const refundNo of [settled, shownProcessing]) {
    await until('the refund settled', async () =>
      (await channel.refunds.query(ctx, { tradeNo: plain.tradeNo, refundNo })).status === 'success'
        ? true
        : undefined,
    );
  }

  const { file, rows, path: saved } = await statement(subMchid);
  expect(file).toMatchObject({ status: 'ready', channelHash: expect.stringMatching(/^SHA1:[0-9a-f]{40}$/) });
  const text = gunzipSync(readFileSync(saved)).toString('utf8');
  expect(text.startsWith('\ufeff交易时间,公众账号ID,商户号,特约商户号,')).toBe(true);
  expect(text).toContain('`tea, green, 2 boxes,`');
  expect(
    text
      .split('\r\n')
      .filter((l) => /^`\d{4}-/.test(l))
      .every((l) => l.split(',`').length === 27),
  ).toBe(true);

  const byKey = new Map(rows.map((r) => [`${r.kind}:${r.refundNo ?? r.tradeNo}`, r]));
  expect(rows).toHaveLength(4);
  expect(byKey.get(`payment:${plain.tradeNo}`)).toMatchObject({ amount: 1000, fee: 6000, status: 'success' });
  expect(byKey.get(`payment:${plusOne.tradeNo}`)).toMatchObject({ amount: 251, fee: 1506 });
  expect(byKey.get(`refund:${settled}`)).toMatchObject({
    tradeNo: plain.tradeNo,
    amount: 100,
    fee: -600,
    status: 'success',
    channelNo: expect.stringMatching(/^50\d+$/),
  });
  expect(byKey.get(`refund:${shownProcessing}`)).toMatchObject({ amount: 200, status: 'processing' });
});

test('when a sub-merchant is on the older layout, then its 24-column statement reads the same', async () => {
  const subMchid = newSubMchid();
  const { tradeNo } = await pay(subMchid, 1234, 'old merchant');
  sandbox.useLegacyStatement(subMchid);
  const { rows, path: saved } = await statement(subMchid);
  expect(gunzipSync(readFileSync(saved)).toString('utf8')).toContain(',子商户号,');
  expect(rows).toEqual([expect.objectContaining({ kind: 'payment', tradeNo, amount: 1234, fee: 7404 })]);
});

test('when a payment is lost until released, then queries fail at the network until the release, and the statement lists it all along', async () => {
  const subMchid = newSubMchid();
  const { tradeNo } = await pay(subMchid, 500, 'lost [sandbox:lost-until-released]');
  const ctx = { subMerchantNo: subMchid };
  const err = await channel.payments.query(ctx, tradeNo).catch((e: unknown) => e);
  expect(err).toMatchObject({ kind: 'unreachable' });
  expect((await statement(subMchid)).rows).toEqual([expect.objectContaining({ tradeNo, amount: 500 })]);
  sandbox.release(tradeNo);
  expect(await channel.payments.query(ctx, tradeNo)).toMatchObject({ status: 'paid' });
});
