/**
 * Onboarding a merchant at WeChat Pay through durapay's HTTP API (SPEC §5.5–5.7, §8a), against
 * the offline v3 sandbox with real Temporal and Postgres: images uploaded as media, the
 * applyment submitted with its sensitive fields sealed and the application_id as its
 * business_code, and the audit followed to finished (the merchant active with its sub_mchid,
 * which then takes a payment), rejected, and to_be_signed until the merchant signs.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';
import {
  APPLICANT,
  PDF_BYTES,
  applymentData,
  applymentMedia,
  uploadToWechatpay,
} from '../support/wechatpay-applyment';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.001, wechatpay: { timeScale: 0.01, refundDelayMs: 200 } });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Audit {
  application_id: string;
  status: string;
  channel_code: string;
  channel_application_no: string | null;
  sub_merchant_no: string | null;
  sign_url: string | null;
  reject_reason: string | null;
  audit_detail: Record<string, unknown> | null;
}

const upload = (content: Buffer, filename: string, mediaType: string) =>
  uploadToWechatpay(stack.baseUrl, app, content, filename, mediaType);
const media = () => applymentMedia(stack.baseUrl, app);

async function merchant(): Promise<string> {
  const merchantId = `MWO-${randomUUID().slice(0, 8)}`;
  const created = await pay.post('/api/v1/merchant', {
    merchant_id: merchantId,
    merchant_name: 'Tea House',
    bank_account: APPLICANT.accountNumber,
  });
  expect(created.code).toBe('success');
  return merchantId;
}

const apply = (merchantId: string, submitData: Record<string, unknown>) =>
  pay.post<{ application_id: string }>(`/api/v1/merchant/${merchantId}/apply`, {
    channel_code: 'wechatpay',
    submit_data: submitData,
  });

async function auditUntil(merchantId: string, status: string): Promise<Audit> {
  return until(`application ${status}`, async () => {
    const a = await pay.get<Audit>(`/api/v1/merchant/${merchantId}/audit`);
    return a.data?.status === status ? a.data : undefined;
  });
}

test('when a merchant applies at WeChat Pay, then the applyment is sealed and audited to finished, and the merchant takes payments under its sub_mchid', async () => {
  const merchantId = await merchant();
  const applied = await apply(merchantId, applymentData(await media()));
  expect(applied.code).toBe('success');
  const applicationId = applied.data!.application_id;

  const done = await auditUntil(merchantId, 'finished');
  const applyment = stack.wechatpay!.sandbox.applyment(applicationId)!;
  expect(applyment.state).toBe('APPLYMENT_STATE_FINISHED');
  expect(done).toMatchObject({
    application_id: applicationId,
    channel_code: 'wechatpay',
    channel_application_no: String(applyment.applymentId),
    sub_merchant_no: applyment.subMchid,
    audit_detail: { applyment_state: 'APPLYMENT_STATE_FINISHED' },
  });
  // The sandbox opened what durapay sealed: the plain values arrived, sealed in transit.
  const identity = (
    applyment.body.subject_info as { identity_info: { id_card_info: Record<string, string> } }
  ).identity_info.id_card_info;
  expect(identity.id_card_number).toBe(APPLICANT.idCardNumber);

  // What durapay keeps of WeChat's answers holds no applicant secret (submit_data itself is the input).
  const [kept] = await stack.database.db.sequelize.query<Record<string, unknown>>(
    'SELECT channel_last_answer, audit_detail, reject_reason FROM merchant_applications WHERE application_id = :id',
    { replacements: { id: applicationId }, type: QueryTypes.SELECT },
  );
  for (const secret of [APPLICANT.idCardNumber, APPLICANT.accountNumber, APPLICANT.mobilePhone]) {
    expect(JSON.stringify(kept)).not.toContain(secret);
  }

  const found = await pay.get<{ status: string; sub_merchant_no: string }>(`/api/v1/merchant/${merchantId}`);
  expect(found.data).toMatchObject({ status: 'active', sub_merchant_no: applyment.subMchid });

  const order = await pay.post<{ trade_no: string; pay_credential: Record<string, string> }>(
    '/api/v1/pay/unified-order',
    pay.orderBody({
      channel_code: 'wechatpay',
      merchant_id: merchantId,
      subject: 'Green tea',
      expire_minutes: 1440,
    }),
  );
  expect(order.code).toBe('success');
  const res = await fetch(order.data!.pay_credential.code_url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  expect(res.status).toBe(200);
  await pay.statusIs(order.data!.trade_no, 'paid');
});

test('when the merchant record holds the bank account, then submit_data may leave it out and the applyment still carries it', async () => {
  const merchantId = await merchant();
  const data = applymentData(await media()) as { bank_account_info: Record<string, unknown> };
  delete data.bank_account_info.account_number;
  const applied = await apply(merchantId, data);
  expect(applied.code).toBe('success');
  await auditUntil(merchantId, 'finished');
  const body = stack.wechatpay!.sandbox.applyment(applied.data!.application_id)!.body;
  expect((body.bank_account_info as Record<string, string>).account_number).toBe(APPLICANT.accountNumber);
});

test('when WeChat Pay rejects the applyment, then the application is rejected with its audit detail and the merchant is rejected', async () => {
  const merchantId = await merchant();
  const data = applymentData(await media(), 'Tea [sandbox:rejected]');
  expect((await apply(merchantId, data)).code).toBe('success');
  const rejected = await auditUntil(merchantId, 'rejected');
  expect(rejected.reject_reason).toContain('商户简称');
  expect(rejected.sub_merchant_no).toBeNull();
  expect(rejected.audit_detail).toMatchObject({
    applyment_state: 'APPLYMENT_STATE_REJECTED',
    audit_detail: [expect.objectContaining({ field: 'business_info.merchant_shortname' })],
  });
  const found = await pay.get<{ status: string }>(`/api/v1/merchant/${merchantId}`);
  expect(found.data!.status).toBe('rejected');
});

test('when WeChat Pay waits for the merchant to sign, then the application is to_be_signed with the sign_url, and after signing it finishes', async () => {
  const merchantId = await merchant();
  const data = applymentData(await media(), 'Tea [sandbox:to-be-signed]');
  expect((await apply(merchantId, data)).code).toBe('success');
  const waiting = await auditUntil(merchantId, 'to_be_signed');
  expect(waiting.sign_url).toMatch(new RegExp(`^${stack.wechatpay!.baseUrl}/applyment/sign/`));
  const signed = await fetch(waiting.sign_url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'sign' }),
  });
  expect(signed.status).toBe(200);
  const done = await auditUntil(merchantId, 'finished');
  expect(done.sub_merchant_no).toMatch(/^\d{10}$/);
  expect(done.sign_url).toBeNull();
});

test('when WeChat Pay asks the merchant to confirm its account first, then the application is to_be_confirmed', async () => {
  const merchantId = await merchant();
  const data = applymentData(await media(), 'Tea [sandbox:to-be-confirmed]');
  expect((await apply(merchantId, data)).code).toBe('success');
  const waiting = await auditUntil(merchantId, 'to_be_confirmed');
  expect(waiting.sign_url).not.toBeNull();
});

test('when submit_data lacks a field WeChat Pay requires, then 400 invalid_param names it and nothing is submitted', async () => {
  const merchantId = await merchant();
  const data = applymentData(await media()) as { contact_info: Record<string, unknown> };
  delete data.contact_info.mobile_phone;
  const res = await apply(merchantId, data);
  expect(res.status).toBe(400);
  expect(res.code).toBe('invalid_param');
  expect(res.message).toBe('submit_data.contact_info.mobile_phone: is required');
  const audit = await pay.get(`/api/v1/merchant/${merchantId}/audit`);
  expect(audit.status).toBe(404);
});

test('when an identity number is malformed, then 400 invalid_param names the field without echoing the number', async () => {
  const merchantId = await merchant();
  const data = applymentData(await media()) as {
    subject_info: { identity_info: { id_card_info: Record<string, string> } };
  };
  data.subject_info.identity_info.id_card_info.id_card_number = '11010519491231002';
  const res = await apply(merchantId, data);
  expect(res.status).toBe(400);
  expect(res.message).toBe(
    'submit_data.subject_info.identity_info.id_card_info.id_card_number: is not in the required format',
  );
});

test('when submit_data names its own business_code, then 400 invalid_param: durapay sends the application_id', async () => {
  const merchantId = await merchant();
  const res = await apply(merchantId, { ...applymentData(await media()), business_code: 'mine' });
  expect(res.status).toBe(400);
  expect(res.message).toContain('submit_data.business_code');
});

test('when a PDF is uploaded for WeChat Pay, then 500 internal_system says WeChat Pay takes images only', async () => {
  const res = await upload(PDF_BYTES, 'license.pdf', 'application/pdf');
  expect(res.status).toBe(500);
  expect(res.code).toBe('internal_system');
  expect(res.message).toContain('JPEG, PNG or BMP');
});

test('when a WeChat Pay media_id uploaded by another app is named in submit_data, then 400 invalid_param', async () => {
  const own = await media();
  const other = await stack.createApp(['merchants']);
  const otherPay = paymentsClient(stack, other, receiver);
  const merchantId = `MWO-${randomUUID().slice(0, 8)}`;
  expect(
    (await otherPay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Other' })).code,
  ).toBe('success');
  const res = await otherPay.post(`/api/v1/merchant/${merchantId}/apply`, {
    channel_code: 'wechatpay',
    submit_data: applymentData(own),
  });
  expect(res.status).toBe(400);
  expect(res.code).toBe('invalid_param');
  expect(res.message).toMatch(/names file_id V1_\S+, which this app has not uploaded to channel wechatpay/);
});
