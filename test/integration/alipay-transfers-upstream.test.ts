// Longer than 300 lines: each steered transfer and each documented refusal with a test of its own.
/**
 * durapay's Alipay transfers port against the offline gateway over real HTTP: every call signed
 * by alipay-sdk and every answer's signature checked by it (validateSign) against the Alipay
 * public key, so each answer below is one the SDK took for Alipay's. The gateway's steered
 * transfers (remark markers) stand for what Alipay does: a transfer that fails later, a refusal,
 * an answer lost after the transfer was made, a slow one; the gateway counts what it was sent.
 * No Temporal, no database: an Express app with the router on an ephemeral port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AlipaySdk } from 'alipay-sdk';
import express from 'express';
import {
  createAlipaySandbox,
  generateAlipaySandboxKeys,
  type AlipaySandbox,
  type AlipaySandboxKeys,
} from '../../sandbox/alipay';
import { AlipayChannel, type AlipayChannelOptions } from '../../src/channels/alipay';
import { ChannelError } from '../../src/channels/errors';
import type { ChannelContext, TransferInput, TransferState } from '../../src/channels/ports';
import { until } from '../support/wait';

jest.setTimeout(30_000);

let keys: AlipaySandboxKeys;
let sandbox: AlipaySandbox;
let server: http.Server;
let options: AlipayChannelOptions;
let channel: AlipayChannel;
let sequence = 0;

const transferNo = () => `TR${Date.now()}${sequence++}`;
const USER_ID = '2088102177846880';

beforeAll(async () => {
  keys = generateAlipaySandboxKeys();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The transfers' own delays are left at the gateway's defaults (1 s to FAIL, 3 s to SUCCESS).
  sandbox = createAlipaySandbox({ keys, publicBaseUrl: `${origin}/alipay`, timeScale: 0.001 });
  app.use('/alipay', sandbox.router);
  options = {
    gatewayUrl: `${origin}/alipay/gateway.do`,
    appId: keys.appId,
    sellerId: keys.sellerId,
    privateKey: keys.appPrivateKeyPem,
    alipayPublicKey: keys.alipayPublicKeyPem,
    timeoutMs: 5_000,
  };
  channel = new AlipayChannel(options);
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function transfer(overrides: Partial<TransferInput> = {}): TransferInput {
  return {
    transferNo: transferNo(),
    amount: 1234,
    payee: { type: 'alipay_user_id', account: USER_ID },
    remark: 'Commission for March',
    callbackUrl: 'http://127.0.0.1:9/notify',
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<ChannelError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ChannelError)) throw new Error(`expected a ChannelError, got ${String(err)}`);
  return err;
}

/** Queries until the transfer is in `status` (it moves when its time has come). */
function queriedUntil(ctx: ChannelContext, no: string, status: TransferState['status']) {
  return until(
    `transfer ${no} to be ${status}`,
    async () => {
      const state = await channel.transfers.query(ctx, no);
      return state.status === status ? state : undefined;
    },
    10_000,
  );
}

test('when a transfer is made, then it succeeds at once, a query finds it paid, and the gateway holds one of the amount asked', async () => {
  const input = transfer({
    amount: 10,
    payee: { type: 'alipay_logon_id', account: 'tea@example.com', name: '王小二' },
  });
  const created = await channel.transfers.create({}, input);
  expect(created).toEqual({
    status: 'success',
    channelTransferNo: expect.stringMatching(/^\d{32}$/),
    finishedAt: expect.any(Date),
  });
  expect(await channel.transfers.query({}, input.transferNo)).toEqual({
    ...created,
    finishedAt: expect.any(Date),
  });
  const [made, ...more] = sandbox.transfers(input.transferNo);
  expect(more).toHaveLength(0);
  expect(made).toMatchObject({
    status: 'SUCCESS',
    amountFen: 10,
    orderId: created.channelTransferNo,
    payee: { identity: 'tea@example.com', identityType: 'ALIPAY_LOGON_ID', name: '王小二' },
    orderTitle: 'Commission for March',
    remark: 'Commission for March',
  });
  expect(sandbox.transferRequests(input.transferNo)).toBe(1);
});

test('when a transfer is one Alipay fails later, then it is processing at first and failed with the reason by query', async () => {
  const input = transfer({ remark: 'Commission [transfer:fail]' });
  const created = await channel.transfers.create({}, input);
  expect(created).toEqual({ status: 'processing', channelTransferNo: expect.any(String) });
  expect(await channel.transfers.query({}, input.transferNo)).toEqual(created);
  const failed = await queriedUntil({}, input.transferNo, 'failed');
  expect(failed).toEqual({
    status: 'failed',
    channelTransferNo: created.channelTransferNo,
    reason: expect.stringMatching(/^Alipay failed the transfer: PAYEE_USER_INFO_ERROR: /),
  });
});

test('when Alipay refuses a transfer, then create throws a refusal with its words and nothing was made', async () => {
  const input = transfer({ remark: 'Commission [transfer:refuse]' });
  const err = await rejection(channel.transfers.create({}, input));
  expect(err.kind).toBe('refused');
  expect(err.message).toMatch(/^PAYEE_NOT_EXIST: 收款账号不存在/);
  expect(await channel.transfers.query({}, input.transferNo)).toEqual({ status: 'not_found' });
  expect(sandbox.transfers(input.transferNo)).toEqual([]);
});

test('when the answer to a transfer is lost, then create leaves the outcome unknown, a query finds it paid, and the gateway made it once', async () => {
  const input = transfer({ remark: 'Commission [transfer:lost]' });
  const err = await rejection(channel.transfers.create({}, input));
  expect(['unreachable', 'timeout']).toContain(err.kind);
  // The SDK's HTTP client sent it again once when the socket failed: still one transfer.
  expect(sandbox.transferRequests(input.transferNo)).toBeGreaterThanOrEqual(1);
  expect(sandbox.transfers(input.transferNo)).toEqual([expect.objectContaining({ status: 'SUCCESS' })]);
  expect(await channel.transfers.query({}, input.transferNo)).toEqual({
    status: 'success',
    channelTransferNo: sandbox.transfers(input.transferNo)[0]!.orderId,
    finishedAt: expect.any(Date),
  });
  // Sent again under the same number (what a retried activity does): its answer is lost too, and
  // the same transfer stands alone.
  const requests = sandbox.transferRequests(input.transferNo);
  expect((await rejection(channel.transfers.create({}, input))).kind).toBe('unreachable');
  expect(sandbox.transferRequests(input.transferNo)).toBeGreaterThan(requests);
  expect(sandbox.transfers(input.transferNo)).toHaveLength(1);
});

test('when a transfer is slow, then it is processing for a while and then succeeds', async () => {
  const input = transfer({ remark: 'Commission [transfer:slow]' });
  const started = Date.now();
  const created = await channel.transfers.create({}, input);
  expect(created).toEqual({ status: 'processing', channelTransferNo: expect.any(String) });
  expect(await channel.transfers.query({}, input.transferNo)).toMatchObject({ status: 'processing' });
  const done = await queriedUntil({}, input.transferNo, 'success');
  expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
  expect(done).toMatchObject({ channelTransferNo: created.channelTransferNo });
});

test('when the same transfer is created again, at once and later, then the gateway makes one transfer and every answer is it', async () => {
  const input = transfer();
  const answers = await Promise.all(Array.from({ length: 5 }, () => channel.transfers.create({}, input)));
  answers.push(await channel.transfers.create({}, input));
  const orderIds = new Set(answers.map((a) => a.channelTransferNo));
  expect(orderIds.size).toBe(1);
  expect(answers.every((a) => a.status === 'success')).toBe(true);
  expect(sandbox.transfers(input.transferNo)).toHaveLength(1);
  expect(sandbox.transferRequests(input.transferNo)).toBe(6);
});

test('when the number is sent again with another amount, then the gateway refuses it and the transfer under it stands', async () => {
  const input = transfer();
  const first = await channel.transfers.create({}, input);
  // The adapter looks the number up on PAYMENT_INFO_INCONSISTENCY: it answers the transfer made.
  expect(await channel.transfers.create({}, { ...input, amount: 999 })).toEqual({
    ...first,
    finishedAt: expect.any(Date),
  });
  expect(sandbox.transfers(input.transferNo)).toEqual([expect.objectContaining({ amountFen: 1234 })]);
});

test('when a merchant that authorised the app transfers, then it is made with its app_auth_token and found only with it', async () => {
  const grant = sandbox.mintAppAuthToken();
  const ctx: ChannelContext = { appAuthToken: grant.appAuthToken, subMerchantNo: grant.userId };
  const input = transfer();
  expect(await channel.transfers.create(ctx, input)).toMatchObject({ status: 'success' });
  expect(sandbox.transfers(input.transferNo)).toEqual([
    expect.objectContaining({ appAuthToken: grant.appAuthToken, status: 'SUCCESS' }),
  ]);
  expect(await channel.transfers.query(ctx, input.transferNo)).toMatchObject({ status: 'success' });
  // The app's own transfers are another merchant's: the number is not known there.
  expect(await channel.transfers.query({}, input.transferNo)).toEqual({ status: 'not_found' });
  // Under the app's own account the same number is a transfer of its own.
  expect(await channel.transfers.create({}, input)).toMatchObject({ status: 'success' });
  expect(sandbox.transfers(input.transferNo)).toHaveLength(2);

  expect(sandbox.expireAppAuth(grant.appAuthToken)).toBe(true);
  const err = await rejection(channel.transfers.create(ctx, transfer()));
  expect(err).toMatchObject({ kind: 'refused', message: expect.stringMatching(/invalid-app-auth-token/) });
});

test('when an answer is checked with another Alipay public key, then the SDK rejects its signature and the outcome is unknown', async () => {
  const other = generateAlipaySandboxKeys();
  const misled = new AlipayChannel({ ...options, alipayPublicKey: other.alipayPublicKeyPem });
  const input = transfer();
  const err = await rejection(misled.transfers.create({}, input));
  expect(err).toMatchObject({
    kind: 'unreachable',
    message: expect.stringMatching(/signature verification/),
  });
  // It was made all the same: only its answer could not be trusted.
  expect(await channel.transfers.query({}, input.transferNo)).toMatchObject({ status: 'success' });
});

describe('the gateway as Alipay documents it', () => {
  let sdk: AlipaySdk;
  const timestamp = () => {
    const iso = new Date(Date.now() + 8 * 3_600_000).toISOString();
    return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
  };
  const exec = async (method: string, bizContent: Record<string, unknown>) =>
    (await sdk.exec(method, { bizContent, timestamp: timestamp() }, { validateSign: true })) as Record<
      string,
      unknown
    >;

  beforeAll(() => {
    sdk = new AlipaySdk({
      appId: keys.appId,
      privateKey: keys.appPrivateKeyPem,
      keyType: 'PKCS8',
      alipayPublicKey: keys.alipayPublicKeyPem,
      gateway: options.gatewayUrl,
      camelcase: false,
    });
  });

  const biz = (overrides: Record<string, unknown> = {}) => ({
    out_biz_no: transferNo(),
    trans_amount: '0.10',
    product_code: 'TRANS_ACCOUNT_NO_PWD',
    biz_scene: 'DIRECT_TRANSFER',
    order_title: 'Commission',
    payee_info: { identity: USER_ID, identity_type: 'ALIPAY_USER_ID' },
    ...overrides,
  });

  test('when a transfer succeeds, then its answer carries order_id, pay_fund_order_id, status and trans_date', async () => {
    const answer = await exec('alipay.fund.trans.uni.transfer', biz());
    expect(answer).toMatchObject({
      code: '10000',
      msg: 'Success',
      order_id: expect.stringMatching(/^\d{32}$/),
      pay_fund_order_id: expect.stringMatching(/^\d{32}$/),
      status: 'SUCCESS',
      trans_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });
  });

  test.each([
    ['an amount below 0.10', { trans_amount: '0.09' }, '40004', 'EXCEED_LIMIT_SM_MIN_AMOUNT'],
    ['an amount of one decimal', { trans_amount: '0.1' }, '40002', 'isv.invalid-parameter'],
    ['another product', { product_code: 'STD_RED_PACKET' }, '40002', 'isv.invalid-parameter'],
    ['no order_title', { order_title: undefined }, '40002', 'isv.missing-parameter'],
    [
      'a logon id without a name',
      { payee_info: { identity: 'a@b.c', identity_type: 'ALIPAY_LOGON_ID' } },
      '40004',
      'INVALID_PARAMETER',
    ],
    [
      'a user id that is none',
      { payee_info: { identity: '123', identity_type: 'ALIPAY_USER_ID' } },
      '40004',
      'PAYEE_NOT_EXIST',
    ],
  ])('when a transfer has %s, then the gateway refuses it', async (_what, overrides, code, subCode) => {
    const answer = await exec('alipay.fund.trans.uni.transfer', biz(overrides));
    expect(answer).toMatchObject({ code, sub_code: subCode });
  });

  test('when a query names out_biz_no without its product and scene, then the gateway asks for them', async () => {
    const answer = await exec('alipay.fund.trans.common.query', { out_biz_no: transferNo() });
    expect(answer).toMatchObject({ code: '40002', sub_code: 'isv.missing-parameter' });
  });

  test('when a transfer is queried by its order_id, then it is found', async () => {
    const made = await exec('alipay.fund.trans.uni.transfer', biz());
    const answer = await exec('alipay.fund.trans.common.query', { order_id: made.order_id });
    expect(answer).toMatchObject({ code: '10000', status: 'SUCCESS', trans_amount: '0.10' });
  });
});
