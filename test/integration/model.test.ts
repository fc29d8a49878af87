/**
 * Model-based concurrency: fast-check generates what happens to one order — creates, repeats,
 * changed repeats, closes, refunds (with and without merchant_refund_no, repeated), the buyer
 * paying, callbacks dropped, duplicated, delayed and replayed out of order, expiry — in batches
 * whose members run at the same moment against the real stack. After each run the invariants
 * of money are checked where they land. A failing case is shrunk and printed with its seed.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { QueryTypes } from 'sequelize';
import { signSandboxPayload } from '../../src/channels/sandbox/signature';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type Answer, type Created, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(900_000);

/** Runs per `npm test`; MODEL_RUNS raises it for a longer search. */
const RUNS = Number(process.env.MODEL_RUNS ?? 25);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 100 });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

type Action =
  | { kind: 'create' }
  | { kind: 'createChanged'; field: 'amount' | 'pay_method' | 'profit_sharing_amount' }
  | { kind: 'close' }
  | { kind: 'refund'; amount: number; merchantRefundNo: string | null }
  | { kind: 'pay' }
  | { kind: 'replayCallback' }
  | { kind: 'wait'; ms: number };

interface Scenario {
  /** Identical creates sent at once to open the order. */
  openingCreates: number;
  amount: number;
  /** Minutes at the stack's 1/100 time scale: 1 is 0.6 s. */
  expireMinutes: number;
  callback: 'normal' | 'drop' | 'duplicate' | 'delay';
  batches: Action[][];
}

const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.constant<Action>({ kind: 'create' }), weight: 3 },
  {
    arbitrary: fc
      .constantFrom('amount' as const, 'pay_method' as const, 'profit_sharing_amount' as const)
      .map((field): Action => ({ kind: 'createChanged', field })),
    weight: 1,
  },
  { arbitrary: fc.constant<Action>({ kind: 'close' }), weight: 2 },
  {
    arbitrary: fc
      .record({
        amount: fc.integer({ min: 1, max: 120 }),
        merchantRefundNo: fc.option(fc.constantFrom('MR-a', 'MR-b'), { nil: null }),
      })
      .map(({ amount, merchantRefundNo }): Action => ({ kind: 'refund', amount, merchantRefundNo })),
    weight: 4,
  },
  { arbitrary: fc.constant<Action>({ kind: 'pay' }), weight: 3 },
  { arbitrary: fc.constant<Action>({ kind: 'replayCallback' }), weight: 2 },
  { arbitrary: fc.integer({ min: 50, max: 700 }).map((ms): Action => ({ kind: 'wait', ms })), weight: 2 },
);

const scenario: fc.Arbitrary<Scenario> = fc.record({
  openingCreates: fc.integer({ min: 1, max: 6 }),
  amount: fc.integer({ min: 1, max: 100 }),
  expireMinutes: fc.integer({ min: 1, max: 5 }),
  callback: fc.constantFrom('normal' as const, 'drop' as const, 'duplicate' as const, 'delay' as const),
  batches: fc.array(fc.array(action, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }),
});

interface Outcome {
  creates: Answer<Created>[];
  refunds: { action: Extract<Action, { kind: 'refund' }>; answer: Answer<{ refund_no: string }> }[];
  closes: Answer[];
}

async function perform(
  a: Action,
  body: Record<string, unknown>,
  created: Created,
  outcome: Outcome,
): Promise<void> {
  switch (a.kind) {
    case 'create':
      outcome.creates.push(await pay.post<Created>('/api/v1/pay/unified-order', body));
      return;
    case 'createChanged': {
      const changed = {
        amount: { amount: Number(body.amount) + 1 },
        pay_method: { pay_method: 'jsapi' },
        profit_sharing_amount: { profit_sharing_amount: 1 },
      }[a.field];
      const answer = await pay.post('/api/v1/pay/unified-order', { ...body, ...changed });
      // Changed parameters are refused before anything else, whatever the order's state.
      if (answer.code !== 'invalid_param') {
        throw new Error(`a create with a changed ${a.field} answered ${answer.code}`);
      }
      return;
    }
    case 'close':
      outcome.closes.push(await pay.post('/api/v1/pay/close', { trade_no: created.trade_no }));
      return;
    case 'refund':
      outcome.refunds.push({
        action: a,
        answer: await pay.post('/api/v1/pay/refund', {
          trade_no: created.trade_no,
          refund_amount: a.amount,
          ...(a.merchantRefundNo ? { merchant_refund_no: `${a.merchantRefundNo}-${created.trade_no}` } : {}),
        }),
      });
      return;
    case 'pay':
      await pay.buyerPays(created.pay_credential.pay_url);
      return;
    case 'replayCallback': {
      // The channel's payment callback again, as a late duplicate or out of its order: only
      // for a payment the channel really took (a forged one would be a different test).
      const [row] = await stack.database.db.sequelize.query<{
        status: string;
        channel_trade_no: string;
        paid_at: Date;
      }>('SELECT status, channel_trade_no, paid_at FROM sandbox_orders WHERE trade_no = :t', {
        replacements: { t: created.trade_no },
        type: QueryTypes.SELECT,
      });
      if (row?.status !== 'paid') return;
      const event = JSON.stringify({
        event_id: randomUUID(),
        type: 'payment.paid',
        trade_no: created.trade_no,
        channel_trade_no: row.channel_trade_no,
        amount: Number(body.amount),
        currency: 'CNY',
        paid_at: new Date(row.paid_at).toISOString(),
      });
      const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, {
        method: 'POST',
        body: event,
        headers: { 'sandbox-signature': signSandboxPayload(stack.sandboxSecret, event) },
      });
      const text = await res.text();
      if (text !== 'success') throw new Error(`a replayed genuine callback answered ${text}`);
      return;
    }
    case 'wait':
      await new Promise((r) => setTimeout(r, a.ms));
      return;
  }
}

const PAID = ['paid', 'partially_refunded', 'refunded'];

async function run(s: Scenario): Promise<void> {
  const body = pay.orderBody({
    amount: s.amount,
    expire_minutes: s.expireMinutes,
    extra: { sandbox: { callback: s.callback } },
  });
  const opening = await Promise.all(
    Array.from({ length: s.openingCreates }, () => pay.post<Created>('/api/v1/pay/unified-order', body)),
  );
  const first = opening.find((a) => a.code === 'success');
  if (!first) throw new Error(`the opening creates answered ${opening.map((a) => a.code).join(', ')}`);
  const created = first.data!;
  const outcome: Outcome = { creates: opening, refunds: [], closes: [] };
  for (const batch of s.batches) await Promise.all(batch.map((a) => perform(a, body, created, outcome)));

  // Quiescence: the order final (expiry included), no refund in flight, the read model caught
  // up with the last settlement (its totals are written just after the order decides them); what
  // has not got there within 30 s is checked as it stands. Then everything it set off, done.
  const tradeNo = created.trade_no;
  const handle = stack.client.workflow.getHandle(orderWorkflowId(app.app_id, body.merchant_order_no));
  const bizStatus = async () =>
    ((await handle.describe()).searchAttributes.BizStatus as string[] | undefined)?.[0];
  const channelRefunded = () =>
    pay.count(
      "SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_refunds WHERE trade_no = :t AND status = 'success'",
      { t: tradeNo },
    );
  const settledState = async () => {
    const o = await pay.query(tradeNo);
    const processing = await pay.count(
      "SELECT count(*) AS n FROM refunds WHERE trade_no = :t AND status = 'processing'",
      { t: tradeNo },
    );
    const caughtUp =
      Number(o.refunded_amount) === (await channelRefunded()) && (await bizStatus()) === o.status;
    return o.status !== 'pending' && processing === 0 && caughtUp ? o : undefined;
  };
  const final = await until(`order ${tradeNo} final`, settledState, 30_000).catch(() => pay.query(tradeNo));
  // Then nothing more can come of the order: the sandbox has sent what it had for it (a delayed
  // callback), and the order, its refunds and their announcements are done.
  await stack.sandboxIdle(tradeNo);
  await pay.settled(tradeNo);
  // Refunds the channel accepted settle through their own workflow, which announces the result
  // (a refund the channel refused at once is answered at once and announced by nobody).
  const settled = await pay.count(
    `SELECT count(*) AS n FROM refunds r
      WHERE r.trade_no = :t AND r.status IN ('success', 'failed')
        AND EXISTS (SELECT 1 FROM sandbox_refunds s WHERE s.refund_no = r.refund_no)`,
    { t: tradeNo },
  );
  const announced = (type: string) =>
    new Set(
      receiver.received
        .filter((r) => r.body.includes(tradeNo))
        .filter((r) => (JSON.parse(r.body) as { type: string }).type === type)
        .map((r) => r.headers['webhook-id']),
    ).size;
  const finalEvent = PAID.includes(String(final.status)) ? 'payment.succeeded' : 'payment.closed';

  // ---- the invariants ----
  const problems: string[] = [];
  // One order, created at the channel once; one first answer, the same trade_no in all.
  const creates = outcome.creates.filter((c) => c.code === 'success');
  if (new Set(creates.map((c) => c.data!.trade_no)).size !== 1)
    problems.push('creates answered different trade_nos');
  if (creates.filter((c) => c.data!.is_idempotent === false).length !== 1) {
    problems.push(
      `${creates.filter((c) => c.data!.is_idempotent === false).length} creates answered is_idempotent false`,
    );
  }
  for (const c of outcome.creates) {
    if (!['success', 'order_already_paid', 'order_closed'].includes(c.code))
      problems.push(`a repeat create answered ${c.code}`);
  }
  if ((await pay.channelCreates(tradeNo)) !== 1)
    problems.push(`the channel was asked ${await pay.channelCreates(tradeNo)} times`);
  // Read model, workflow and channel agree.
  const [channel] = await stack.database.db.sequelize.query<{ status: string }>(
    'SELECT status FROM sandbox_orders WHERE trade_no = :t',
    { replacements: { t: tradeNo }, type: QueryTypes.SELECT },
  );
  if (final.status === 'pending') problems.push('the order is still pending after its expiry');
  const workflowStatus = await bizStatus();
  if (workflowStatus !== final.status) {
    problems.push(`the workflow says ${workflowStatus}, the read model ${String(final.status)}`);
  }
  if ((channel?.status === 'paid') !== PAID.includes(String(final.status))) {
    problems.push(`the channel says ${channel?.status}, the read model ${String(final.status)}`);
  }
  // Refunds: never more than the order, exactly the channel's, one per merchant_refund_no.
  const refundedAtChannel = await channelRefunded();
  if (Number(final.refunded_amount) > s.amount)
    problems.push(`refunded ${String(final.refunded_amount)} of ${s.amount}`);
  if (Number(final.refunded_amount) !== refundedAtChannel) {
    problems.push(`refunded ${String(final.refunded_amount)}, the channel ${refundedAtChannel}`);
  }
  const perMerchantNo = await stack.database.db.sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM refunds WHERE trade_no = :t AND merchant_refund_no IS NOT NULL GROUP BY merchant_refund_no HAVING count(*) > 1',
    { replacements: { t: tradeNo }, type: QueryTypes.SELECT },
  );
  if (perMerchantNo.length > 0) problems.push('a merchant_refund_no made more than one refund');
  const repeatedAnswers = new Map<string, Set<string>>();
  for (const r of outcome.refunds) {
    if (r.action.merchantRefundNo && r.answer.code === 'success') {
      const set = repeatedAnswers.get(r.action.merchantRefundNo) ?? new Set();
      set.add(r.answer.data!.refund_no);
      repeatedAnswers.set(r.action.merchantRefundNo, set);
    }
    if (!['success', 'refund_amount_exceed', 'order_not_paid', 'order_closed'].includes(r.answer.code)) {
      problems.push(`a refund answered ${r.answer.code}: ${r.answer.message}`);
    }
  }
  for (const [no, set] of repeatedAnswers)
    if (set.size > 1) problems.push(`${no} answered ${set.size} refund_nos`);
  // Exactly one announcement of the order's end, and one per refund result.
  if (announced(finalEvent) !== 1) problems.push(`${finalEvent} announced ${announced(finalEvent)} times`);
  const other = finalEvent === 'payment.succeeded' ? 'payment.closed' : 'payment.succeeded';
  if (announced(other) !== 0) problems.push(`${other} announced too`);
  const refundResults = announced('refund.succeeded') + announced('refund.failed');
  if (refundResults !== settled) {
    problems.push(`${refundResults} refund announcements for ${settled} settled refunds`);
  }
  // Closes answered as the order ended.
  for (const c of outcome.closes) {
    if (!['success', 'order_already_paid'].includes(c.code)) problems.push(`a close answered ${c.code}`);
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
}

test(`when ${RUNS} generated histories of an order run against the real stack, then every invariant of money holds`, async () => {
  await fc.assert(
    fc.asyncProperty(scenario, async (s) => {
      await run(s);
    }),
    { numRuns: RUNS, endOnFailure: false, verbose: 1 },
  );
});
