/**
 * durapay's Alipay statements port (alipay-sdk on the wire, answers verified) against the offline
 * gateway: the day's trade statement asked for, downloaded at once and read back; a day without a
 * statement, one not generated yet, links that expired before use; a 直付通 secondary merchant's
 * own statement; and the gateway's faults for reconciliation (a wrong amount, a missing line, a
 * trade lost to the network until released).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import {
  BILL_METHOD,
  STATEMENT_AMOUNT_PLUS_ONE,
  STATEMENT_OMIT,
  beijingDay,
  createAlipaySandbox,
  generateAlipaySandboxKeys,
  type AlipaySandbox,
  type AlipaySandboxKeys,
} from '../../sandbox/alipay';
import { AlipayChannel } from '../../src/channels/alipay';
import { AlipayClient } from '../../src/channels/alipay/client';
import { alipayStatements, statementReadyBy } from '../../src/channels/alipay/statements';
import { ChannelError } from '../../src/channels/errors';
import type { ChannelContext, StatementFile, StatementRow } from '../../src/channels/ports';

jest.setTimeout(30_000);

let keys: AlipaySandboxKeys;
let sandbox: AlipaySandbox;
let server: http.Server;
let channel: AlipayChannel;
let gatewayUrl = '';
let dir = '';
let sequence = 0;

const no = (prefix: string) => `${prefix}${Date.now()}${sequence++}`;
const file = () => join(dir, `${no('statement')}.zip`);

beforeAll(async () => {
  keys = generateAlipaySandboxKeys();
  dir = mkdtempSync(join(tmpdir(), 'alipay-statements-'));
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox = createAlipaySandbox({ keys, publicBaseUrl: `${origin}/alipay`, timeScale: 0.001 });
  app.use('/alipay', sandbox.router);
  gatewayUrl = `${origin}/alipay/gateway.do`;
  channel = new AlipayChannel(options());
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function options() {
  return {
    gatewayUrl,
    appId: keys.appId,
    sellerId: keys.sellerId,
    privateKey: keys.appPrivateKeyPem,
    alipayPublicKey: keys.alipayPublicKeyPem,
    timeoutMs: 5_000,
  };
}

/** A merchant of its own that authorised the app, so that no other test's trades are on its statement. */
function merchant(): ChannelContext {
  const auth = sandbox.mintAppAuthToken();
  return { subMerchantNo: auth.userId, appAuthToken: auth.appAuthToken };
}

/** A qr_code trade made by the adapter and paid at the gateway's cashier; its channel trade number. */
async function pay(ctx: ChannelContext, amount: number, subject = 'Green tea') {
  const tradeNo = no('P');
  const created = await channel.payments.create(
    { ...ctx, currency: 'CNY' },
    {
      tradeNo,
      amount,
      payMethod: 'qr_code',
      subject,
      expireAt: new Date(Date.now() + 3_600_000),
      callbackUrl: 'http://127.0.0.1:9/notify',
      profitSharing: false,
    },
  );
  const paid = await fetch(String(created.payCredential.qr_code), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'success' }),
  });
  expect(paid.status).toBe(200);
  const { trade_no: channelNo } = (await paid.json()) as { trade_no: string };
  return { tradeNo, channelNo };
}

async function rowsOf(path: string, fetched: StatementFile): Promise<StatementRow[]> {
  if (fetched.status !== 'ready') throw new Error(`the statement is ${fetched.status}`);
  const rows: StatementRow[] = [];
  for await (const row of channel.statements.parse(path, fetched)) rows.push(row);
  return rows;
}

const today = () => beijingDay(Date.now());

test('when a merchant was paid and refunded today, then its statement is downloaded and reads back as a payment and a refund line', async () => {
  const ctx = merchant();
  const { tradeNo, channelNo } = await pay(ctx, 1000, 'Tea, green, "loose"');
  const refundNo = no('R');
  await channel.refunds.refund(ctx, {
    tradeNo,
    refundNo,
    amount: 300,
    totalAmount: 1000,
    reason: 'broken cup',
    callbackUrl: 'http://127.0.0.1:9/notify',
  });
  const path = file();
  const fetched = await channel.statements.fetch(ctx, today(), path);
  expect(fetched).toEqual({
    status: 'ready',
    format: 'alipay-trade-zip',
    size: expect.any(Number),
    channelHash: null,
  });
  const rows = await rowsOf(path, fetched);
  expect(rows).toEqual([
    {
      kind: 'payment',
      tradeNo,
      refundNo: null,
      channelNo,
      amount: 1000,
      fee: 6_000,
      status: 'success',
      time: expect.any(Date),
    },
    {
      kind: 'refund',
      tradeNo,
      refundNo,
      channelNo,
      amount: 300,
      fee: -2_000,
      status: 'success',
      time: expect.any(Date),
    },
  ]);
  const trade = sandbox.trade(tradeNo)!;
  expect(rows[0]!.time.getTime()).toBe(Date.parse(`${trade.gmt_payment!.replace(' ', 'T')}+08:00`));
});

test('when the day had nothing and its statement is long due, then the statement is empty', async () => {
  expect(await channel.statements.fetch(merchant(), '2020-01-01', file())).toEqual({ status: 'empty' });
});

test('when today has no line yet, then its statement is not ready (Alipay has not generated it)', async () => {
  const fetched = await channel.statements.fetch(merchant(), today(), file());
  expect(fetched).toEqual({ status: 'not_ready', reason: expect.stringContaining('isp.bill_not_exist') });
});

test('when Alipay holds a day back for one request, then the first fetch is not ready and the next one is ready', async () => {
  const ctx = merchant();
  await pay(ctx, 200);
  sandbox.holdStatement(today(), 1);
  expect((await channel.statements.fetch(ctx, today(), file())).status).toBe('not_ready');
  expect((await channel.statements.fetch(ctx, today(), file())).status).toBe('ready');
});

test('when a missing statement is asked for before 11:00 the next day, then it is not ready; after, empty', async () => {
  const day = '2020-01-01';
  const readyBy = statementReadyBy(day);
  expect(new Date(readyBy).toISOString()).toBe('2020-01-02T03:00:00.000Z');
  const early = alipayStatements(new AlipayClient(options()), { now: () => readyBy - 1 });
  const late = alipayStatements(new AlipayClient(options()), { now: () => readyBy });
  expect((await early.fetch(merchant(), day, file())).status).toBe('not_ready');
  expect(await late.fetch(merchant(), day, file())).toEqual({ status: 'empty' });
});

test('when the first link has expired before it is used, then another is asked for and the statement is ready', async () => {
  const ctx = merchant();
  await pay(ctx, 300);
  const asked = sandbox.requests(BILL_METHOD);
  sandbox.expireStatementLinks(1);
  const path = file();
  const fetched = await channel.statements.fetch(ctx, today(), path);
  expect(fetched.status).toBe('ready');
  expect(sandbox.requests(BILL_METHOD) - asked).toBe(2);
  expect(await rowsOf(path, fetched)).toHaveLength(1);
});

test('when every link expires before it is used, then the fetch gives up after three links as unreachable', async () => {
  const ctx = merchant();
  await pay(ctx, 300);
  const asked = sandbox.requests(BILL_METHOD);
  sandbox.expireStatementLinks(5);
  try {
    await expect(channel.statements.fetch(ctx, today(), file())).rejects.toMatchObject({
      name: 'ChannelError',
      kind: 'unreachable',
    });
    expect(sandbox.requests(BILL_METHOD) - asked).toBe(3);
  } finally {
    sandbox.expireStatementLinks(0);
  }
});

test('when a secondary merchant (smid) is asked about, then its own trade_zft_merchant statement is fetched', async () => {
  const smid = `2088${String(Date.now()).slice(-12)}`;
  const own = await pay({ subMerchantNo: smid }, 400);
  await pay({ subMerchantNo: `2088${String(Date.now() + 1).slice(-12)}` }, 500);
  const path = file();
  const rows = await rowsOf(path, await channel.statements.fetch({ subMerchantNo: smid }, today(), path));
  expect(rows.map((r) => [r.tradeNo, r.amount])).toEqual([[own.tradeNo, 400]]);
});

test('when trades carry the statement markers, then one is stated 1 fen higher and the other is left off', async () => {
  const ctx = merchant();
  const higher = await pay(ctx, 700, `Tea ${STATEMENT_AMOUNT_PLUS_ONE}`);
  const omitted = await pay(ctx, 800, `Tea ${STATEMENT_OMIT}`);
  const plain = await pay(ctx, 900);
  const path = file();
  const rows = await rowsOf(path, await channel.statements.fetch(ctx, today(), path));
  const amounts = Object.fromEntries(rows.map((r) => [r.tradeNo, r.amount]));
  expect(amounts).toEqual({ [higher.tradeNo]: 701, [plain.tradeNo]: 900 });
  expect(amounts[omitted.tradeNo]).toBeUndefined();
});

test('when a paid trade is lost until released, then queries fail as unreachable until the release, and no notification is sent', async () => {
  const ctx = merchant();
  const lost = await pay(ctx, 100, 'Tea [sandbox:lost-until-released]');
  await expect(channel.payments.query(ctx, lost.tradeNo)).rejects.toMatchObject({ kind: 'unreachable' });
  await expect(channel.payments.query(ctx, lost.tradeNo)).rejects.toBeInstanceOf(ChannelError);
  expect(sandbox.release(lost.tradeNo)).toBe(true);
  expect(await channel.payments.query(ctx, lost.tradeNo)).toMatchObject({ status: 'paid' });
  await sandbox.idle(lost.tradeNo);
  expect(sandbox.notifications(lost.tradeNo).sent).toBe(0);
  expect(sandbox.release(no('NONE'))).toBe(false);
});
