/**
 * durapay's WeChat Pay complaints port (消费者投诉2.0, its wire through wechatpay-axios-plugin,
 * request signing and answer verification on) against the offline v3 sandbox, over real HTTP:
 * the notification URL registered once (and moved), a complaint's notification verified and
 * decoded, the list across spans of 30 days, the detail with the payer's phone opened, the
 * history, a reply with an uploaded image, the completion, the payer's image fetched, and an
 * unknown complaint. The sandbox counts each call at its side.
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
import type { CreateContext } from '../../src/channels/ports';
import { WechatpayChannel } from '../../src/channels/wechatpay';
import { spansOf } from '../../src/channels/wechatpay/complaints';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(30_000);

const SUB_MCHID = '1900000109';
const PARTNER: CreateContext = { subMerchantNo: SUB_MCHID, currency: 'CNY' };
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let keys: WechatpaySandboxKeys;
let sandbox: WechatpaySandbox;
let server: http.Server;
let channel: WechatpayChannel;
const hook = new Receiver();
let sequence = 0;

/** A paid Native order of SUB_MCHID made through the payments port; its trade number. */
async function paidOrder(amount = 2_000): Promise<string> {
  const tradeNo = `P${Date.now()}${sequence++}`;
  const created = await channel.payments.create(PARTNER, {
    tradeNo,
    amount,
    payMethod: 'qr_code',
    subject: 'complaint port test',
    expireAt: new Date(Date.now() + 600_000),
    callbackUrl: hook.url,
    profitSharing: false,
  });
  const codeUrl = created.payCredential.code_url as string;
  const paid = await fetch(codeUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  expect(paid.status).toBe(200);
  return tradeNo;
}

const day = (offsetDays = 0) =>
  new Date(Date.now() + 8 * 3_600_000 + offsetDays * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  keys = generateWechatpaySandboxKeys();
  await hook.start();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechatpay`;
  sandbox = createWechatpaySandbox({ keys, publicBaseUrl: base, refundDelayMs: 100 });
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

test('when the notification URL is registered, again, and moved, then WeChat Pay holds the last one', async () => {
  await channel.complaints.registerNotifyUrl('https://a.example/complaints');
  await channel.complaints.registerNotifyUrl('https://a.example/complaints');
  expect(sandbox.complaintNotifyUrl()).toBe('https://a.example/complaints');
  await channel.complaints.registerNotifyUrl(hook.url);
  expect(sandbox.complaintNotifyUrl()).toBe(hook.url);
});

test("when a payer complains, then its notification verifies and names the complaint, and the detail opens the payer's phone and names durapay's order", async () => {
  await channel.complaints.registerNotifyUrl(hook.url);
  const tradeNo = await paidOrder();
  const opened = sandbox.openComplaint(tradeNo, { payerPhone: '13900139000', images: [PNG] });
  const received = await until('the complaint notification', async () =>
    hook.received.find((r) => r.body.includes('COMPLAINT.CREATE')),
  );
  const decoded = await channel.complaints.decodeNotification({
    rawBody: Buffer.from(received.body, 'utf8'),
    headers: received.headers,
  });
  expect(decoded).toEqual({
    eventId: expect.any(String),
    complaintId: opened.complaintId,
    action: 'CREATE_COMPLAINT',
  });
  // A tampered body does not verify.
  await expect(
    channel.complaints.decodeNotification({
      rawBody: Buffer.from(received.body.replace('COMPLAINT.CREATE', 'COMPLAINT.CREATF'), 'utf8'),
      headers: received.headers,
    }),
  ).rejects.toThrow(ChannelError);

  const complaint = await channel.complaints.get(opened.complaintId);
  expect(complaint).toEqual(
    expect.objectContaining({
      complaintId: opened.complaintId,
      state: 'pending',
      subMerchantNo: SUB_MCHID,
      orders: [expect.objectContaining({ tradeNo, amount: 2_000 })],
      problemType: 'refund',
      applyRefundAmount: 2_000,
      payerPhone: '13900139000',
      fullRefunded: false,
      complaintTimes: 1,
    }),
  );
  const image = await channel.complaints.image(complaint!.imageUrls[0]!);
  expect(image.content.equals(PNG)).toBe(true);
  expect(image.contentType).toMatch(/^image\/png/);
  const listed = await channel.complaints.list(day(-40), day());
  expect(listed.map((c) => c.complaintId)).toContain(opened.complaintId);
});

test('when durapay replies with an image and completes, then each reaches WeChat Pay once, the complaint is processed, and the history says so', async () => {
  const c = sandbox.openComplaint(await paidOrder());
  const imageId = await channel.complaints.uploadImage(PNG, 'receipt.png');
  await channel.complaints.reply({ complaintId: c.complaintId, subMerchantNo: SUB_MCHID }, '已为您处理', [
    imageId,
  ]);
  expect((await channel.complaints.get(c.complaintId))!.state).toBe('processing');
  await channel.complaints.complete({ complaintId: c.complaintId, subMerchantNo: SUB_MCHID });
  expect((await channel.complaints.get(c.complaintId))!.state).toBe('processed');
  expect(sandbox.complaint(c.complaintId)!.calls).toEqual({ response: 1, complete: 1, refundProgress: 0 });
  const steps = await channel.complaints.history(c.complaintId);
  expect(steps.map((s) => s.type)).toEqual([
    'USER_CREATE_COMPLAINT',
    'MERCHANT_RESPONSE',
    'MERCHANT_CONFIRM_COMPLETE',
  ]);
  expect(steps[1]!.imageUrls).toHaveLength(1);
  // Completing a processed complaint is WeChat Pay's refusal, named.
  await expect(
    channel.complaints.complete({ complaintId: c.complaintId, subMerchantNo: SUB_MCHID }),
  ).rejects.toThrow(/INVALID_REQUEST/);
});

test('when a complaint WeChat Pay never issued is asked for, then undefined; and a span of 61 days is three lists', async () => {
  expect(await channel.complaints.get('200201820990101000000000000')).toBeUndefined();
  expect(spansOf('2026-01-01', '2026-03-02')).toEqual([
    ['2026-01-01', '2026-01-30'],
    ['2026-01-31', '2026-03-01'],
    ['2026-03-02', '2026-03-02'],
  ]);
  await expect(channel.complaints.uploadImage(PNG, 'receipt.gif')).rejects.toThrow(/\.jpg, \.png or \.bmp/);
});
