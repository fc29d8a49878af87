/**
 * Recurring contracts (SPEC §17) on the real stack against the sandbox's contracts, which keep
 * WeChat Pay 委托代扣's rules (07:00–22:00 China time, one success a day, a notice a day before):
 * a signed contract deducts each period as one paid order notified once and ends with its plan;
 * a failed deduction is retried within its window under a new order number; a buyer who unsigns
 * after the notice is charged nothing; a cancel racing a deduction leaves a paid order or none,
 * never a deduction after it; and each error row of the contract's endpoints. Counted at the
 * sandbox: its deductions, notices and unsignings.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { contractWorkflowId } from '../../src/modules/contracts';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type Answer, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { contractEvents, contractReads, sevenAmAfterANotice, type ContractData } from '../support/contracts';
import { until } from '../support/wait';

jest.setTimeout(240_000);

/** 1/10 000 of real time: a day passes in 8.6 s, an hour in 0.36 s. */
const TIME_SCALE = 0.0001;
const DAY_REAL_MS = 86_400_000 * TIME_SCALE;

let stack: TestStack;
let app: AppCredentials;
let other: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let stranger: PaymentsClient;

interface ContractPage {
  list: { contract_no: string }[];
  next: string | null;
}

beforeAll(async () => {
  // A buyer who confirms later does so well within the deduction's wait (10 minutes, scaled: 60 ms).
  stack = await startTestStack({ timeScale: TIME_SCALE, sandboxBuyerConfirmMs: 30 });
  app = await stack.createApp(['payments', 'merchants']);
  other = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  stranger = paymentsClient(stack, other, receiver);
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

const contractBody = (plan: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}) => ({
  merchant_contract_no: `SUB-${randomUUID()}`,
  channel_code: 'sandbox',
  plan: { period: 'day', every: 1, amount: 500, first_at: sevenAmAfterANotice(stack), ...plan },
  subject: 'Tea of the day',
  notify_url: receiver.url,
  ...overrides,
});

async function offer(plan: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}) {
  const made = await pay.post<{
    contract_no: string;
    status: string;
    sign_url: string;
    is_idempotent: boolean;
  }>('/api/v1/contracts', contractBody(plan, overrides));
  if (made.code !== 'success') throw new Error(`create failed: ${made.code} ${made.message}`);
  return made.data!;
}

// Made once `pay` exists (beforeAll).
const cancelContract = (contractNo: string, body: Record<string, unknown> = {}) =>
  contractReads(pay).cancelContract(contractNo, body);
const contract = (contractNo: string, client = pay) => contractReads(pay).contract(contractNo, client);
const statusIs = (contractNo: string, status: string, timeoutMs = 120_000) =>
  contractReads(pay).statusIs(contractNo, status, timeoutMs);

const sign = (signUrl: string) =>
  fetch(signUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'sign' }),
  });

const eventsOf = (contractNo: string, tradeNos: string[] = []) => ({
  count: contractEvents(receiver, contractNo, tradeNos),
});

async function sandboxRows<T extends object>(
  sql: string,
  replacements: Record<string, unknown>,
): Promise<T[]> {
  return stack.database.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

/** The sandbox's deductions under a contract (by durapay's contract_no). */
const deductionsAtSandbox = (contractNo: string) =>
  sandboxRows<{ trade_no: string; status: string; contract_day: string; created_at: Date }>(
    `SELECT o.trade_no, o.status, o.contract_day, o.created_at FROM sandbox_orders o
       JOIN sandbox_contracts c ON c.contract_id = o.contract_id
      WHERE c.contract_no = :contractNo ORDER BY o.created_at`,
    { contractNo },
  );

test('when a daily contract of two periods is signed, then each period is one paid order notified once, a day apart, and the contract ends', async () => {
  const offered = await offer({ count: 2 });
  expect(offered.status).toBe('signing');
  expect(offered.sign_url).toContain('/sandbox/contracts/');
  expect((await sign(offered.sign_url)).status).toBe(200);
  await statusIs(offered.contract_no, 'active', 30_000);
  const ended = await statusIs(offered.contract_no, 'ended');
  const paid = ended.deductions.filter((d) => d.status === 'paid');
  expect(paid).toHaveLength(2);
  expect(new Set(paid.map((d) => d.trade_no)).size).toBe(2);
  for (const d of paid) {
    const order = await pay.query(d.trade_no!);
    expect(order).toMatchObject({ status: 'paid', pay_method: 'contract', amount: 500 });
  }
  // At the channel: two deductions, on two days, and the contract unsigned when the plan ended.
  const atSandbox = await deductionsAtSandbox(offered.contract_no);
  expect(atSandbox.filter((o) => o.status === 'paid')).toHaveLength(2);
  expect(new Set(atSandbox.map((o) => o.contract_day)).size).toBe(atSandbox.length);
  expect(stack.sandboxControls.contractCalls(offered.contract_no).terminate).toBeGreaterThanOrEqual(1);
  await until('the notifications', async () => {
    const e = eventsOf(
      offered.contract_no,
      paid.map((d) => d.trade_no!),
    );
    return e.count('contract.ended') === 1 ? e : undefined;
  });
  const events = eventsOf(
    offered.contract_no,
    paid.map((d) => d.trade_no!),
  );
  expect(events.count('contract.signed')).toBe(1);
  expect(events.count('contract.ended')).toBe(1);
  for (const d of paid) expect(events.count('payment.succeeded', d.trade_no!)).toBe(1);
});

test('when a deduction is refused, then it is retried within the window under a new order number, and one success a day is all the channel sees', async () => {
  const offered = await offer({ count: 1 });
  stack.sandboxControls.steerDeductions(offered.contract_no, ['insufficient']);
  await sign(offered.sign_url);
  const ended = await statusIs(offered.contract_no, 'ended');
  expect(ended.deductions.map((d) => [d.attempt, d.status])).toEqual([
    [1, 'failed'],
    [2, 'paid'],
  ]);
  expect(ended.deductions[0]!.reason).toContain('not enough');
  expect(ended.deductions[0]!.merchant_order_no).not.toBe(ended.deductions[1]!.merchant_order_no);
  const atSandbox = await deductionsAtSandbox(offered.contract_no);
  expect(atSandbox.filter((o) => o.status === 'paid')).toHaveLength(1);
  expect(ended.last_failure).toBeNull();
});

test("when a deduction's answer is lost, then it is reversed, nothing is kept for it, and the retry under a new number takes the period's money", async () => {
  const offered = await offer({ count: 1 });
  stack.sandboxControls.steerDeductions(offered.contract_no, ['answer_lost']);
  await sign(offered.sign_url);
  const ended = await statusIs(offered.contract_no, 'ended');
  expect(ended.deductions.map((d) => [d.attempt, d.status])).toEqual([
    [1, 'failed'],
    [2, 'paid'],
  ]);
  expect(ended.deductions[0]!.reason).toContain('reversed');
  const atSandbox = await deductionsAtSandbox(offered.contract_no);
  // The lost one was charged, then given back by its reverse: the channel keeps one payment.
  expect(atSandbox.map((o) => o.status).sort()).toEqual(['closed', 'paid']);
  const [kept] = atSandbox.filter((o) => o.status === 'paid');
  expect(kept!.trade_no).toBe(ended.deductions[1]!.trade_no);
  expect((await pay.query(ended.deductions[0]!.trade_no!)).status).toBe('closed');
});

test("when every attempt of a period is refused, then contract.deduction_failed is sent once with the channel's reason and nothing is taken", async () => {
  const offered = await offer({ count: 1 });
  stack.sandboxControls.steerDeductions(offered.contract_no, [
    'insufficient',
    'insufficient',
    'insufficient',
  ]);
  await sign(offered.sign_url);
  const ended = await statusIs(offered.contract_no, 'ended');
  expect(ended.deductions.every((d) => d.status === 'failed')).toBe(true);
  expect(ended.deductions.map((d) => d.attempt)).toEqual([1, 2, 3]);
  expect(new Set(ended.deductions.map((d) => d.merchant_order_no)).size).toBe(3);
  expect(ended.last_failure).toMatchObject({ period: 1 });
  expect(ended.last_failure!.reason).toContain('not enough');
  expect((await deductionsAtSandbox(offered.contract_no)).length).toBe(0);
  await until('contract.deduction_failed', async () =>
    eventsOf(offered.contract_no).count('contract.deduction_failed') === 1 ? true : undefined,
  );
});

test('when the buyer unsigns between the notice and the deduction, then nothing is deducted and the contract is cancelled by the buyer', async () => {
  const offered = await offer();
  stack.sandboxControls.cancelAfterNotice(offered.contract_no);
  await sign(offered.sign_url);
  const cancelled = await statusIs(offered.contract_no, 'cancelled');
  expect(cancelled.cancelled_by).toBe('buyer');
  expect(stack.sandboxControls.contractCalls(offered.contract_no).notice).toBe(1);
  // Past the day the deduction would have come: still nothing asked or taken.
  await new Promise((r) => setTimeout(r, DAY_REAL_MS * 1.5));
  expect(stack.sandboxControls.contractCalls(offered.contract_no).deduct).toBe(0);
  expect(await deductionsAtSandbox(offered.contract_no)).toEqual([]);
  expect(eventsOf(offered.contract_no).count('contract.cancelled')).toBe(1);
});

test('when the signing notification is lost, then the contract finds the signature by asking the channel', async () => {
  const offered = await offer();
  stack.sandboxControls.loseContractNotifications(offered.contract_no);
  await sign(offered.sign_url);
  await statusIs(offered.contract_no, 'active', 30_000);
  const cancelled = await cancelContract(offered.contract_no);
  expect(cancelled.data!.status).toBe('cancelled');
  expect(cancelled.data!.cancelled_by).toBe('merchant');
});

test('when a contract is cancelled between its notice and its deduction, then nothing is asked of the channel after the cancel', async () => {
  const offered = await offer();
  await sign(offered.sign_url);
  await until('the notice', async () =>
    stack.sandboxControls.contractCalls(offered.contract_no).notice > 0 ? true : undefined,
  );
  const cancelled = await cancelContract(offered.contract_no);
  expect(cancelled.data!.status).toBe('cancelled');
  // Its workflow has ended: nothing can ask for a deduction any more.
  await stack.client.workflow
    .getHandle(contractWorkflowId(app.app_id, cancelled.data!.merchant_contract_no))
    .result();
  expect(stack.sandboxControls.contractCalls(offered.contract_no)).toMatchObject({ deduct: 0, terminate: 1 });
  expect(await deductionsAtSandbox(offered.contract_no)).toEqual([]);
  expect((await contract(offered.contract_no)).deductions).toEqual([]);
});

test('when a cancel races the deduction, then each contract ends with a paid order or none, and nothing is deducted after it is cancelled', async () => {
  const rounds = 8;
  const offers = await Promise.all(Array.from({ length: rounds }, () => offer()));
  for (const o of offers) stack.sandboxControls.steerDeductions(o.contract_no, ['confirms_later']);
  await Promise.all(offers.map((o) => sign(o.sign_url)));
  await Promise.all(offers.map((o) => statusIs(o.contract_no, 'active', 30_000)));
  const callsAtCancel = new Map<string, number>();
  // Each cancel is sent at its own moment around the first deduction (a day after the notice).
  await Promise.all(
    offers.map(async (o, i) => {
      await until(`the notice of ${o.contract_no}`, async () =>
        stack.sandboxControls.contractCalls(o.contract_no).notice > 0 ? true : undefined,
      );
      await new Promise((r) => setTimeout(r, DAY_REAL_MS * (0.9 + (0.25 * i) / rounds)));
      // Sent again while it answers channel_timeout (the unsigning not confirmed in time), as a client does.
      const answer = await until(`the cancel of ${o.contract_no}`, async () => {
        const a = await pay.post<ContractData>(`/api/v1/contracts/${o.contract_no}/cancel`, {});
        return a.code === 'channel_timeout' ? undefined : a;
      });
      expect(answer.data?.status).toBe('cancelled');
      callsAtCancel.set(o.contract_no, stack.sandboxControls.contractCalls(o.contract_no).deduct);
    }),
  );
  // Every contract's workflow has ended: nothing can ask for a deduction any more.
  await Promise.all(
    offers.map(async (o) =>
      stack.client.workflow
        .getHandle(contractWorkflowId(app.app_id, (await contract(o.contract_no)).merchant_contract_no))
        .result(),
    ),
  );
  await stack.sandboxIdle();
  const outcomes: number[] = [];
  for (const o of offers) {
    const c = await statusIs(o.contract_no, 'cancelled');
    const [terminated] = await sandboxRows<{ terminated_at: Date; status: string }>(
      'SELECT terminated_at, status FROM sandbox_contracts WHERE contract_no = :no',
      { no: o.contract_no },
    );
    expect(terminated!.status).toBe('terminated');
    const atSandbox = await deductionsAtSandbox(o.contract_no);
    expect(atSandbox.length).toBeLessThanOrEqual(1);
    for (const d of atSandbox)
      expect(d.created_at.getTime()).toBeLessThanOrEqual(terminated!.terminated_at.getTime());
    // Money taken by the channel ⇔ the order paid.
    const taken = atSandbox.filter((d) => d.status === 'paid').map((d) => d.trade_no);
    const finished = await until(`the deductions of ${o.contract_no} settled`, async () => {
      const now = await contract(o.contract_no);
      return now.deductions.every((d) => d.status !== 'pending') ? now : undefined;
    });
    expect(finished.deductions.filter((d) => d.status === 'paid').map((d) => d.trade_no)).toEqual(taken);
    expect(c.cancelled_by).toBe('merchant');
    // Past the day the deduction was due: nothing was asked of the channel after the cancel.
    expect(stack.sandboxControls.contractCalls(o.contract_no).deduct).toBe(callsAtCancel.get(o.contract_no));
    outcomes.push(taken.length);
  }
  if (process.env.CONTRACT_RACE_REPORT)
    process.stderr.write(`race outcomes (paid deductions): ${outcomes.join(',')}\n`);
});

test('when the buyer does not sign within a day, then the contract fails and its page takes no signature', async () => {
  const offered = await offer();
  await statusIs(offered.contract_no, 'failed', 60_000);
  expect((await sign(offered.sign_url)).status).toBe(409);
  const cancel = await pay.post(`/api/v1/contracts/${offered.contract_no}/cancel`, {});
  expect([cancel.status, cancel.code]).toEqual([422, 'contract_ended']);
});

test('when a contract is cancelled before it is signed, then it is cancelled and its page takes no signature', async () => {
  const offered = await offer();
  const cancelled = await cancelContract(offered.contract_no, { reason: 'changed my mind' });
  expect(cancelled.data!.status).toBe('cancelled');
  expect((await sign(offered.sign_url)).status).toBe(409);
  const again = await pay.post<ContractData>(`/api/v1/contracts/${offered.contract_no}/cancel`, {});
  expect(again.data!.status).toBe('cancelled');
});

describe('the contract endpoints', () => {
  test('when the same create is sent again, then it is the same contract; with other values it is 400 invalid_param', async () => {
    const body = contractBody();
    const [a, b] = await Promise.all([
      pay.post('/api/v1/contracts', body),
      pay.post('/api/v1/contracts', body),
    ]);
    expect(a.data!.contract_no).toBe(b.data!.contract_no);
    const c = await pay.post<{ is_idempotent: boolean; contract_no: string }>('/api/v1/contracts', body);
    expect(c.data).toMatchObject({ contract_no: a.data!.contract_no, is_idempotent: true });
    const changed = await pay.post('/api/v1/contracts', { ...body, plan: { ...body.plan, amount: 501 } });
    expect([changed.status, changed.code]).toEqual([400, 'invalid_param']);
  });

  test.each([
    [{ plan: { period: 'year', every: 1, amount: 1 } }, 'plan.period'],
    [{ plan: { period: 'day', every: 0, amount: 1 } }, 'plan.every'],
    [{ plan: { period: 'day', every: 1, amount: '100' } }, 'plan.amount'],
    [{ plan: { period: 'day', every: 1, amount: 100, total_amount: 50 } }, 'plan.total_amount'],
    [{ plan: { period: 'day', every: 1, amount: 100, first_at: 'tomorrow' } }, 'plan.first_at'],
    [{ notify_url: 'ftp://x' }, 'notify_url'],
    [{ merchant_contract_no: 'has:colon' }, 'merchant_contract_no'],
    [{ extra: {} }, 'extra'],
  ])('when the create has %j, then it is 400 invalid_param naming %s', async (overrides, field) => {
    const answer = await pay.post('/api/v1/contracts', { ...contractBody(), ...overrides });
    expect([answer.status, answer.code]).toEqual([400, 'invalid_param']);
    expect(answer.message).toContain(field);
  });

  test('when first_at is in the past, then it is 400 invalid_param', async () => {
    const answer = await pay.post(
      '/api/v1/contracts',
      contractBody({ first_at: '2020-01-01T00:00:00.000Z' }),
    );
    expect([answer.status, answer.code]).toEqual([400, 'invalid_param']);
    expect(answer.message).toContain('plan.first_at');
  });

  test('when the channel takes no contracts, then it is 502 channel_not_support', async () => {
    const answer = await pay.post('/api/v1/contracts', contractBody({}, { channel_code: 'paypal' }));
    expect([answer.status, answer.code]).toEqual([502, 'channel_not_support']);
  });

  test('when the merchant is unknown, then it is 422 order_not_found naming the merchant', async () => {
    const answer = await pay.post('/api/v1/contracts', contractBody({}, { merchant_id: 'nobody-here' }));
    expect([answer.status, answer.code]).toEqual([422, 'order_not_found']);
    expect(answer.message).toContain('merchant');
  });

  test("when another app reads or cancels a contract, then it is 404 contract_not_found, and the list shows only the app's own", async () => {
    const offered = await offer();
    const read = await stranger.get(`/api/v1/contracts/${offered.contract_no}`);
    expect([read.status, read.code]).toEqual([404, 'contract_not_found']);
    const cancel = await stranger.post(`/api/v1/contracts/${offered.contract_no}/cancel`, {});
    expect([cancel.status, cancel.code]).toEqual([404, 'contract_not_found']);
    const list = await stranger.get<{ list: { contract_no: string }[] }>('/api/v1/contracts?status=signing');
    expect(list.data!.list.map((c) => c.contract_no)).not.toContain(offered.contract_no);
    const mine = await pay.get<{ list: { contract_no: string }[]; next: string | null }>(
      '/api/v1/contracts?limit=100&status=signing',
    );
    expect(mine.data!.list.map((c) => c.contract_no)).toContain(offered.contract_no);
    const unknown = await pay.get('/api/v1/contracts/K000000000000000000000000');
    expect([unknown.status, unknown.code]).toEqual([404, 'contract_not_found']);
  });

  test('when the list is paged by its cursor, then every contract is seen once', async () => {
    const merchantContractNo = `PAGE-${randomUUID().slice(0, 8)}`;
    const made = await Promise.all(
      Array.from({ length: 5 }, (_, i) => offer({}, { merchant_contract_no: `${merchantContractNo}-${i}` })),
    );
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const path: string = `/api/v1/contracts?limit=2${after ? `&after=${after}` : ''}`;
      const page: Answer<ContractPage> = await pay.get<ContractPage>(path);
      seen.push(...page.data!.list.map((c) => c.contract_no));
      after = page.data!.next;
    } while (after);
    for (const m of made) expect(seen.filter((n) => n === m.contract_no)).toHaveLength(1);
    const bad = await pay.get('/api/v1/contracts?after=bogus');
    expect([bad.status, bad.code]).toEqual([400, 'invalid_param']);
  });

  test('when an app creates an order with pay_method contract, then it is 400 invalid_pay_method', async () => {
    const answer = await pay.post('/api/v1/pay/unified-order', {
      merchant_order_no: `M-${randomUUID()}`,
      pay_method: 'contract',
      amount: 100,
      subject: 'x',
      notify_url: receiver.url,
      channel_code: 'sandbox',
    });
    expect([answer.status, answer.code]).toEqual([400, 'invalid_pay_method']);
  });

  test('when a contract notification does not verify, then the channel is answered fail and nothing changes', async () => {
    const offered = await offer();
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/contract/sandbox`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        event_id: 'x',
        type: 'contract.signed',
        contract: {
          contract_no: offered.contract_no,
          contract_id: 'FORGED',
          status: 'active',
          signed_at: new Date().toISOString(),
        },
      }),
    });
    expect(await res.text()).toBe('fail');
    expect((await contract(offered.contract_no)).status).toBe('signing');
  });
});
