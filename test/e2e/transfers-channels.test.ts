/**
 * Transfers through durapay's HTTP API on the real channels' adapters (SPEC §11), against the
 * offline WeChat Pay and Alipay upstreams, with real Temporal and Postgres. WeChat Pay: a
 * transfer waits for its payee, who confirms it in Debian's Chromium on the sandbox's page, and
 * it succeeds; one is left to expire; one is cancelled. Alipay: one succeeds, one fails, one whose
 * answer was lost is found by query. Each is announced once; each was made once at the channel.
 */
import { randomUUID } from 'node:crypto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { transferWorkflowId } from '../../src/modules/transfers/messages';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type Answer, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(240_000);

let browser: TestBrowser;
let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let merchantId: string;
const SUB_MCHID = '1900000109';

beforeAll(async () => {
  browser = await launchBrowser();
  stack = await startTestStack({
    timeScale: 0.01,
    wechatpay: { timeScale: 0.01, refundDelayMs: 200 },
    alipay: { timeScale: 0.01, refundDelayMs: 200 },
  });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = `MWX-${randomUUID().slice(0, 8)}`;
  expect(
    (await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' })).code,
  ).toBe('success');
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: SUB_MCHID });
});
afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await stack?.stop();
});

interface Transfer {
  transfer_no: string;
  status: string;
  pay_credential: { package_info: string } | null;
  fail_reason: string | null;
  channel_transfer_no: string | null;
}

function ok(a: Answer<Transfer>): Transfer {
  if (a.code !== 'success') throw new Error(`transfer failed: ${a.status} ${a.code} ${a.message}`);
  return a.data!;
}

const SCENE = {
  transfer_scene_id: '1000',
  report_infos: [
    { info_type: '活动名称', info_content: '新会员有礼' },
    { info_type: '奖励说明', info_content: '注册会员抽奖一等奖' },
  ],
};

const wechatBody = (overrides: Record<string, unknown> = {}) => ({
  merchant_transfer_no: `WX-${randomUUID()}`,
  channel_code: 'wechatpay',
  merchant_id: merchantId,
  amount: 200,
  payee: { type: 'openid', account: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
  remark: 'Cashback',
  scene: SCENE,
  notify_url: receiver.url,
  ...overrides,
});

const alipayBody = (overrides: Record<string, unknown> = {}) => ({
  merchant_transfer_no: `AL-${randomUUID()}`,
  channel_code: 'alipay',
  amount: 300,
  payee: { type: 'alipay_user_id', account: '2088123412341234' },
  remark: 'Reward',
  notify_url: receiver.url,
  ...overrides,
});

const query = async (transferNo: string) =>
  (await pay.get<Transfer>(`/api/v1/transfer/query/${transferNo}`)).data!;

async function ended(transferNo: string): Promise<Transfer> {
  await stack.client.workflow.getHandle(transferWorkflowId(transferNo)).result();
  return query(transferNo);
}

const told = (transferNo: string) =>
  receiver.received
    .map((r) => JSON.parse(r.body) as { type: string; data: { transfer_no?: string } })
    .filter((b) => b.data.transfer_no === transferNo)
    .map((b) => b.type);

/** The payee in WeChat, on the page wx.requestMerchantTransfer opens with the package. */
async function payeeAt(packageInfo: string, button: 'Confirm' | 'Let it expire'): Promise<string> {
  return browser.run(async (page) => {
    await page.goto(stack.wechatpay!.sandbox.transferConfirmUrl(packageInfo));
    await page.getByRole('button', { name: button }).click();
    await page.waitForLoadState('load');
    return (await page.textContent('body')) ?? '';
  });
}

describe('WeChat Pay 商家转账', () => {
  test('when the payee confirms in the browser, then the transfer waits for them, then succeeds, announced once', async () => {
    const made = ok(await pay.post<Transfer>('/api/v1/transfer', wechatBody()));
    expect(made.status).toBe('wait_user_confirm');
    expect(made.pay_credential?.package_info).toEqual(expect.any(String));
    expect((await query(made.transfer_no)).status).toBe('wait_user_confirm');
    await payeeAt(made.pay_credential!.package_info, 'Confirm');
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success', pay_credential: null });
    expect(told(made.transfer_no)).toEqual(['transfer.succeeded']);
  });

  test('when the payee lets it expire, then WeChat closes it and it is failed, announced once', async () => {
    const made = ok(await pay.post<Transfer>('/api/v1/transfer', wechatBody()));
    await payeeAt(made.pay_credential!.package_info, 'Let it expire');
    const done = await ended(made.transfer_no);
    expect(done.status).toBe('failed');
    expect(done.fail_reason).toContain('OVERDUE_CLOSE');
    expect(told(made.transfer_no)).toEqual(['transfer.failed']);
  });

  test('when it is cancelled before the payee confirms, then it is cancelled, announced once; the payee can no longer confirm', async () => {
    const made = ok(await pay.post<Transfer>('/api/v1/transfer', wechatBody()));
    const cancelled = ok(
      await pay.post<Transfer>('/api/v1/transfer/cancel', { transfer_no: made.transfer_no }),
    );
    expect(['processing', 'cancelled']).toContain(cancelled.status);
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'cancelled' });
    expect(told(made.transfer_no)).toEqual(['transfer.cancelled']);
    expect(() => stack.wechatpay!.sandbox.confirmTransfer(made.transfer_no)).toThrow();
  });

  test('when 2 000 yuan are sent with the real name, then the name goes sealed and the transfer is made once', async () => {
    const made = ok(
      await pay.post<Transfer>(
        '/api/v1/transfer',
        wechatBody({ amount: 200_000, payee: { type: 'openid', account: 'o-big-1', name: '张三' } }),
      ),
    );
    expect(made.status).toBe('wait_user_confirm');
    stack.wechatpay!.sandbox.confirmTransfer(made.transfer_no);
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success' });
    expect(stack.wechatpay!.sandbox.transferCreates(made.transfer_no)).toBe(1);
  });

  test.each([
    [{ amount: 9 }, 400, 'invalid_amount', 'amount'],
    [{ scene: undefined }, 400, 'invalid_param', 'scene'],
    [{ amount: 200_000 }, 400, 'invalid_param', 'payee.name'],
    [{ payee: { type: 'alipay_user_id', account: '2088123412341234' } }, 400, 'invalid_param', 'payee.type'],
    [{ remark: 'x'.repeat(33) }, 400, 'invalid_param', 'remark'],
  ])('when %j, then %i %s naming %s', async (overrides, status, code, field) => {
    const a = await pay.post('/api/v1/transfer', wechatBody(overrides));
    expect(a).toMatchObject({ status, code });
    expect(a.message).toContain(field);
  });
});

describe('Alipay uni.transfer', () => {
  test('when a transfer is made, then it succeeds, announced once, one transfer at Alipay', async () => {
    const made = ok(await pay.post<Transfer>('/api/v1/transfer', alipayBody()));
    expect(['processing', 'success']).toContain(made.status);
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success' });
    expect(told(made.transfer_no)).toEqual(['transfer.succeeded']);
    expect(stack.alipay!.sandbox.transfers(made.transfer_no)).toHaveLength(1);
  });

  test('when Alipay fails it, then it is processing, then failed with the reason, announced once', async () => {
    const made = ok(
      await pay.post<Transfer>('/api/v1/transfer', alipayBody({ remark: 'Reward [transfer:fail]' })),
    );
    expect(made.status).toBe('processing');
    const done = await ended(made.transfer_no);
    expect(done.status).toBe('failed');
    expect(done.fail_reason).toEqual(expect.any(String));
    expect(told(made.transfer_no)).toEqual(['transfer.failed']);
  });

  test('when the answer to the create is lost, then durapay finds the transfer by query, announced once, made once', async () => {
    const made = ok(
      await pay.post<Transfer>('/api/v1/transfer', alipayBody({ remark: 'Reward [transfer:lost]' })),
    );
    expect(made.status).toBe('processing');
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success' });
    expect(told(made.transfer_no)).toEqual(['transfer.succeeded']);
    expect(stack.alipay!.sandbox.transfers(made.transfer_no)).toHaveLength(1);
  });

  test('when Alipay refuses the payee, then 502 channel_transfer_fail with its reason', async () => {
    const a = await pay.post('/api/v1/transfer', alipayBody({ remark: 'Reward [transfer:refuse]' }));
    expect(a).toMatchObject({ status: 502, code: 'channel_transfer_fail' });
    expect(a.message).toContain('PAYEE_NOT_EXIST');
  });

  test('when an Alipay transfer is to be cancelled, then 502 channel_not_support', async () => {
    const made = ok(
      await pay.post<Transfer>('/api/v1/transfer', alipayBody({ remark: 'Reward [transfer:slow]' })),
    );
    const a = await pay.post('/api/v1/transfer/cancel', { transfer_no: made.transfer_no });
    expect(a).toMatchObject({ status: 502, code: 'channel_not_support' });
    expect(await ended(made.transfer_no)).toMatchObject({ status: 'success' });
  });

  test('when a logon id comes without the name, then 400 naming payee.name', async () => {
    const a = await pay.post(
      '/api/v1/transfer',
      alipayBody({ payee: { type: 'alipay_logon_id', account: 'buyer@example.com' } }),
    );
    expect(a).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(a.message).toContain('payee.name');
  });
});

test('every transfer of this file was announced at most once', async () => {
  await until('receiver quiet', async () => (receiver.received.length > 0 ? true : undefined));
  const counts = new Map<string, number>();
  for (const r of receiver.received) {
    const b = JSON.parse(r.body) as { type: string; data: { transfer_no?: string } };
    if (b.data.transfer_no) counts.set(b.data.transfer_no, (counts.get(b.data.transfer_no) ?? 0) + 1);
  }
  expect([...counts.values()].every((n) => n === 1)).toBe(true);
});
