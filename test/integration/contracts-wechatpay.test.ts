/**
 * Recurring contracts (SPEC §17) on WeChat Pay 委托代扣 over durapay's HTTP API, against the
 * offline WeChat Pay upstream (sandbox/wechatpay/papay.ts: the v2 sign page, querycontract,
 * deletecontract, pappayapply, paporderquery, the v3 pre-deduction notice and the v2 XML
 * notifications, each signed as published) with real Temporal and Postgres, on a time-scaled
 * stack whose contract clock the upstream's rules keep too (07:00–22:00 China time, a notice a day
 * before, one deduction taken a day). Counted at the upstream: its deductions by day, notices and
 * unsignings. Money WeChat Pay takes ⇔ the deduction's order paid, in every case.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { contractWorkflowId } from '../../src/modules/contracts';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { contractEvents, contractReads, sevenAmAfterANotice } from '../support/contracts';
import { until } from '../support/wait';

jest.setTimeout(240_000);

/** 1/10 000 of real time: a day passes in 8.6 s. */
const TIME_SCALE = 0.0001;
const DAY_REAL_MS = 86_400_000 * TIME_SCALE;
const SUB_MCHID = '1900000109';

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let merchantId: string;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE, wechatpay: { refundDelayMs: 200 } });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = `MWXK-${randomUUID().slice(0, 8)}`;
  const created = await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea Club' });
  expect(created.code).toBe('success');
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: SUB_MCHID });
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

const upstream = () => stack.wechatpay!.sandbox;

async function offer(plan: Record<string, unknown> = {}) {
  const made = await pay.post<{ contract_no: string; status: string; sign_url: string }>(
    '/api/v1/contracts',
    {
      merchant_contract_no: `WXK-${randomUUID()}`,
      merchant_id: merchantId,
      channel_code: 'wechatpay',
      plan: { period: 'day', every: 1, amount: 800, first_at: sevenAmAfterANotice(stack), ...plan },
      subject: '会员月卡',
      notify_url: receiver.url,
    },
  );
  if (made.code !== 'success') throw new Error(`create failed: ${made.code} ${made.message}`);
  return made.data!;
}

/** The buyer opens the sign page in WeChat and agrees: the page's form, posted. */
async function sign(signUrl: string): Promise<void> {
  const page = await fetch(signUrl);
  const html = await page.text();
  expect(page.status).toBe(200);
  const token = /name="token" value="([^"]+)"/.exec(html)?.[1];
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!token || !action) throw new Error(`no sign form on the page: ${html.slice(0, 300)}`);
  const agreed = await fetch(action.replaceAll('&amp;', '&'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  expect(agreed.status).toBe(200);
}

// Made once `pay` exists (beforeAll).
const statusIs = (contractNo: string, status: string, timeoutMs = 120_000) =>
  contractReads(pay).statusIs(contractNo, status, timeoutMs);
const cancelContract = (contractNo: string) => contractReads(pay).cancelContract(contractNo);
const eventsOf = (contractNo: string, tradeNos: string[] = []) =>
  contractEvents(receiver, contractNo, tradeNos);

test("when a daily contract of two periods is signed on WeChat Pay's page, then each period is one paid order a day apart, notified once, and the contract is unsigned at its end", async () => {
  const offered = await offer({ count: 2 });
  const url = new URL(offered.sign_url);
  expect(url.pathname).toMatch(/\/papay\/partner\/entrustweb$/);
  expect(url.searchParams.get('contract_code')).toBe(offered.contract_no);
  expect(url.searchParams.get('sub_mch_id')).toBe(SUB_MCHID);
  await sign(offered.sign_url);
  await statusIs(offered.contract_no, 'active', 30_000);
  const ended = await statusIs(offered.contract_no, 'ended');
  const paid = ended.deductions.filter((d) => d.status === 'paid');
  expect(paid).toHaveLength(2);
  for (const d of paid) {
    expect(await pay.query(d.trade_no!)).toMatchObject({
      status: 'paid',
      pay_method: 'contract',
      amount: 800,
    });
  }
  const held = upstream().papayContract(offered.contract_no)!;
  // At WeChat Pay: two taken, on two days, each after its own notice of the amount; unsigned by the merchant's API.
  expect(Object.values(held.takenByDay)).toEqual([1, 1]);
  expect(
    held.deductions
      .filter((d) => d.state === 'SUCCESS')
      .map((d) => d.outTradeNo)
      .sort(),
  ).toEqual(paid.map((d) => d.trade_no).sort());
  expect(held.notices.length).toBeGreaterThanOrEqual(2);
  expect(held.notices.every((n) => n.amount >= 800)).toBe(true);
  expect(held).toMatchObject({ state: 'terminated', terminationMode: '3' });
  await until('the notifications', async () => {
    const count = eventsOf(
      offered.contract_no,
      paid.map((d) => d.trade_no!),
    );
    return count('contract.ended') === 1 && paid.every((d) => count('payment.succeeded', d.trade_no!) === 1)
      ? count
      : undefined;
  });
  const count = eventsOf(
    offered.contract_no,
    paid.map((d) => d.trade_no!),
  );
  expect(count('contract.signed')).toBe(1);
  for (const d of paid) expect(count('payment.succeeded', d.trade_no!)).toBe(1);
  // Each deduction's v2 XML notification was verified and taken by its order.
  await upstream().idle();
  for (const d of paid) {
    const rows = await stack.database.db.sequelize.query<{ outcome: string; verified: boolean }>(
      "SELECT outcome, verified FROM channel_callbacks WHERE channel_code = 'wechatpay' AND trade_no = :tradeNo",
      { replacements: { tradeNo: d.trade_no }, type: QueryTypes.SELECT },
    );
    expect(rows).toContainEqual({ outcome: 'delivered', verified: true });
  }
});

test("when WeChat Pay fails a deduction for want of balance, then it is retried under a new out_trade_no with WeChat Pay's reason kept, and one is taken that day", async () => {
  const offered = await offer({ count: 1 });
  await sign(offered.sign_url);
  await statusIs(offered.contract_no, 'active', 30_000);
  upstream().steerDeductions(offered.contract_no, 'insufficient');
  const ended = await statusIs(offered.contract_no, 'ended');
  expect(ended.deductions.map((d) => [d.attempt, d.status])).toEqual([
    [1, 'failed'],
    [2, 'paid'],
  ]);
  expect(ended.deductions[0]!.reason).toContain('余额不足');
  expect(ended.deductions[0]!.trade_no).not.toBe(ended.deductions[1]!.trade_no);
  const held = upstream().papayContract(offered.contract_no)!;
  expect(held.deductions.map((d) => d.state).sort()).toEqual(['PAYERROR', 'SUCCESS']);
  expect(Object.values(held.takenByDay)).toEqual([1]);
});

test("when a deduction's answer is lost, then what WeChat Pay took is the order's: paid, never taken twice", async () => {
  const offered = await offer({ count: 1 });
  await sign(offered.sign_url);
  await statusIs(offered.contract_no, 'active', 30_000);
  upstream().steerDeductions(offered.contract_no, 'answer_lost');
  const ended = await statusIs(offered.contract_no, 'ended');
  const taken = upstream()
    .papayContract(offered.contract_no)!
    .deductions.filter((d) => d.state === 'SUCCESS');
  expect(taken).toHaveLength(1);
  expect(ended.deductions.filter((d) => d.status === 'paid').map((d) => d.trade_no)).toEqual([
    taken[0]!.outTradeNo,
  ]);
  expect((await pay.query(taken[0]!.outTradeNo)).status).toBe('paid');
});

test('when the buyer unsigns in WeChat between the notice and the deduction, then nothing is deducted and the contract is cancelled by the buyer', async () => {
  const offered = await offer();
  upstream().cancelAfterNotice(offered.contract_no);
  await sign(offered.sign_url);
  const cancelled = await statusIs(offered.contract_no, 'cancelled');
  expect(cancelled.cancelled_by).toBe('buyer');
  await stack.client.workflow
    .getHandle(contractWorkflowId(app.app_id, cancelled.merchant_contract_no))
    .result();
  // Past the day the deduction would have come: nothing asked.
  await new Promise((r) => setTimeout(r, DAY_REAL_MS * 1.5));
  const held = upstream().papayContract(offered.contract_no)!;
  expect(held).toMatchObject({ state: 'terminated', terminationMode: '2', deductRequests: 0 });
  expect(held.notices).toHaveLength(1);
  expect(eventsOf(offered.contract_no)('contract.cancelled')).toBe(1);
});

test("when the contract's notifications are lost, then its signature is found by querycontract, and a cancel unsigns it by deletecontract", async () => {
  const offered = await offer();
  upstream().loseContractNotifications(offered.contract_no);
  await sign(offered.sign_url);
  await statusIs(offered.contract_no, 'active', 30_000);
  const cancelled = await cancelContract(offered.contract_no);
  expect(cancelled.data).toMatchObject({ status: 'cancelled', cancelled_by: 'merchant' });
  expect(upstream().papayContract(offered.contract_no)).toMatchObject({
    state: 'terminated',
    terminationMode: '3',
    deleteRequests: 1,
    deductRequests: 0,
  });
});

test('when a deduction is refunded, then WeChat Pay gives it back as for any order', async () => {
  const offered = await offer({ count: 1 });
  await sign(offered.sign_url);
  const ended = await statusIs(offered.contract_no, 'ended');
  const tradeNo = ended.deductions.find((d) => d.status === 'paid')!.trade_no!;
  const refund = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
    trade_no: tradeNo,
    merchant_refund_no: `RF-${randomUUID()}`,
    refund_amount: 800,
    reason: 'membership cancelled',
    notify_url: receiver.url,
  });
  expect(refund.code).toBe('success');
  await until('the refund at WeChat Pay', async () =>
    upstream()
      .refundsOf(tradeNo)
      .some((r) => r.status === 'SUCCESS' && r.amount === 800)
      ? true
      : undefined,
  );
});

test('when the buyer signs a page opened before its contract was cancelled, then durapay unsigns that signature at WeChat Pay', async () => {
  const offered = await offer();
  const cancelled = await cancelContract(offered.contract_no);
  expect(cancelled.data).toMatchObject({ status: 'cancelled' });
  await stack.client.workflow
    .getHandle(contractWorkflowId(app.app_id, cancelled.data!.merchant_contract_no))
    .result();
  // WeChat Pay's page stays open: the buyer signs it all the same.
  await sign(offered.sign_url);
  const held = await until('the late signature unsigned', async () => {
    const c = upstream().papayContract(offered.contract_no);
    return c?.state === 'terminated' ? c : undefined;
  });
  expect(held).toMatchObject({ terminationMode: '3', deductRequests: 0 });
  expect((await contractReads(pay).contract(offered.contract_no)).status).toBe('cancelled');
  expect(eventsOf(offered.contract_no)('contract.signed')).toBe(0);
});
