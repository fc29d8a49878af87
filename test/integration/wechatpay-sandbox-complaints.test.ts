/**
 * The offline WeChat Pay's consumer complaints (消费者投诉2.0, service provider) as its published
 * API describes them, driven with wechatpay-axios-plugin (requests signed, answers verified by
 * the library): the notification URL registered, read, changed and deleted; a complaint opened
 * against a paid order pushed as a signed, sealed COMPLAINT.CREATE; its list (30-day span, 50 a
 * page) and detail with payer_phone sealed to the merchant's key; a reply with an uploaded image
 * taking it to PROCESSING, the payer's words, the completion to PROCESSED and a second
 * completion refused; a refund request rejected; an unknown complaint; a full refund of the
 * order ending its complaint. Every change is in the negotiation history.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Aes, Formatter, Multipart, Rsa, Wechatpay } from 'wechatpay-axios-plugin';
import {
  createWechatpaySandbox,
  generateWechatpaySandboxKeys,
  type WechatpaySandbox,
  type WechatpaySandboxKeys,
} from '../../sandbox/wechatpay';
import { Receiver, type ReceivedRequest } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(30_000);

const SUB_MCHID = '1900000109';
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

interface Res<T> {
  status: number;
  data: T;
}

let keys: WechatpaySandboxKeys;
let sandbox: WechatpaySandbox;
let server: http.Server;
let base = '';
let wxpay: Chain;
const hook = new Receiver();
let sequence = 0;

/** The library's chain: each path segment a key, then the HTTP verb. */
type Chain = { [segment: string]: Chain } & {
  get(config?: Record<string, unknown>): Promise<{ status: number; data: unknown }>;
  delete(config?: Record<string, unknown>): Promise<{ status: number; data: unknown }>;
  post(data: unknown, config?: Record<string, unknown>): Promise<{ status: number; data: unknown }>;
  put(data: unknown, config?: Record<string, unknown>): Promise<{ status: number; data: unknown }>;
};

/** One call through the library, answers of any status returned (each verified by it). */
async function call<T = Record<string, unknown>>(
  method: 'get' | 'post' | 'put' | 'delete',
  url: string,
  data?: unknown,
  params?: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Res<T>> {
  const at = url.split('/').reduce((chain, segment) => chain[segment]!, wxpay);
  const config = { validateStatus: () => true, ...(params ? { params } : {}), ...extra };
  const res =
    method === 'get' || method === 'delete' ? await at[method](config) : await at[method](data ?? {}, config);
  return { status: res.status, data: res.data as T };
}

/** A paid Native order of SUB_MCHID; its out_trade_no. */
async function paidOrder(total = 1_200): Promise<string> {
  const outTradeNo = `DP${Date.now()}${sequence++}`;
  const created = await call<{ code_url: string }>('post', 'v3/pay/partner/transactions/native', {
    sp_appid: keys.spAppid,
    sp_mchid: keys.spMchid,
    sub_mchid: SUB_MCHID,
    description: 'complaint test',
    out_trade_no: outTradeNo,
    notify_url: hook.url,
    amount: { total, currency: 'CNY' },
  });
  expect(created.status).toBe(200);
  const paid = await fetch(created.data.code_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  expect(paid.status).toBe(200);
  return outTradeNo;
}

/** The complaint notifications received so far, each verified and opened as a merchant must. */
function complaintNotices(): {
  event_type: string;
  summary: string;
  plain: { complaint_id: string; action_type: string };
}[] {
  return hook.received
    .filter((r: ReceivedRequest) =>
      (JSON.parse(r.body) as { event_type: string }).event_type.startsWith('COMPLAINT.'),
    )
    .map((r) => {
      const h = r.headers;
      expect(
        Rsa.verify(
          Formatter.response(h['wechatpay-timestamp']!, h['wechatpay-nonce']!, r.body),
          h['wechatpay-signature']!,
          keys.platformPublicKeyPem,
        ),
      ).toBe(true);
      const n = JSON.parse(r.body) as {
        event_type: string;
        summary: string;
        resource: { ciphertext: string; nonce: string; associated_data: string; original_type: string };
      };
      expect(n.resource.original_type).toBe('complaint');
      const plain = JSON.parse(
        Aes.AesGcm.decrypt(
          n.resource.ciphertext,
          keys.apiV3Key,
          n.resource.nonce,
          n.resource.associated_data,
        ),
      ) as { complaint_id: string; action_type: string };
      return { event_type: n.event_type, summary: n.summary, plain };
    });
}

const actionsOf = (complaintId: string) =>
  complaintNotices()
    .filter((n) => n.plain.complaint_id === complaintId)
    .map((n) => `${n.event_type} ${n.plain.action_type}`);

const today = () => new Date(Date.now() + 8 * 3_600_000).toISOString().slice(0, 10);

beforeAll(async () => {
  keys = generateWechatpaySandboxKeys();
  await hook.start();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechatpay`;
  sandbox = createWechatpaySandbox({ keys, publicBaseUrl: base, timeScale: 0.01, refundDelayMs: 100 });
  app.use('/wechatpay', sandbox.router);
  wxpay = new Wechatpay({
    mchid: keys.spMchid,
    serial: keys.merchantSerial,
    privateKey: keys.merchantPrivateKeyPem,
    certs: { [keys.platformPublicKeyId]: keys.platformPublicKeyPem },
    baseURL: `${base}/`,
  }) as unknown as Chain;
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await hook.stop();
});

describe('the complaint notification URL', () => {
  test('when the service provider reads it before making it, makes it twice, changes and deletes it, then each is answered as published', async () => {
    const none = await call<{ code: string }>('get', 'v3/merchant-service/complaint-notifications');
    expect(none).toEqual({ status: 400, data: expect.objectContaining({ code: 'RESOURCE_NOT_EXISTS' }) });
    const plain = await call<{ code: string }>('post', 'v3/merchant-service/complaint-notifications', {
      url: 'http://merchant.example/complaints',
    });
    expect(plain).toEqual({ status: 400, data: expect.objectContaining({ code: 'PARAM_ERROR' }) });
    const made = await call('post', 'v3/merchant-service/complaint-notifications', {
      url: 'https://a.example/c',
    });
    expect(made).toEqual({ status: 200, data: { mchid: keys.spMchid, url: 'https://a.example/c' } });
    const again = await call<{ code: string }>('post', 'v3/merchant-service/complaint-notifications', {
      url: 'https://b.example/c',
    });
    expect(again).toEqual({ status: 400, data: expect.objectContaining({ code: 'INVALID_REQUEST' }) });
    const changed = await call('put', 'v3/merchant-service/complaint-notifications', { url: hook.url });
    expect(changed).toEqual({ status: 200, data: { mchid: keys.spMchid, url: hook.url } });
    expect((await call('get', 'v3/merchant-service/complaint-notifications')).data).toEqual({
      mchid: keys.spMchid,
      url: hook.url,
    });
    expect((await call('delete', 'v3/merchant-service/complaint-notifications')).status).toBe(204);
    expect(sandbox.complaintNotifyUrl()).toBeUndefined();
    // Registered again for the tests below (loopback HTTP is taken for the offline world).
    expect(
      (await call('post', 'v3/merchant-service/complaint-notifications', { url: hook.url })).status,
    ).toBe(200);
  });
});

describe('a complaint', () => {
  test('when a payer complains about a paid order, then COMPLAINT.CREATE is pushed, and the list and the detail show it PENDING with payer_phone sealed to the merchant', async () => {
    const outTradeNo = await paidOrder();
    const opened = sandbox.openComplaint(outTradeNo, {
      detail: '没有收到货',
      payerPhone: '13800138000',
      images: [PNG],
    });
    await until('the COMPLAINT.CREATE', async () =>
      actionsOf(opened.complaintId).includes('COMPLAINT.CREATE CREATE_COMPLAINT') ? true : undefined,
    );
    expect(complaintNotices().find((n) => n.plain.complaint_id === opened.complaintId)!.summary).toBe(
      '产生新投诉',
    );

    const detail = await call<Record<string, unknown>>(
      'get',
      `v3/merchant-service/complaints-v2/${opened.complaintId}`,
    );
    expect(detail.status).toBe(200);
    expect(detail.data).toEqual(
      expect.objectContaining({
        complaint_id: opened.complaintId,
        complaint_state: 'PENDING',
        complaint_detail: '没有收到货',
        complainted_mchid: SUB_MCHID,
        problem_type: 'REFUND',
        apply_refund_amount: 1_200,
        complaint_full_refunded: false,
        user_complaint_times: 1,
        complaint_order_info: [expect.objectContaining({ out_trade_no: outTradeNo, amount: 1_200 })],
      }),
    );
    expect(Rsa.decrypt(detail.data.payer_phone as string, keys.merchantPrivateKeyPem)).toBe('13800138000');
    // The payer's image, at its media URL.
    const media = (detail.data.complaint_media_list as { media_url: string[] }[])[0]!.media_url[0]!;
    expect(media).toMatch(new RegExp(`^${base}/v3/merchant-service/images/ms[0-9a-f]{32}$`));
    const image = await call<ArrayBuffer>('get', media.slice(base.length + 1), undefined, undefined, {
      responseType: 'arraybuffer',
    });
    expect(image.status).toBe(200);
    expect(Buffer.from(image.data).equals(PNG)).toBe(true);

    const list = await call<{ data: { complaint_id: string }[]; total_count: number; limit: number }>(
      'get',
      'v3/merchant-service/complaints-v2',
      undefined,
      { begin_date: today(), end_date: today(), complainted_mchid: SUB_MCHID, limit: 50 },
    );
    expect(list.status).toBe(200);
    expect(list.data.data.map((c) => c.complaint_id)).toContain(opened.complaintId);
    expect(list.data.limit).toBe(50);
    expect(list.data.total_count).toBe(list.data.data.length);
  });

  test.each([
    ['a span over 30 days', { begin_date: '2026-01-01', end_date: '2026-02-15' }],
    ['no begin_date', { end_date: '2026-01-01' }],
    ['a page over 50', { begin_date: '2026-01-01', end_date: '2026-01-02', limit: 51 }],
  ])('when the list is asked with %s, then 400 PARAM_ERROR', async (_what, params) => {
    const res = await call<{ code: string }>('get', 'v3/merchant-service/complaints-v2', undefined, params);
    expect(res).toEqual({ status: 400, data: expect.objectContaining({ code: 'PARAM_ERROR' }) });
  });

  test('when the merchant replies with an uploaded image, the payer writes and the merchant completes, then it moves PENDING → PROCESSING → PROCESSED, each pushed and in the history, and a second completion is refused', async () => {
    const c = sandbox.openComplaint(await paidOrder());
    const meta = { filename: 'receipt.png', sha256: createHash('sha256').update(PNG).digest('hex') };
    const form = new Multipart().append('meta', JSON.stringify(meta)).append('file', PNG, 'receipt.png');
    const uploaded = await call('post', 'v3/merchant-service/images/upload', form.getBuffer(), undefined, {
      meta,
      headers: form.getHeaders(),
    });
    expect(uploaded.status).toBe(200);
    const mediaId = (uploaded.data as { media_id: string }).media_id;

    const wrongMerchant = await call<{ code: string }>(
      'post',
      `v3/merchant-service/complaints-v2/${c.complaintId}/response`,
      {
        complainted_mchid: '1900000999',
        response_content: '您好',
      },
    );
    expect(wrongMerchant).toEqual({ status: 400, data: expect.objectContaining({ code: 'PARAM_ERROR' }) });
    const replied = await call('post', `v3/merchant-service/complaints-v2/${c.complaintId}/response`, {
      complainted_mchid: SUB_MCHID,
      response_content: '您好，已为您补发，请查收',
      response_images: [mediaId],
    });
    expect(replied.status).toBe(204);
    expect(sandbox.complaint(c.complaintId)!.state).toBe('PROCESSING');
    sandbox.payerResponds(c.complaintId, '收到了，谢谢');
    expect(
      (
        await call<{ incoming_user_response: boolean }>(
          'get',
          `v3/merchant-service/complaints-v2/${c.complaintId}`,
        )
      ).data.incoming_user_response,
    ).toBe(true);

    const done = await call('post', `v3/merchant-service/complaints-v2/${c.complaintId}/complete`, {
      complainted_mchid: SUB_MCHID,
    });
    expect(done.status).toBe(204);
    const twice = await call<{ code: string }>(
      'post',
      `v3/merchant-service/complaints-v2/${c.complaintId}/complete`,
      {
        complainted_mchid: SUB_MCHID,
      },
    );
    expect(twice).toEqual({ status: 400, data: expect.objectContaining({ code: 'INVALID_REQUEST' }) });
    expect(sandbox.complaint(c.complaintId)!.state).toBe('PROCESSED');
    expect(sandbox.complaint(c.complaintId)!.calls).toEqual({ response: 2, complete: 2, refundProgress: 0 });

    const history = await call<{
      data: { operate_type: string; image_list: string[] }[];
      total_count: number;
    }>('get', `v3/merchant-service/complaints-v2/${c.complaintId}/negotiation-historys`);
    expect(history.data.data.map((h) => h.operate_type)).toEqual([
      'USER_CREATE_COMPLAINT',
      'MERCHANT_RESPONSE',
      'USER_RESPONSE',
      'MERCHANT_CONFIRM_COMPLETE',
    ]);
    expect(history.data.data[1]!.image_list).toEqual([`${base}/v3/merchant-service/images/${mediaId}`]);
    expect(history.data.total_count).toBe(4);
    await until('every change pushed', async () =>
      actionsOf(c.complaintId).length === 4 ? true : undefined,
    );
    expect(actionsOf(c.complaintId)).toEqual([
      'COMPLAINT.CREATE CREATE_COMPLAINT',
      'COMPLAINT.STATE_CHANGE MERCHANT_RESPONSE',
      'COMPLAINT.STATE_CHANGE USER_RESPONSE',
      'COMPLAINT.STATE_CHANGE MERCHANT_CONFIRM_COMPLETE',
    ]);
    // The payer complains again: PENDING once more, the reply due again.
    sandbox.payerContinues(c.complaintId, '又坏了');
    expect(sandbox.complaint(c.complaintId)).toEqual(
      expect.objectContaining({ state: 'PENDING', userComplaintTimes: 2 }),
    );
  });

  test('when the merchant rejects a refund request without a reason, then PARAM_ERROR; with one, the complaint is PROCESSED', async () => {
    const c = sandbox.openComplaint(await paidOrder());
    const bare = await call<{ code: string }>(
      'post',
      `v3/merchant-service/complaints-v2/${c.complaintId}/update-refund-progress`,
      {
        action: 'REJECT',
      },
    );
    expect(bare).toEqual({ status: 400, data: expect.objectContaining({ code: 'PARAM_ERROR' }) });
    const rejected = await call(
      'post',
      `v3/merchant-service/complaints-v2/${c.complaintId}/update-refund-progress`,
      {
        action: 'REJECT',
        reject_reason: '商品已使用，不支持退款',
      },
    );
    expect(rejected.status).toBe(204);
    expect(sandbox.complaint(c.complaintId)!.state).toBe('PROCESSED');
  });

  test('when the order is refunded in full through the refund API, then its complaint is PROCESSED, fully refunded, and REFUND_SUCCESS is pushed', async () => {
    const outTradeNo = await paidOrder(800);
    const c = sandbox.openComplaint(outTradeNo);
    const refund = await call('post', 'v3/refund/domestic/refunds', {
      sub_mchid: SUB_MCHID,
      out_trade_no: outTradeNo,
      out_refund_no: `RF${Date.now()}${sequence++}`,
      amount: { refund: 800, total: 800, currency: 'CNY' },
    });
    expect(refund.status).toBe(200);
    await until('the complaint ended by the refund', async () =>
      sandbox.complaint(c.complaintId)!.state === 'PROCESSED' ? true : undefined,
    );
    expect(sandbox.complaint(c.complaintId)!.fullRefunded).toBe(true);
    await until('REFUND_SUCCESS pushed', async () =>
      actionsOf(c.complaintId).includes('COMPLAINT.STATE_CHANGE REFUND_SUCCESS') ? true : undefined,
    );
  });

  test('when a complaint id WeChat Pay never issued is asked for, then 404 RESOURCE_NOT_EXISTS', async () => {
    const unknown = await call<{ code: string }>(
      'get',
      'v3/merchant-service/complaints-v2/200201820990101000000000000',
    );
    expect(unknown).toEqual({ status: 404, data: expect.objectContaining({ code: 'RESOURCE_NOT_EXISTS' }) });
  });
});
