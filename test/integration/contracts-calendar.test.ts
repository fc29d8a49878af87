/**
 * A monthly contract (SPEC §17) over three periods on a stack whose calendar runs 20 000 times
 * faster than real time (a month in 130 s, a day's window in 2.7 s, so that a loaded machine's
 * latency stays well inside a window): each period's deduction is one paid order, notified
 * once, on its own China day about a month after the one before, and each period is a run of its
 * own (continue-as-new), so that the contract's history stays one period long.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { contractWorkflowId } from '../../src/modules/contracts';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { sevenAmAfterANotice } from '../support/contracts';
import { until } from '../support/wait';

jest.setTimeout(480_000);

const TIME_SCALE = 0.00005;

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

interface Contract {
  contract_no: string;
  status: string;
  deducted_count: number;
  deducted_amount: number;
  deductions: { period: number; trade_no: string | null; status: string }[];
}

test('when a monthly contract of three periods is signed, then it deducts once a month as three paid orders notified once each, one run per period, and ends', async () => {
  const merchantContractNo = `MONTHLY-${randomUUID()}`;
  const made = await pay.post<{ contract_no: string; sign_url: string }>('/api/v1/contracts', {
    merchant_contract_no: merchantContractNo,
    channel_code: 'sandbox',
    // 07:00 China time on the contract clock, a day and more from now: each month's window opens then.
    plan: { period: 'month', every: 1, amount: 1500, count: 3, first_at: sevenAmAfterANotice(stack) },
    subject: 'Tea of the month',
    notify_url: receiver.url,
  });
  expect(made.code).toBe('success');
  const { contract_no: contractNo, sign_url: signUrl } = made.data!;
  await fetch(signUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'sign' }),
  });
  const ended = await until(
    `contract ${contractNo} ended`,
    async () => {
      const c = (await pay.get<Contract>(`/api/v1/contracts/${contractNo}`)).data!;
      return c.status === 'ended' ? c : undefined;
    },
    400_000,
  );
  expect(ended).toMatchObject({ deducted_count: 3, deducted_amount: 4500 });
  const tradeNos = ended.deductions.filter((d) => d.status === 'paid').map((d) => d.trade_no!);
  expect(ended.deductions.map((d) => d.period)).toEqual([1, 2, 3]);
  expect(new Set(tradeNos).size).toBe(3);

  // At the channel: three deductions, each on its own China day, a month or so apart.
  const days = (
    await stack.database.db.sequelize.query<{ contract_day: string }>(
      `SELECT o.contract_day FROM sandbox_orders o JOIN sandbox_contracts c ON c.contract_id = o.contract_id
        WHERE c.contract_no = :contractNo AND o.status = 'paid' ORDER BY o.created_at`,
      { replacements: { contractNo }, type: QueryTypes.SELECT },
    )
  ).map((r) => Date.parse(r.contract_day));
  expect(days).toHaveLength(3);
  for (let i = 1; i < days.length; i++) {
    const apart = (days[i]! - days[i - 1]!) / 86_400_000;
    // A month (28–31 days), give or take a window missed on a loaded machine (the next day's).
    expect(apart).toBeGreaterThanOrEqual(26);
    expect(apart).toBeLessThanOrEqual(34);
  }

  await until('every notification', async () => {
    const bodies = receiver.received.map(
      (r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> },
    );
    const paid = bodies.filter(
      (b) => b.type === 'payment.succeeded' && tradeNos.includes(String(b.data.trade_no)),
    );
    const endedEvents = bodies.filter(
      (b) => b.type === 'contract.ended' && b.data.contract_no === contractNo,
    );
    if (paid.length < 3 || endedEvents.length < 1) return undefined;
    expect(paid.map((b) => b.data.trade_no).sort()).toEqual([...tradeNos].sort());
    expect(endedEvents).toHaveLength(1);
    return true;
  });

  // One run per period: the signing's and first period's, then one per later period.
  const runs: { historyLength: number; status: string }[] = [];
  for await (const run of stack.client.workflow.list({
    query: `WorkflowId = "${contractWorkflowId(app.app_id, merchantContractNo)}"`,
  })) {
    runs.push({ historyLength: run.historyLength, status: run.status.name });
  }
  expect(runs.length).toBeGreaterThanOrEqual(3);
  for (const run of runs) expect(run.historyLength).toBeLessThan(120);
});
