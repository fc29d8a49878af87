/**
 * Reconciliation (SPEC §10) through HTTP against the sandbox channel, whose statements are
 * WeChat Pay's tradebill format made from what the simulator holds: a day of traffic with every
 * category in it, each found exactly once; the lost payment and the payment after close repaired
 * through their orders (each notified once); and the same day run again changing nothing.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { createActivities } from '../../src/activities';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { reconciliationRunId, type ReconciliationInput } from '../../src/modules/reconciliation/messages';
import { ReconciliationRepository } from '../../src/modules/reconciliation/repository';
import { billDateOf, readyDeadline } from '../../src/modules/reconciliation/rules';
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
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 100 });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Run {
  run_id: string;
  status: string;
  statement: string | null;
  rows: number;
  summary: {
    rows: number;
    matched: number;
    carried: number;
    repaired: number;
    categories: Record<string, number>;
    channel: { paid: number; refunded: number; fees: number };
    durapay: { paid: number; refunded: number };
  } | null;
}
interface Mismatch {
  mismatch_id: string;
  category: string;
  kind: string;
  trade_no: string;
  refund_no: string | null;
  state: string;
  durapay: Record<string, unknown> | null;
  channel: Record<string, unknown> | null;
}

const today = () => billDateOf(new Date());
const account = (merchantId: string) => `S-${merchantId}`;

/** Starts the day's run of one sandbox account by hand and answers its run_id. */
async function startRun(merchantId: string): Promise<string> {
  const started = await pay.post<{ list: Run[] }>('/api/v1/reconciliation/runs', {
    channel_code: 'sandbox',
    bill_date: today(),
    account: account(merchantId),
  });
  expect(started).toMatchObject({ status: 200, code: 'success' });
  expect(started.data!.list).toHaveLength(1);
  return started.data!.list[0]!.run_id;
}

const finished = (runId: string) => stack.client.workflow.getHandle(`reconciliation:${runId}`).result();

async function runOf(runId: string): Promise<Run> {
  const page = await pay.get<{ list: Run[] }>(
    `/api/v1/reconciliation/runs?channel_code=sandbox&bill_date=${today()}`,
  );
  const run = page.data!.list.find((r) => r.run_id === runId);
  if (!run) throw new Error(`run ${runId} not listed`);
  return run;
}

async function mismatchesOf(runId: string): Promise<Mismatch[]> {
  const page = await pay.get<{ list: Mismatch[]; total: number }>(
    `/api/v1/reconciliation/runs/${encodeURIComponent(runId)}/mismatches?limit=100`,
  );
  expect(page).toMatchObject({ status: 200, code: 'success' });
  return page.data!.list;
}

const sandboxOrder = async (tradeNo: string) =>
  (
    await stack.database.db.sequelize.query<{ status: string }>(
      'SELECT status FROM sandbox_orders WHERE trade_no = :tradeNo',
      { replacements: { tradeNo }, type: QueryTypes.SELECT },
    )
  )[0];

const refundSucceeded = async (tradeNo: string, amount: number, reason: string) => {
  const r = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
    trade_no: tradeNo,
    refund_amount: amount,
    reason,
  });
  expect(r.code).toBe('success');
  await until(`refund ${r.data!.refund_no} succeeded`, async () => {
    const q = await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${r.data!.refund_no}`);
    return q.data?.status === 'success' ? true : undefined;
  });
  return r.data!.refund_no;
};

describe("a day's reconciliation of a sandbox account", () => {
  test('when the day holds every kind of difference, then each category is found once, the lost and the late payment are repaired through their orders, and a second run changes nothing', async () => {
    const merchantId = await pay.merchant();
    const order = (overrides: Record<string, unknown> = {}) => ({ merchant_id: merchantId, ...overrides });

    // Agreed on both sides: a payment, and a payment with a partial refund.
    const agreed = await pay.paidOrder(order({ amount: 100 }));
    const refunded = await pay.paidOrder(order({ amount: 200 }));
    const refundNo = await refundSucceeded(refunded.trade_no, 30, 'changed mind');
    // The statement shows a refund still PROCESSING that durapay knows succeeded.
    const processing = await pay.paidOrder(order({ amount: 300 }));
    const processingRefund = await refundSucceeded(
      processing.trade_no,
      40,
      'late [statement:refund-processing]',
    );
    // The channel's amount differs from the order's.
    const changed = await pay.paidOrder(order({ amount: 400, subject: 'Tea [statement:amount+1]' }));
    // The statement lacks a payment durapay has (within the carry-over: not yet a mismatch).
    const omitted = await pay.paidOrder(order({ amount: 500, subject: 'Cake [statement:omit]' }));
    // Paid at the channel, its callback and every query lost: durapay still says pending.
    const lost = await pay.create(order({ amount: 600, subject: `Bread ${LOST_UNTIL_RELEASED_MARKER}` }));
    await pay.buyerPays(lost.pay_credential.pay_url);
    await until('the lost order paid at the channel', async () =>
      (await sandboxOrder(lost.trade_no))?.status === 'paid' ? true : undefined,
    );
    // Closed by durapay, then paid at the channel all the same (its close was lost there).
    const late = await pay.create(order({ amount: 700, extra: { sandbox: { callback: 'drop' } } }));
    expect((await pay.post('/api/v1/pay/close', { trade_no: late.trade_no })).code).toBe('success');
    await pay.statusIs(late.trade_no, 'closed');
    await stack.database.db.sequelize.query(
      "UPDATE sandbox_orders SET status = 'paid', paid_at = now(), closed_at = NULL WHERE trade_no = :t",
      { replacements: { t: late.trade_no } },
    );
    // A payment at the channel that durapay never made.
    const unknown = `P${Date.now()}${randomUUID().slice(0, 6)}`;
    await stack.database.db.sequelize.query(
      `INSERT INTO sandbox_orders (trade_no, channel_trade_no, amount, currency, pay_method, subject, expire_at,
         notify_url, extra, sub_merchant_no, profit_sharing, callback_mode, status, paid_at, created_at, updated_at)
       VALUES (:t, :c, 800, 'CNY', 'qr_code', 'Elsewhere', now(), 'http://127.0.0.1:9/', '{}', :s, false, 'drop',
               'paid', now(), now(), now())`,
      { replacements: { t: unknown, c: `SBX-${unknown}`, s: account(merchantId) } },
    );
    expect((await pay.query(lost.trade_no)).status).toBe('pending');

    const runId = await startRun(merchantId);
    // The lost payment's confirming query is cut off until the channel answers again.
    await until('the lost payment found', async () =>
      (await mismatchesOf(runId)).some((m) => m.trade_no === lost.trade_no) ? true : undefined,
    );
    stack.sandboxControls.release(lost.trade_no);
    const result = await finished(runId);
    expect(result).toMatchObject({ status: 'completed' });

    const run = await runOf(runId);
    expect(run).toMatchObject({ status: 'completed', statement: 'ready', rows: 9 });
    expect(run.summary!.categories).toEqual({
      missing_local_payment: 2,
      missing_channel_payment: 0,
      amount_mismatch: 1,
      status_mismatch: 1,
      unknown_at_durapay: 1,
    });
    expect(run.summary).toMatchObject({ carried: 1, repaired: 2, matched: 4, rows: 9 });
    // 100 + 200 + 300 + 401 + 600 + 700 + 800 paid; 30 + 40 refunded, one of them still processing there.
    expect(run.summary!.channel).toMatchObject({ paid: 3101, refunded: 30 });
    expect(run.summary!.durapay).toMatchObject({ refunded: 70 });

    // The app sees its own orders' findings (not the unknown payment, which is no order of it).
    const found = await mismatchesOf(runId);
    const key = (m: Mismatch) => `${m.category} ${m.trade_no} ${m.refund_no ?? ''} ${m.state}`;
    expect(found.map(key).sort()).toEqual(
      [
        `missing_local_payment ${lost.trade_no}  repaired`,
        `missing_local_payment ${late.trade_no}  repaired`,
        `amount_mismatch ${changed.trade_no}  open`,
        `status_mismatch ${processing.trade_no} ${processingRefund} open`,
        `missing_channel_payment ${omitted.trade_no}  carried`,
      ].sort(),
    );
    const amount = found.find((m) => m.category === 'amount_mismatch')!;
    expect(amount.durapay).toMatchObject({ amount: 400 });
    expect(amount.channel).toMatchObject({ amount: 401 });

    // The repairs went through the orders: paid (the late one flagged), each announced once.
    await pay.statusIs(lost.trade_no, 'paid');
    await pay.statusIs(late.trade_no, 'paid');
    const [flag] = await stack.database.db.sequelize.query<{ needs_refund_review: boolean }>(
      'SELECT needs_refund_review FROM orders WHERE trade_no = :t',
      { replacements: { t: late.trade_no }, type: QueryTypes.SELECT },
    );
    expect(flag).toEqual({ needs_refund_review: true });
    for (const t of [lost.trade_no, late.trade_no]) {
      await until(`payment.succeeded for ${t}`, async () =>
        pay.notificationsFor(t, 'payment.succeeded').length > 0 ? true : undefined,
      );
    }
    const announced = (type: string) =>
      receiver.received.filter((r) => (JSON.parse(r.body) as { type: string }).type === type);
    await until('the mismatches announced', async () =>
      announced('reconciliation.mismatch').length >= 2 ? true : undefined,
    );
    await until('the run announced', async () =>
      announced('reconciliation.completed').length >= 1 ? true : undefined,
    );

    // The same day again: the same findings, no repair, no notification.
    const before = {
      run: (await runOf(runId)).summary,
      found: found.map(key).sort(),
      received: receiver.received.length,
    };
    expect(await startRun(merchantId)).toBe(runId);
    expect(await finished(runId)).toMatchObject({ status: 'completed' });
    expect((await runOf(runId)).summary).toEqual(before.run);
    expect((await mismatchesOf(runId)).map(key).sort()).toEqual(before.found);
    await stack.sandboxIdle();
    expect(receiver.received.length).toBe(before.received);
    for (const t of [lost.trade_no, late.trade_no]) {
      expect(pay.notificationsFor(t, 'payment.succeeded')).toHaveLength(1);
    }
    expect(announced('reconciliation.mismatch')).toHaveLength(2);
    expect(announced('reconciliation.completed')).toHaveLength(1);
    void agreed;
    void refundNo;

    // Past the carry-over, the payment the statement still lacks becomes a mismatch, announced.
    const repo = new ReconciliationRepository(stack.database.db, stack.payloadKeys.keyring);
    const fourDaysOn = new Date(Date.now() + 4 * 86_400_000 + 60_000);
    const opened = await repo.settleCarried(
      { channelCode: 'sandbox', account: account(merchantId) },
      fourDaysOn,
    );
    expect(opened.map((m) => [m.category, m.trade_no, m.state])).toEqual([
      ['missing_channel_payment', omitted.trade_no, 'open'],
    ]);
  });
});

describe('the reconciliation API', () => {
  test('when a run is asked for with a bad field, then 400 names the field and nothing starts', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ bill_date: today() }, 'invalid_param', /channel_code/],
      [{ channel_code: 'sandbox' }, 'invalid_param', /bill_date/],
      [{ channel_code: 'sandbox', bill_date: '2026-02-30' }, 'invalid_param', /bill_date/],
      [{ channel_code: 'sandbox', bill_date: '26-11-26' }, 'invalid_param', /bill_date/],
      [{ channel_code: 'sandbox', bill_date: '2999-01-01' }, 'invalid_param', /bill_date/],
      [{ channel_code: 'nowhere', bill_date: today() }, 'invalid_param', /channel_code/],
      [{ channel_code: 'sandbox', bill_date: today(), account: 'S-not-mine' }, 'invalid_param', /account/],
      [{ channel_code: 'sandbox', bill_date: today(), notify_url: 'ftp://x' }, 'invalid_param', /notify_url/],
      [{ channel_code: 'sandbox', bill_date: today(), extra: 1 }, 'invalid_param', /extra/],
    ];
    for (const [body, code, field] of cases) {
      const a = await pay.post('/api/v1/reconciliation/runs', body);
      expect({ body, status: a.status, code: a.code }).toEqual({ body, status: 400, code });
      expect(a.message).toMatch(field);
    }
    const listed = await pay.get<{ list: Run[] }>('/api/v1/reconciliation/runs?bill_date=2999-01-01');
    expect(listed.data!.list).toEqual([]);
    expect((await pay.get('/api/v1/reconciliation/runs?status=nope')).status).toBe(400);
  });

  test("when another app asks for a run or a mismatch of this app's orders, then it is not found, and its resolution is recorded only by the owner", async () => {
    const merchantId = await pay.merchant();
    const changed = await pay.paidOrder({
      merchant_id: merchantId,
      amount: 900,
      subject: 'Jam [statement:amount+1]',
    });
    const runId = await startRun(merchantId);
    expect(await finished(runId)).toMatchObject({ status: 'completed' });
    const [mismatch] = await mismatchesOf(runId);
    expect(mismatch).toMatchObject({
      category: 'amount_mismatch',
      trade_no: changed.trade_no,
      state: 'open',
    });

    const other = paymentsClient(stack, await stack.createApp(['payments']), receiver);
    const path = `/api/v1/reconciliation/runs/${encodeURIComponent(runId)}/mismatches`;
    expect(await other.get(path)).toMatchObject({ status: 404, code: 'reconciliation_not_found' });
    expect(
      (await other.get<{ list: Run[] }>(`/api/v1/reconciliation/runs?bill_date=${today()}`)).data!.list,
    ).toEqual([]);
    const resolve = (client: PaymentsClient, id: string, body: Record<string, unknown>) =>
      client.post<Mismatch & { resolution: string; resolved_by: string }>(
        `/api/v1/reconciliation/mismatches/${id}/resolve`,
        body,
      );
    const decision = {
      resolution: 'accepted_durapay',
      resolved_by: 'ops@example.com',
      note: 'the till says 9.00',
    };
    expect(await resolve(other, mismatch!.mismatch_id, decision)).toMatchObject({
      status: 404,
      code: 'reconciliation_not_found',
    });
    expect(await resolve(pay, '99999999', decision)).toMatchObject({
      status: 404,
      code: 'reconciliation_not_found',
    });
    expect(await resolve(pay, mismatch!.mismatch_id, { ...decision, resolution: 'refunded' })).toMatchObject({
      status: 400,
      code: 'invalid_param',
    });
    expect(await resolve(pay, mismatch!.mismatch_id, { resolution: 'ignored' })).toMatchObject({
      status: 400,
      code: 'invalid_param',
      message: expect.stringMatching(/resolved_by/),
    });
    const done = await resolve(pay, mismatch!.mismatch_id, decision);
    expect(done).toMatchObject({
      status: 200,
      data: { state: 'resolved', resolution: 'accepted_durapay', resolved_by: 'ops@example.com' },
    });
    // Resolved once; and a run of the day again keeps the resolution instead of finding it anew.
    expect(await resolve(pay, mismatch!.mismatch_id, decision)).toMatchObject({
      status: 400,
      code: 'invalid_param',
    });
    expect(await startRun(merchantId)).toBe(runId);
    expect(await finished(runId)).toMatchObject({ status: 'completed' });
    expect((await mismatchesOf(runId)).map((m) => [m.mismatch_id, m.state])).toEqual([
      [mismatch!.mismatch_id, 'resolved'],
    ]);
    // No money moved: the order is as it was.
    expect(await pay.query(changed.trade_no)).toMatchObject({ status: 'paid', refunded_amount: 0 });
    expect(
      await pay.get(`/api/v1/reconciliation/runs/${encodeURIComponent('sandbox:x:2026-01-01')}/mismatches`),
    ).toMatchObject({
      status: 404,
      code: 'reconciliation_not_found',
    });
  });

  test('when a day has no traffic at the account, then the run completes with an empty statement and nothing found', async () => {
    const merchantId = await pay.merchant();
    const runId = await startRun(merchantId);
    expect(await finished(runId)).toMatchObject({ status: 'completed' });
    expect(await runOf(runId)).toMatchObject({
      statement: 'empty',
      rows: 0,
      summary: { matched: 0, carried: 0 },
    });
  });

  test('when the statement is not ready at first, then it is asked for again on the backoff and read once ready', async () => {
    const merchantId = await pay.merchant();
    await pay.paidOrder({ merchant_id: merchantId, amount: 100 });
    const asked = stack.sandboxControls.statementRequests(today());
    stack.sandboxControls.holdStatement(today(), 2);
    const runId = await startRun(merchantId);
    expect(await finished(runId)).toMatchObject({ status: 'completed' });
    expect(stack.sandboxControls.statementRequests(today()) - asked).toBe(3);
    expect(await runOf(runId)).toMatchObject({ statement: 'ready', rows: 1, summary: { matched: 1 } });
  });
});

describe('what a run never repairs or hides', () => {
  test('when a pending order was paid a different amount at the channel, then it is an amount_mismatch and the order stays pending', async () => {
    const merchantId = await pay.merchant();
    const lost = await pay.create({
      merchant_id: merchantId,
      amount: 500,
      subject: `Odd ${LOST_UNTIL_RELEASED_MARKER} [statement:amount+1]`,
    });
    await pay.buyerPays(lost.pay_credential.pay_url);
    await until('paid at the channel', async () =>
      (await sandboxOrder(lost.trade_no))?.status === 'paid' ? true : undefined,
    );
    // Paid at the channel, left off the statement, then partly refunded: the refund's line names
    // the trade, but it is no payment line.
    const omitted = await pay.paidOrder({
      merchant_id: merchantId,
      amount: 300,
      subject: 'Cake [statement:omit]',
    });
    await refundSucceeded(omitted.trade_no, 100, 'broken');

    const runId = await startRun(merchantId);
    expect(await finished(runId)).toMatchObject({ status: 'completed' });
    const found = (await mismatchesOf(runId)).map((m) => `${m.category} ${m.trade_no} ${m.state}`).sort();
    expect(found).toEqual(
      [`amount_mismatch ${lost.trade_no} open`, `missing_channel_payment ${omitted.trade_no} carried`].sort(),
    );
    expect((await runOf(runId)).summary).toMatchObject({ repaired: 0, carried: 1 });
    // The run handed the order nothing: it is still pending, and nobody was told it was paid.
    expect((await pay.query(lost.trade_no)).status).toBe('pending');
    expect(pay.notificationsFor(lost.trade_no, 'payment.succeeded')).toHaveLength(0);
    stack.sandboxControls.release(lost.trade_no);
  });

  test("when two apps take orders on the channel's own account, then neither sees the account's summary nor the other's notify_url, and each hears at its own", async () => {
    const otherReceiver = await new Receiver().answer(200).start();
    try {
      const other = paymentsClient(stack, await stack.createApp(['payments']), otherReceiver);
      await pay.paidOrder({ amount: 120 });
      await other.paidOrder({ amount: 130 });
      const hook = await new Receiver().answer(200).start();
      try {
        const started = await pay.post<{ list: Run[] & { started_by: string }[] }>(
          '/api/v1/reconciliation/runs',
          {
            channel_code: 'sandbox',
            bill_date: today(),
            account: 'default',
            notify_url: hook.url,
          },
        );
        expect(started).toMatchObject({ status: 200, code: 'success' });
        const runId = started.data!.list[0]!.run_id;
        expect(runId).toBe(`sandbox:default:${today()}`);
        expect(await finished(runId)).toMatchObject({ status: 'completed' });
        const seen = await other.get<{ list: (Run & { started_by: string; error: string | null })[] }>(
          `/api/v1/reconciliation/runs?bill_date=${today()}&channel_code=sandbox`,
        );
        const run = seen.data!.list.find((r) => r.run_id === runId);
        expect(run).toMatchObject({ status: 'completed', summary: null, error: null, started_by: 'app' });
        const completed = (r: Receiver) =>
          r.received.filter(
            (x) => (JSON.parse(x.body) as { type: string }).type === 'reconciliation.completed',
          );
        await until('both apps told', async () =>
          completed(hook).length >= 1 && completed(otherReceiver).length >= 1 ? true : undefined,
        );
        expect(completed(hook)).toHaveLength(1);
        expect(completed(otherReceiver)).toHaveLength(1);
        expect(JSON.parse(completed(otherReceiver)[0]!.body)).toMatchObject({
          data: { run_id: runId, summary: null, started_by: 'app' },
        });
      } finally {
        await hook.stop();
      }
    } finally {
      await otherReceiver.stop();
    }
  });
});

describe('a day started many times at once', () => {
  test('when the same run is asked for 10 times at once, for 5 rounds, then each round is one run, each finding is told once and the lost payment is repaired once', async () => {
    for (let round = 0; round < 5; round += 1) {
      const merchantId = await pay.merchant();
      const changed = await pay.paidOrder({
        merchant_id: merchantId,
        amount: 210,
        subject: 'Tea [statement:amount+1]',
      });
      const lost = await pay.create({
        merchant_id: merchantId,
        amount: 220,
        subject: `Bun ${LOST_UNTIL_RELEASED_MARKER}`,
      });
      await pay.buyerPays(lost.pay_credential.pay_url);
      await until('paid at the channel', async () =>
        (await sandboxOrder(lost.trade_no))?.status === 'paid' ? true : undefined,
      );
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          pay.post<{ list: Run[] }>('/api/v1/reconciliation/runs', {
            channel_code: 'sandbox',
            bill_date: today(),
            account: account(merchantId),
          }),
        ),
      );
      expect(answers.map((a) => a.code)).toEqual(Array(10).fill('success'));
      const runIds = new Set(answers.map((a) => a.data!.list[0]!.run_id));
      expect(runIds.size).toBe(1);
      const [runId] = [...runIds];
      await until('the lost payment found', async () =>
        (await mismatchesOf(runId!)).some((m) => m.trade_no === lost.trade_no) ? true : undefined,
      );
      stack.sandboxControls.release(lost.trade_no);
      expect(await finished(runId!)).toMatchObject({ status: 'completed' });
      await pay.statusIs(lost.trade_no, 'paid');
      await stack.sandboxIdle();
      const told = (type: string, tradeNo?: string) =>
        receiver.received.filter((r) => {
          const body = JSON.parse(r.body) as { type: string; data: { run_id?: string; trade_no?: string } };
          return (
            body.type === type && (tradeNo ? body.data.trade_no === tradeNo : body.data.run_id === runId)
          );
        });
      await until('the run told', async () =>
        told('reconciliation.completed').length > 0 ? true : undefined,
      );
      expect(told('reconciliation.completed')).toHaveLength(1);
      expect(told('reconciliation.mismatch', changed.trade_no)).toHaveLength(1);
      expect(pay.notificationsFor(lost.trade_no, 'payment.succeeded')).toHaveLength(1);
      const [{ n }] = (await stack.database.db.sequelize.query<{ n: string }>(
        "SELECT count(*) AS n FROM reconciliation_mismatches WHERE run_id = :runId AND state = 'repaired'",
        { replacements: { runId }, type: QueryTypes.SELECT },
      )) as [{ n: string }];
      expect(Number(n)).toBe(1);
    }
  });
});

describe('a run whose findings the database refuses', () => {
  test('when the matching is refused for good, then the run is recorded failed with why, and the day run again completes', async () => {
    const merchantId = await pay.merchant();
    const changed = await pay.paidOrder({
      merchant_id: merchantId,
      amount: 230,
      subject: 'Tea [statement:amount+1]',
    });
    const name = `refuses_${randomUUID().replaceAll('-', '')}`;
    const query = (sql: string) => stack.database.db.sequelize.query(sql);
    await query(
      `ALTER TABLE reconciliation_mismatches ADD CONSTRAINT ${name} CHECK (trade_no <> '${changed.trade_no}')`,
    );
    let runId: string;
    try {
      runId = await startRun(merchantId);
      expect(await finished(runId)).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/matched/),
      });
    } finally {
      await query(`ALTER TABLE reconciliation_mismatches DROP CONSTRAINT ${name}`);
    }
    expect(await runOf(runId)).toMatchObject({ status: 'failed', summary: null });
    expect(await startRun(merchantId)).toBe(runId);
    expect(await finished(runId)).toMatchObject({ status: 'completed' });
    expect((await mismatchesOf(runId)).map((m) => [m.category, m.trade_no])).toEqual([
      ['amount_mismatch', changed.trade_no],
    ]);
  });
});

describe('a repair the order got ahead of', () => {
  test("when a lost payment's order learns of it itself and its run ends before the repair asks, then the finding is repaired, not left to a person, and the payment told once", async () => {
    const merchantId = await pay.merchant();
    const lost = await pay.create({
      merchant_id: merchantId,
      amount: 610,
      subject: `Bread ${LOST_UNTIL_RELEASED_MARKER}`,
    });
    await pay.buyerPays(lost.pay_credential.pay_url);
    await until('the lost order paid at the channel', async () =>
      (await sandboxOrder(lost.trade_no))?.status === 'paid' ? true : undefined,
    );
    expect((await pay.query(lost.trade_no)).status).toBe('pending');

    // The run's steps as its workflow takes them, one at a time: read and matched while the
    // order is still pending, so the payment is missing from the books.
    const input: ReconciliationInput = {
      runId: reconciliationRunId('sandbox', account(merchantId), today()),
      channelCode: 'sandbox',
      account: account(merchantId),
      billDate: today(),
      readyDeadline: readyDeadline(today()).toISOString(),
      notifyUrl: null,
      timeScale: 0.01,
    };
    const steps = createActivities(stack.activityDeps);
    const env = new MockActivityEnvironment();
    await env.run(steps.beginReconciliationRun, { ...input, startedBy: 'test' });
    expect(await env.run(steps.loadStatement, input)).toMatchObject({ status: 'ready' });
    await env.run(steps.matchStatement, input);
    expect((await mismatchesOf(input.runId)).map((m) => [m.category, m.trade_no, m.state])).toEqual([
      ['missing_local_payment', lost.trade_no, 'open'],
    ]);

    // Then the channel answers again: the order's own query finds the payment, and its run,
    // paid and idle, ends before the repair asks about it.
    stack.sandboxControls.release(lost.trade_no);
    await pay.statusIs(lost.trade_no, 'paid');
    const [order] = await stack.database.db.sequelize.query<{ app_id: string; merchant_order_no: string }>(
      'SELECT app_id, merchant_order_no FROM orders WHERE trade_no = :t',
      { replacements: { t: lost.trade_no }, type: QueryTypes.SELECT },
    );
    await until(
      "the paid order's run ended",
      async () => {
        const d = await stack.client.workflow
          .getHandle(orderWorkflowId(order!.app_id, order!.merchant_order_no))
          .describe();
        return d.status.name === 'RUNNING' ? undefined : true;
      },
      60_000,
    );

    expect(await env.run(steps.repairLostPayments, input)).toBe(1);
    const [finding] = await mismatchesOf(input.runId);
    expect(finding).toMatchObject({ category: 'missing_local_payment', state: 'repaired' });
    expect((finding as unknown as { note: string }).note).toMatch(/learned of the payment itself/);
    await until('payment.succeeded told', async () =>
      pay.notificationsFor(lost.trade_no, 'payment.succeeded').length > 0 ? true : undefined,
    );
    await stack.sandboxIdle();
    expect(pay.notificationsFor(lost.trade_no, 'payment.succeeded')).toHaveLength(1);
  });
});
