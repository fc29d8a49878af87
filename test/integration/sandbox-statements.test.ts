/**
 * The sandbox channel's statements (on a real Postgres, over signed HTTP): WeChat Pay's tradebill
 * format made from the simulator's orders and refunds of a sub-merchant's day, read back with the
 * same reader as WeChat Pay's; an empty day, a day held back, the statement markers, the older
 * layout, and a payment lost until released.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import express from 'express';
import { createSandboxRouter } from '../../sandbox';
import { Background } from '../../sandbox/background';
import { SandboxControls } from '../../sandbox/controls';
import { shanghaiDay } from '../../sandbox/wechatpay/tradebill';
import { SandboxChannel } from '../../src/channels/sandbox';
import type { StatementFile, StatementRow } from '../../src/channels/ports';
import { captureLogger, createTestDatabase, type TestDatabase } from '../support/harness';
import { until } from '../support/wait';

jest.setTimeout(60_000);

const SECRET = `sbx_${randomBytes(16).toString('hex')}`;

let database: TestDatabase;
let server: http.Server;
let origin = '';
let background: Background;
let channel: SandboxChannel;
let dir: string;
const controls = new SandboxControls();
let sequence = 0;

const no = (prefix: string) => `${prefix}${Date.now()}${sequence++}`;
const today = () => shanghaiDay(Date.now());

beforeAll(async () => {
  database = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'durapay-sandbox-statements-'));
  const { logger } = captureLogger();
  background = new Background((err) => logger.error('sandbox task failed', { error: String(err) }));
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  app.use(
    '/sandbox',
    createSandboxRouter({
      db: database.db,
      secret: SECRET,
      publicBaseUrl: origin,
      refundDelayMs: 50,
      logger,
      background,
      controls,
    }),
  );
  channel = new SandboxChannel({ baseUrl: `${origin}/sandbox`, secret: SECRET, timeoutMs: 3_000 });
});

afterAll(async () => {
  await channel.close();
  background.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function pay(subMerchantNo: string, amount: number, subject: string): Promise<string> {
  const tradeNo = no('P');
  await channel.payments.create(
    { currency: 'CNY', subMerchantNo },
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
  const paid = await fetch(`${origin}/sandbox/pay/${tradeNo}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'success' }),
  });
  expect(paid.status).toBe(200);
  return tradeNo;
}

async function statement(
  subMerchantNo?: string,
): Promise<{ file: StatementFile; rows: StatementRow[]; text: string }> {
  const target = path.join(dir, `${no('bill')}.gz`);
  const file = await channel.statements.fetch(subMerchantNo ? { subMerchantNo } : {}, today(), target);
  const rows: StatementRow[] = [];
  if (file.status !== 'ready') return { file, rows, text: '' };
  for await (const row of channel.statements.parse(target, file)) rows.push(row);
  return { file, rows, text: gunzipSync(readFileSync(target)).toString('utf8') };
}

test('when a sub-merchant had nothing on the day, then its statement is empty', async () => {
  expect((await statement(no('SUB'))).file).toEqual({ status: 'empty' });
});

test('when the day is held back, then fetch says not ready, then ready', async () => {
  const sub = no('SUB');
  await pay(sub, 100, 'tea');
  controls.holdStatement(today(), 1);
  expect((await statement(sub)).file).toEqual({
    status: 'not_ready',
    reason: expect.stringContaining('being made'),
  });
  expect((await statement(sub)).file).toMatchObject({
    status: 'ready',
    format: 'wechatpay-tradebill-gzip',
    channelHash: expect.stringMatching(/^SHA1:[0-9a-f]{40}$/),
  });
});

test('when a day had payments and refunds, some steered, then the statement lists them as steered, in the tradebill format', async () => {
  const sub = no('SUB');
  const plain = await pay(sub, 1000, 'tea, green');
  const plusOne = await pay(sub, 250, 'cake [statement:amount+1]');
  await pay(sub, 300, 'hidden [statement:omit]');
  const ctx = { subMerchantNo: sub };
  const settled = no('R');
  const shownProcessing = no('R');
  for (const [refundNo, amount, reason] of [
    [settled, 100, 'too sweet'],
    [shownProcessing, 200, 'late [statement:refund-processing]'],
  ] as const) {
    await channel.refunds.refund(ctx, {
      tradeNo: plain,
      refundNo,
      amount,
      totalAmount: 1000,
      reason,
      callbackUrl: 'http://127.0.0.1:9/unused',
    });
    await until('the refund settled', async () =>
      (await channel.refunds.query(ctx, { tradeNo: plain, refundNo })).status === 'success'
        ? true
        : undefined,
    );
  }
  const { rows, text } = await statement(sub);
  expect(text.startsWith('\ufeff交易时间,公众账号ID,商户号,特约商户号,')).toBe(true);
  expect(text).toContain('`tea, green,`');
  const byKey = new Map(rows.map((r) => [`${r.kind}:${r.refundNo ?? r.tradeNo}`, r]));
  expect(rows).toHaveLength(4);
  expect(byKey.get(`payment:${plain}`)).toMatchObject({ amount: 1000, fee: 6000, status: 'success' });
  expect(byKey.get(`payment:${plusOne}`)).toMatchObject({ amount: 251 });
  expect(byKey.get(`refund:${settled}`)).toMatchObject({
    tradeNo: plain,
    amount: 100,
    fee: -600,
    status: 'success',
  });
  expect(byKey.get(`refund:${shownProcessing}`)).toMatchObject({ amount: 200, status: 'processing' });

  // Without a sub-merchant, the whole sandbox's day: this one's lines among the others'.
  const whole = await statement();
  expect(whole.rows).toEqual(expect.arrayContaining(rows));
});

test('when a sub-merchant is on the older layout, then its statement has 24 columns and reads the same', async () => {
  const sub = no('SUB');
  const tradeNo = await pay(sub, 1234, 'old merchant');
  controls.useLegacyStatement(sub);
  const { rows, text } = await statement(sub);
  expect(text).toContain(',子商户号,');
  expect(rows).toEqual([expect.objectContaining({ kind: 'payment', tradeNo, amount: 1234 })]);
});

test('when a payment is lost until released, then its queries fail at the network until the release, and the statement lists it', async () => {
  const sub = no('SUB');
  const tradeNo = await pay(sub, 500, 'lost [sandbox:lost-until-released]');
  const ctx = { subMerchantNo: sub };
  expect(await channel.payments.query(ctx, tradeNo).catch((e: unknown) => e)).toMatchObject({
    kind: 'unreachable',
  });
  expect((await statement(sub)).rows).toEqual([expect.objectContaining({ tradeNo, amount: 500 })]);
  controls.release(tradeNo);
  expect(await channel.payments.query(ctx, tradeNo)).toMatchObject({ status: 'paid' });
});
