/**
 * WeChat Pay in platform-certificate mode through durapay's HTTP API: durapay is given no public
 * key, only WECHATPAY_PLATFORM_CERTIFICATES=download, and the offline sandbox names its key by
 * certificate serial. durapay downloads and checks the certificates, verifies answers and
 * callbacks with them, seals an applyment with the newest, and follows a rotation by WeChat Pay
 * without a restart.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';
import { applymentData, applymentMedia } from '../support/wechatpay-applyment';
import { postTransactionNotification } from '../support/wechatpay-notify';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let merchantId: string;
const SUB_MCHID = '1900000109';

beforeAll(async () => {
  stack = await startTestStack({
    timeScale: 0.001,
    wechatpay: {
      timeScale: 0.01,
      refundDelayMs: 200,
      platformIdentity: 'certificate',
      adapter: { certificateRefreshGapMs: 100 },
    },
  });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = `MWC-${randomUUID().slice(0, 8)}`;
  expect(
    (await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' })).code,
  ).toBe('success');
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: SUB_MCHID });
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

async function paidQrOrder(): Promise<string> {
  const created = await pay.post<{ trade_no: string; pay_credential: Record<string, string> }>(
    '/api/v1/pay/unified-order',
    pay.orderBody({
      channel_code: 'wechatpay',
      merchant_id: merchantId,
      subject: 'Green tea',
      expire_minutes: 1440,
    }),
  );
  expect(created.code).toBe('success');
  const res = await fetch(created.data!.pay_credential.code_url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  expect(res.status).toBe(200);
  await pay.statusIs(created.data!.trade_no, 'paid');
  return created.data!.trade_no;
}

async function callbacksLogged(tradeNo: string): Promise<{ outcome: string; verified: boolean }[]> {
  return stack.database.db.sequelize.query(
    "SELECT outcome, verified FROM channel_callbacks WHERE channel_code = 'wechatpay' AND trade_no = :tradeNo ORDER BY id",
    { replacements: { tradeNo }, type: QueryTypes.SELECT },
  );
}

test('when durapay has only downloaded certificates, then an order is created, paid and its callback verified with them', async () => {
  const tradeNo = await paidQrOrder();
  expect(await callbacksLogged(tradeNo)).toEqual([{ outcome: 'delivered', verified: true }]);
});

test('when WeChat Pay rotates to a new certificate, then durapay fetches it and answers, callbacks and sealed fields use it', async () => {
  const sandbox = stack.wechatpay!.sandbox;
  await paidQrOrder();
  const rotated = sandbox.rotatePlatformCertificate();
  expect(sandbox.platformCertificates()).toHaveLength(2);

  // Answers and the callback are signed by the new certificate from now on.
  const tradeNo = await paidQrOrder();
  expect(await callbacksLogged(tradeNo)).toEqual([{ outcome: 'delivered', verified: true }]);

  // Sealed with the newest certificate, named by its serial: the sandbox opens it with that key.
  const onboarded = `MWC-${randomUUID().slice(0, 8)}`;
  expect(
    (await pay.post('/api/v1/merchant', { merchant_id: onboarded, merchant_name: 'Tea House' })).code,
  ).toBe('success');
  const applied = await pay.post<{ application_id: string }>(`/api/v1/merchant/${onboarded}/apply`, {
    channel_code: 'wechatpay',
    submit_data: applymentData(await applymentMedia(stack.baseUrl, app)),
  });
  expect(applied.code).toBe('success');
  await until('application finished', async () => {
    const a = await pay.get<{ status: string }>(`/api/v1/merchant/${onboarded}/audit`);
    return a.data?.status === 'finished' ? a : undefined;
  });
  expect(sandbox.applyment(applied.data!.application_id)).toMatchObject({
    state: 'APPLYMENT_STATE_FINISHED',
    sealedWith: rotated.serial,
  });
});

test('when a callback names a serial WeChat Pay does not list, then it answers fail and the order stays pending', async () => {
  const created = await pay.post<{ trade_no: string }>(
    '/api/v1/pay/unified-order',
    pay.orderBody({
      channel_code: 'wechatpay',
      merchant_id: merchantId,
      subject: 'Green tea',
      expire_minutes: 1440,
    }),
  );
  const tradeNo = created.data!.trade_no;
  // Signed by the platform's own key, but under a serial no certificate carries.
  const res = await postTransactionNotification(stack, {
    tradeNo,
    subMchid: SUB_MCHID,
    signer: stack.wechatpay!.keys.platformPrivateKeyPem,
    serial: '7132D72A03E93CDDF8C03BBD1F37EEDF00000000',
  });
  expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: 'fail' });
  expect((await pay.query(tradeNo)).status).toBe('pending');
});
