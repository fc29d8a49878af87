/**
 * durapay's WeChat Pay transfers port (商家转账, its wire through wechatpay-axios-plugin, request
 * signing and answer verification on) against the offline v3 sandbox, over real HTTP: the payee
 * confirms and the money arrives with a verified, decrypted MCHTRANSFER.BILL.FINISHED callback;
 * the payee lets it lapse, or never confirms within the window, and WeChat Pay closes the bill
 * FAIL (OVERDUE_CLOSE); a cancel before the payee confirms, and one after; a refused create; a
 * create whose answer is lost, found by query; and a repeated create, which makes one bill.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  createWechatpaySandbox,
  generateWechatpaySandboxKeys,
  type WechatpaySandbox,
  type WechatpaySandboxKeys,
} from '../../sandbox/wechatpay';
import { ChannelError } from '../../src/channels/errors';
import type { ChannelContext, ChannelEvent, TransferInput } from '../../src/channels/ports';
import { WechatpayChannel } from '../../src/channels/wechatpay';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(30_000);

const SUB_MCHID = '1900000109';
const PARTNER: ChannelContext = { subMerchantNo: SUB_MCHID };
/** The service provider paying from its own account (the direct form). */
const DIRECT: ChannelContext = {};
/** A confirmed or cancelled bill settles after this long. */
const DELAY_MS = 100;
/** How long a payee has to confirm here (24 h at WeChat Pay). */
const CONFIRM_WINDOW_MS = 4_000;

let keys: WechatpaySandboxKeys;
let sandbox: WechatpaySandbox;
let server: http.Server;
let channel: WechatpayChannel;
const hook = new Receiver();
let sequence = 0;

const no = () => `TR${Date.now()}${sequence++}`;

function transfer(overrides: Partial<TransferInput> = {}): TransferInput {
  return {
    transferNo: no(),
    amount: 188,
    payee: { type: 'openid', account: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
    remark: 'cash reward',
    scene: {
      id: '1000',
      reportInfos: [
        { type: '活动名称', content: '新会员有礼' },
        { type: '奖励说明', content: '注册会员抽奖一等奖' },
      ],
    },
    callbackUrl: hook.url,
    ...overrides,
  };
}

/** The transfer's callbacks so far, each verified and decoded by the adapter as the API would. */
async function callbacksOf(transferNo: string): Promise<ChannelEvent[]> {
  const events: ChannelEvent[] = [];
  for (const received of hook.received) {
    const req = { rawBody: Buffer.from(received.body, 'utf8'), headers: received.headers };
    const check = await channel.callbacks.verify(req);
    expect(check).toEqual({ ok: true });
    const event = await channel.callbacks.decode(req);
    if (event.kind === 'transfer' && event.transferNo === transferNo) events.push(event);
  }
  return events;
}

const callbackOf = (transferNo: string) =>
  until(`the callback of ${transferNo}`, async () => (await callbacksOf(transferNo))[0]);

/** The payee on the confirmation page, as a script: POST {"action"} to it. */
async function payee(packageInfo: string, action: 'confirm' | 'expire') {
  const res = await fetch(sandbox.transferConfirmUrl(packageInfo), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** A created transfer waiting for its payee; its input and package_info. */
async function waiting(ctx: ChannelContext, overrides: Partial<TransferInput> = {}) {
  const input = transfer(overrides);
  const created = await channel.transfers.create(ctx, input);
  if (created.status !== 'wait_user_confirm') throw new Error(`created ${created.status}`);
  expect(created.packageInfo).not.toBe('');
  return { input, created, packageInfo: created.packageInfo };
}

beforeAll(async () => {
  keys = generateWechatpaySandboxKeys();
  await hook.start();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechatpay`;
  sandbox = createWechatpaySandbox({
    keys,
    publicBaseUrl: base,
    refundDelayMs: DELAY_MS,
    transferConfirmWindowMs: CONFIRM_WINDOW_MS,
  });
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
  sandbox?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await hook.stop();
});

describe('a payee who confirms', () => {
  test('when a sub-merchant pays 2 000 yuan with the payee’s sealed name and the payee confirms, then the bill succeeds and the verified callback says so', async () => {
    const { input, created } = await waiting(PARTNER, {
      amount: 200_000,
      payee: { type: 'openid', account: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o', name: '张三' },
    });
    expect(created.channelTransferNo).toMatch(/^1330\d{30}$/);
    // The query carries no package_info.
    expect(await channel.transfers.query(PARTNER, input.transferNo)).toEqual({
      status: 'wait_user_confirm',
      channelTransferNo: created.channelTransferNo,
      packageInfo: '',
    });

    sandbox.confirmTransfer(input.transferNo);
    expect(await channel.transfers.query(PARTNER, input.transferNo)).toMatchObject({ status: 'processing' });
    const event = await callbackOf(input.transferNo);
    expect(event).toEqual({
      kind: 'transfer',
      eventId: expect.any(String),
      transferNo: input.transferNo,
      state: {
        status: 'success',
        channelTransferNo: created.channelTransferNo,
        finishedAt: expect.any(Date),
      },
      amount: 200_000,
      subMerchantNo: SUB_MCHID,
    });
    expect(channel.callbacks.identify(event).subject).toEqual({
      kind: 'transfer_no',
      transferNo: input.transferNo,
    });
    expect(await channel.transfers.query(PARTNER, input.transferNo)).toMatchObject({ status: 'success' });
  });

  test('when the payee confirms on the page, then TRANSFERING, and with [transfer:fail] in the remark the bill fails with its reason', async () => {
    const { input, packageInfo } = await waiting(PARTNER, { remark: 'reward [transfer:fail]' });
    const page = await fetch(sandbox.transferConfirmUrl(packageInfo));
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('>Confirm</button>');
    expect(html).toContain('>Let it expire</button>');
    expect(html).toContain(input.transferNo);

    expect(await payee(packageInfo, 'confirm')).toEqual({ status: 200, body: { state: 'TRANSFERING' } });
    // Confirmed once; a second confirmation is refused.
    expect((await payee(packageInfo, 'confirm')).status).toBe(400);
    const event = await callbackOf(input.transferNo);
    expect(event).toMatchObject({
      state: { status: 'failed', reason: expect.stringMatching(/^ACCOUNT_FROZEN: /) },
    });
  });
});

describe('a payee who does not confirm', () => {
  test('when the payee lets it expire, then WeChat Pay closes the bill FAIL with OVERDUE_CLOSE, and the callback says so', async () => {
    const { input, packageInfo } = await waiting(PARTNER);
    expect(await payee(packageInfo, 'expire')).toEqual({ status: 200, body: { state: 'FAIL' } });
    const event = await callbackOf(input.transferNo);
    expect(event).toMatchObject({
      state: { status: 'failed', reason: expect.stringMatching(/^OVERDUE_CLOSE: /) },
      subMerchantNo: SUB_MCHID,
    });
    expect(await channel.transfers.query(PARTNER, input.transferNo)).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^OVERDUE_CLOSE: /),
    });
  });

  test('when nobody acts within the confirmation window, then the bill closes the same way by itself', async () => {
    const { input } = await waiting(DIRECT);
    const started = Date.now();
    const event = await until(
      'the bill to close',
      async () => (await callbacksOf(input.transferNo))[0],
      CONFIRM_WINDOW_MS + 10_000,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(CONFIRM_WINDOW_MS - 1_000);
    expect(event).toMatchObject({
      state: { status: 'failed', reason: expect.stringMatching(/^OVERDUE_CLOSE: /) },
    });
    // The service provider's own bill names no sub-merchant.
    expect(event).not.toHaveProperty('subMerchantNo');
    expect(() => sandbox.confirmTransfer(input.transferNo)).toThrow(/FAIL/);
  });
});

describe('cancelling', () => {
  test('when the service provider cancels its own transfer before the payee confirms, then it is cancelling, then cancelled with its callback', async () => {
    const { input } = await waiting(DIRECT);
    expect(await channel.transfers.cancel!(DIRECT, input.transferNo)).toMatchObject({ status: 'cancelling' });
    const event = await callbackOf(input.transferNo);
    expect(event).toMatchObject({ state: { status: 'cancelled' } });
    expect(await channel.transfers.query(DIRECT, input.transferNo)).toMatchObject({ status: 'cancelled' });
    // Asked again, the cancel answers where it stands.
    expect(await channel.transfers.cancel!(DIRECT, input.transferNo)).toMatchObject({ status: 'cancelled' });
    // The bill is the service provider's: the partner form does not see it.
    expect(await channel.transfers.query(PARTNER, input.transferNo)).toEqual({ status: 'not_found' });
  });

  test('when the payee has already confirmed, then WeChat Pay refuses the cancel and the money goes on', async () => {
    const { input } = await waiting(PARTNER);
    sandbox.confirmTransfer(input.transferNo);
    const refused = await channel.transfers.cancel!(PARTNER, input.transferNo).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ChannelError);
    expect(refused).toMatchObject({ kind: 'refused', message: expect.stringMatching(/^INVALID_REQUEST: /) });
    expect(await callbackOf(input.transferNo)).toMatchObject({ state: { status: 'success' } });
  });
});

describe('refused and lost creates', () => {
  test('when WeChat Pay refuses the create, then it is a refusal with its message and no bill exists', async () => {
    const input = transfer({ remark: 'reward [transfer:refuse]' });
    const refused = await channel.transfers.create(PARTNER, input).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ChannelError);
    expect(refused).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(/^PARAM_ERROR: openid /),
    });
    expect(sandbox.transferCreates(input.transferNo)).toBe(1);
    expect(await channel.transfers.query(PARTNER, input.transferNo)).toEqual({ status: 'not_found' });
  });

  test('when the create’s answer is lost after the bill was made, then the adapter finds the bill by query and answers it with its package_info', async () => {
    const input = transfer({ remark: 'reward [transfer:lost]' });
    const created = await channel.transfers.create(PARTNER, input);
    expect(created).toMatchObject({ status: 'wait_user_confirm', packageInfo: expect.stringMatching(/.+/) });
    // The lost create and the repeat that fetched the package_info: still one bill.
    expect(sandbox.transferCreates(input.transferNo)).toBe(2);
    expect(await channel.transfers.query(PARTNER, input.transferNo)).toMatchObject({
      status: 'wait_user_confirm',
      channelTransferNo: created.channelTransferNo,
    });
    expect((await payee((created as { packageInfo: string }).packageInfo, 'confirm')).status).toBe(200);
    expect(await callbackOf(input.transferNo)).toMatchObject({ state: { status: 'success' } });
  });

  test('when the same create is sent again, then WeChat Pay answers the bill it made, never a second one', async () => {
    const { input, created } = await waiting(PARTNER);
    const again = await channel.transfers.create(PARTNER, input);
    expect(again).toEqual(created);
    expect(sandbox.transferCreates(input.transferNo)).toBe(2);
    sandbox.confirmTransfer(input.transferNo);
    await callbackOf(input.transferNo);
    await sandbox.idle(input.transferNo);
    // One bill, one final callback.
    expect(await callbacksOf(input.transferNo)).toHaveLength(1);
    // Reused with another amount, it is refused.
    const reused = await channel.transfers
      .create(PARTNER, { ...input, amount: input.amount + 1 })
      .catch((err: unknown) => err);
    expect(reused).toMatchObject({ kind: 'refused', message: expect.stringMatching(/^INVALID_REQUEST: /) });
  });

  test('when a transfer number was never used, then the query says not found', async () => {
    expect(await channel.transfers.query(PARTNER, no())).toEqual({ status: 'not_found' });
    expect(await channel.transfers.query(DIRECT, no())).toEqual({ status: 'not_found' });
  });
});
