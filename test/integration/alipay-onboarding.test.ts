/**
 * Onboarding a secondary merchant at Alipay (直付通) through durapay's HTTP API, against the offline
 * Alipay gateway, with real Temporal and Postgres: images uploaded for image ids, the application
 * created with the application_id as external_id and audited to finished with an smid (the
 * merchant then takes Alipay orders under it), or to rejected with Alipay's reason.
 */
import { randomUUID } from 'node:crypto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { signRequest } from '../../src/platform/crypto/http-signature';
import { startTestStack, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { multipart } from '../support/multipart';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';
import { JPEG_BYTES, PDF_BYTES, PNG_BYTES } from '../support/wechatpay-applyment';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.001, alipay: { timeScale: 0.001 } });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Audit {
  status: string;
  channel_application_no: string | null;
  sub_merchant_no: string | null;
  reject_reason: string | null;
  audit_detail: Record<string, unknown> | null;
}

async function upload(content: Buffer, filename: string, mediaType: string) {
  const { body, contentType } = multipart([
    { name: 'channel_code', value: 'alipay' },
    { name: 'file_media_type', value: mediaType },
    { name: 'file', filename, contentType: mediaType, content },
  ]);
  const target = '/api/v1/merchant/upload-file';
  const signed = signRequest({ method: 'POST', target, body, keyId: app.app_id, secret: app.secret });
  const res = await fetch(`${stack.baseUrl}${target}`, {
    method: 'POST',
    headers: { ...signed, 'content-type': contentType },
    body,
  });
  return { status: res.status, ...(await envelope<{ file_id: string }>(res)) };
}

async function merchant(): Promise<string> {
  const merchantId = `MAO-${randomUUID().slice(0, 8)}`;
  const created = await pay.post('/api/v1/merchant', {
    merchant_id: merchantId,
    merchant_name: 'Tea House',
    license_no: '91330100MA2EXAMPLE',
    legal_person: '张三',
  });
  expect(created.code).toBe('success');
  return merchantId;
}

function zftData(certImage: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    alias_name: 'Tea House',
    merchant_type: '01',
    mcc: '5812',
    cert_type: '201',
    cert_image: certImage,
    legal_cert_no: '11010519491231002X',
    contact_infos: [{ name: '张三', mobile: '13800138000' }],
    service: ['当面付', 'app支付'],
    alipay_logon_id: 'owner@tea-house.example',
    ...over,
  };
}

const apply = (merchantId: string, submitData: Record<string, unknown>) =>
  pay.post<{ application_id: string }>(`/api/v1/merchant/${merchantId}/apply`, {
    channel_code: 'alipay',
    submit_data: submitData,
  });

const auditUntil = (merchantId: string, status: string) =>
  until(`application ${status}`, async () => {
    const a = await pay.get<Audit>(`/api/v1/merchant/${merchantId}/audit`);
    return a.data?.status === status ? a.data : undefined;
  });

test('when images are uploaded for Alipay, then each is an image id; a PDF is refused before it travels', async () => {
  const png = await upload(PNG_BYTES, 'licence.png', 'image/png');
  const jpeg = await upload(JPEG_BYTES, 'front.jpeg', 'image/jpeg');
  expect([png.code, jpeg.code]).toEqual(['success', 'success']);
  expect(png.data!.file_id).not.toBe(jpeg.data!.file_id);
  const pdf = await upload(PDF_BYTES, 'licence.pdf', 'application/pdf');
  expect({ status: pdf.status, code: pdf.code }).toEqual({ status: 500, code: 'internal_system' });
  expect(pdf.message).toMatch(/JPEG, PNG or BMP/);
});

test('when a merchant applies at Alipay, then it is audited to finished with its smid, filled from its record, and takes Alipay orders under it', async () => {
  const image = (await upload(PNG_BYTES, 'licence.png', 'image/png')).data!.file_id;
  const merchantId = await merchant();
  const applied = await apply(merchantId, zftData(image));
  expect(applied.code).toBe('success');
  const applicationId = applied.data!.application_id;

  const seen = new Set<string>();
  const finished = await until('application finished', async () => {
    const a = (await pay.get<Audit>(`/api/v1/merchant/${merchantId}/audit`)).data!;
    seen.add(a.status);
    return a.status === 'finished' ? a : undefined;
  });
  expect(finished.sub_merchant_no).toMatch(/^2088\d{12}$/);
  expect(finished.channel_application_no).toBeTruthy();
  // The gateway's record: named by the application_id, the merchant's record filling the gaps.
  expect(stack.alipay!.sandbox.zftOrder(applicationId)).toMatchObject({
    name: 'Tea House',
    cert_no: '91330100MA2EXAMPLE',
    legal_name: '张三',
  });
  expect((await pay.get<{ status: string }>(`/api/v1/merchant/${merchantId}`)).data!.status).toBe('active');

  const order = await pay.post<{ trade_no: string }>(
    '/api/v1/pay/unified-order',
    pay.orderBody({ channel_code: 'alipay', merchant_id: merchantId, expire_minutes: 1440 }),
  );
  expect(order.code).toBe('success');
  expect(stack.alipay!.sandbox.trade(order.data!.trade_no)).toMatchObject({
    sub_merchant: { merchant_id: finished.sub_merchant_no },
  });
});

test('when Alipay rejects the application, then it ends rejected with the reason', async () => {
  const image = (await upload(PNG_BYTES, 'licence.png', 'image/png')).data!.file_id;
  const merchantId = await merchant();
  const applied = await apply(merchantId, zftData(image, { name: 'Tea House [sandbox:rejected]' }));
  expect(applied.code).toBe('success');
  const rejected = await auditUntil(merchantId, 'rejected');
  expect(rejected.reject_reason).toBeTruthy();
});

test.each([
  ['a required field is missing', { mcc: undefined }, 'submit_data.mcc: is required'],
  ['an external_id of its own is given', { external_id: 'mine' }, 'submit_data.external_id is not allowed'],
])(
  'when %s, then 400 invalid_param naming the field and nothing is submitted',
  async (_what, over, message) => {
    const merchantId = await merchant();
    const before = stack.alipay!.sandbox.requests('ant.merchant.expand.indirect.zft.create');
    const refused = await apply(merchantId, zftData('img-1', over));
    expect({ status: refused.status, code: refused.code }).toEqual({ status: 400, code: 'invalid_param' });
    expect(refused.message).toContain(message);
    expect(stack.alipay!.sandbox.requests('ant.merchant.expand.indirect.zft.create')).toBe(before);
  },
);
