/**
 * Reconciliation (SPEC §10) through HTTP against the offline WeChat Pay and Alipay upstreams:
 * each channel's statement fetched with its own SDK (WeChat's gzip tradebill with its SHA-1;
 * Alipay's GBK zip), read and matched; a payment whose callback and queries were lost repaired
 * through its order; a run of the same day again changing nothing.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { billDateOf } from '../../src/modules/reconciliation/rules';
import { LOST_UNTIL_RELEASED_MARKER } from '../../sandbox/controls';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(240_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({
    timeScale: 0.001,
    wechatpay: { timeScale: 0.01, refundDelayMs: 200 },
    alipay: { timeScale: 0.001, refundDelayMs: 200 },
  });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Created {
  trade_no: string;
  pay_credential: Record<string, string>;
}
interface Run {
  run_id: string;
  status: string;
  statement: string | null;
  statement_sha256: string | null;
  rows: number;
  summary: { matched: number; repaired: number; categories: Record<string, number> } | null;
}
interface Mismatch {
  category: string;
  trade_no: string;
  refund_no: string | null;
  state: string;
}

const today = () => billDateOf(new Date());
const key = (m: Mismatch) => `${m.category} ${m.trade_no} ${m.state}`;

async function newMerchant(channelCode: string, fields: Record<string, string>): Promise<string> {
  const merchantId = `m-${randomUUID().slice(0, 12)}`;
  expect(
    (await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' })).code,
  ).toBe('success');
  await pay.attach(merchantId, channelCode, fields);
  return merchantId;
}

async function create(channelCode: string, body: Record<string, unknown>): Promise<Created> {
  const a = await pay.post<Created>(
    '/api/v1/pay/unified-order',
    pay.orderBody({ channel_code: channelCode, expire_minutes: 1440, ...body }),
  );
  if (a.code !== 'success') throw new Error(`create failed: ${a.status} ${a.code} ${a.message}`);
  return a.data!;
}

/** Starts the day's run of one account, waits for it to end, and answers it as listed. */
async function reconcile(
  channelCode: string,
  account: string,
  whileRunning?: (runId: string) => Promise<void>,
) {
  const started = await pay.post<{ list: Run[] }>('/api/v1/reconciliation/runs', {
    channel_code: channelCode,
    bill_date: today(),
    account,
  });
  expect(started).toMatchObject({ status: 200, code: 'success' });
  const runId = started.data!.list[0]!.run_id;
  await whileRunning?.(runId);
  expect(await stack.client.workflow.getHandle(`reconciliation:${runId}`).result()).toMatchObject({
    status: 'completed',
  });
  const listed = await pay.get<{ list: Run[] }>(`/api/v1/reconciliation/runs?channel_code=${channelCode}`);
  return listed.data!.list.find((r) => r.run_id === runId)!;
}

const mismatchesOf = async (runId: string) =>
  (
    await pay.get<{ list: Mismatch[] }>(
      `/api/v1/reconciliation/runs/${encodeURIComponent(runId)}/mismatches?limit=100`,
    )
  ).data!.list;

const refunded = async (tradeNo: string, amount: number) => {
  const r = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
    trade_no: tradeNo,
    refund_amount: amount,
  });
  expect(r.code).toBe('success');
  await until(`refund of ${tradeNo}`, async () => {
    const q = await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${r.data!.refund_no}`);
    return q.data?.status === 'success' ? true : undefined;
  });
};

/** Runs the day twice: the lost payment released once it is found; answers the first run. */
async function twice(channelCode: string, account: string, lostTradeNo: string, release: () => void) {
  const first = await reconcile(channelCode, account, async (runId) => {
    await until('the lost payment found', async () =>
      (await mismatchesOf(runId)).some((m) => m.trade_no === lostTradeNo) ? true : undefined,
    );
    release();
  });
  const found = (await mismatchesOf(first.run_id)).map(key).sort();
  const heard = receiver.received.length;
  const second = await reconcile(channelCode, account);
  expect(second.summary).toEqual(first.summary);
  // (The statement's own bytes may differ: Alipay's says when it was exported.)
  expect(second.statement_sha256).toMatch(/^[0-9a-f]{64}$/);
  expect((await mismatchesOf(first.run_id)).map(key).sort()).toEqual(found);
  await pay.statusIs(lostTradeNo, 'paid');
  expect(receiver.received.length).toBe(heard);
  expect(pay.notificationsFor(lostTradeNo, 'payment.succeeded')).toHaveLength(1);
  return { run: first, found };
}

test("when a WeChat Pay sub-merchant's day is reconciled, then its tradebill is read, each difference found once and the lost payment repaired", async () => {
  const subMchid = `19000${randomInt(10_000, 99_999)}`;
  const merchantId = await newMerchant('wechatpay', { sub_mchid: subMchid });
  const buyerPays = async (created: Created) => {
    const res = await fetch(created.pay_credential.code_url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'pay' }),
    });
    expect(res.status).toBe(200);
  };
  const paid = async (body: Record<string, unknown>) => {
    const created = await create('wechatpay', { merchant_id: merchantId, ...body });
    await buyerPays(created);
    await pay.statusIs(created.trade_no, 'paid');
    return created;
  };
  const agreed = await paid({ amount: 150, subject: 'Green tea, large' });
  await refunded(agreed.trade_no, 50);
  const changed = await paid({ amount: 250, subject: 'Tea [statement:amount+1]' });
  const lost = await create('wechatpay', {
    merchant_id: merchantId,
    amount: 350,
    subject: `Bread ${LOST_UNTIL_RELEASED_MARKER}`,
  });
  await buyerPays(lost);
  expect((await pay.query(lost.trade_no)).status).toBe('pending');

  const { run, found } = await twice('wechatpay', subMchid, lost.trade_no, () =>
    stack.wechatpay!.sandbox.release(lost.trade_no),
  );
  expect(run).toMatchObject({ statement: 'ready', rows: 4, summary: { matched: 2, repaired: 1 } });
  expect(run.statement_sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(found).toEqual(
    [`amount_mismatch ${changed.trade_no} open`, `missing_local_payment ${lost.trade_no} repaired`].sort(),
  );
});

test('when an Alipay merchant that authorised the app is reconciled, then its GBK statement is read, each difference found once and the lost payment repaired', async () => {
  const grant = stack.alipay!.sandbox.mintAppAuthToken();
  const merchantId = await newMerchant('alipay', { app_auth_token: grant.appAuthToken });
  const paid = async (body: Record<string, unknown>) => {
    const created = await create('alipay', { merchant_id: merchantId, pay_method: 'qr_code', ...body });
    const res = await fetch(created.pay_credential.qr_code!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: 'success' }),
    });
    expect(res.status).toBe(200);
    return created;
  };
  const agreed = await paid({ amount: 160, subject: '绿茶，大杯' });
  await pay.statusIs(agreed.trade_no, 'paid');
  await refunded(agreed.trade_no, 60);
  const changed = await paid({ amount: 260, subject: 'Tea [statement:amount+1]' });
  await pay.statusIs(changed.trade_no, 'paid');
  const lost = await paid({ amount: 360, subject: `Bread ${LOST_UNTIL_RELEASED_MARKER}` });
  expect((await pay.query(lost.trade_no)).status).toBe('pending');

  const { run, found } = await twice('alipay', grant.userId, lost.trade_no, () =>
    stack.alipay!.sandbox.release(lost.trade_no),
  );
  expect(run).toMatchObject({ statement: 'ready', rows: 4, summary: { matched: 2, repaired: 1 } });
  expect(found).toEqual(
    [`amount_mismatch ${changed.trade_no} open`, `missing_local_payment ${lost.trade_no} repaired`].sort(),
  );
});
