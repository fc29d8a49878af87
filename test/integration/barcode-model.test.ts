/**
 * Barcode payments under interleavings (SPEC §14): fast-check makes what happens around each
 * barcode order — the buyer confirming in the wallet at any moment (before the follow-up
 * queries, between them, as the wait ends, after the reverse), the channel's callback of a
 * payment it took arriving late (during or after the reverse), the till sending the create
 * again, merchants closing it — in batches whose members run at the same moment against the
 * real stack, several orders at once. Once nothing more can happen, the invariant is checked at
 * the channel: money the sandbox keeps ⇔ the order `paid`, one channel call per order, and the
 * merchant told `payment.succeeded` exactly when it is paid and `payment.closed` exactly when it
 * is closed. A failing case is shrunk and printed with its seed.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { sandboxAuthCode, type SandboxBuyer } from '../../src/channels/sandbox';
import { signSandboxPayload } from '../../src/channels/sandbox/signature';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type Answer, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';

jest.setTimeout(900_000);

/** Runs per `npm test`, each of ORDERS_PER_RUN orders at once; BARCODE_MODEL_RUNS raises it. */
const RUNS = Number(process.env.BARCODE_MODEL_RUNS ?? 12);
const ORDERS_PER_RUN = 4;

// 1/50 of real time: a barcode payment is followed for 1.2 s (production's 60 s), queried at
// 20 ms, 40 ms, …, so that the buyer's confirmation, drawn within 0–1.6 s, falls before, among
// and after the queries, at the wait's end and after the reverse.
const TIME_SCALE = 0.02;

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE, sandboxBuyerConfirmMs: 600 });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

type Action =
  | { kind: 'repeat' }
  | { kind: 'close' }
  | { kind: 'buyerConfirms' }
  | { kind: 'paidCallback' }
  | { kind: 'wait'; ms: number };

interface Scenario {
  buyer: SandboxBuyer;
  /** Identical creates sent at once to open the order. */
  openingCreates: number;
  batches: Action[][];
}

const BUYERS: SandboxBuyer[] = [
  'pays',
  'confirms_later',
  'never_confirms',
  'answer_lost',
  'confirms_at_reverse',
  'reverse_refused',
  'insufficient',
];

const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.constant<Action>({ kind: 'repeat' }), weight: 2 },
  { arbitrary: fc.constant<Action>({ kind: 'close' }), weight: 2 },
  { arbitrary: fc.constant<Action>({ kind: 'buyerConfirms' }), weight: 3 },
  { arbitrary: fc.constant<Action>({ kind: 'paidCallback' }), weight: 2 },
  { arbitrary: fc.integer({ min: 0, max: 800 }).map((ms): Action => ({ kind: 'wait', ms })), weight: 3 },
);

const scenario: fc.Arbitrary<Scenario> = fc.record({
  buyer: fc.constantFrom(...BUYERS),
  openingCreates: fc.integer({ min: 1, max: 3 }),
  batches: fc.array(fc.array(action, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
});

const ANSWERS = {
  // What a create may answer, by HTTP status and code.
  create: ['200 success', '422 order_not_paid', '502 channel_timeout'],
  // A close may meet an order paid, or a reverse the channel has not answered yet.
  close: ['200 success', '422 order_already_paid', '502 channel_timeout', '422 order_not_found'],
};

const said = (a: Answer<unknown>) => `${a.status} ${a.code}`;

async function perform(a: Action, body: Record<string, unknown>, tradeNo: () => string | undefined) {
  switch (a.kind) {
    case 'repeat': {
      const answer = await pay.post('/api/v1/pay/unified-order', body);
      if (!ANSWERS.create.includes(said(answer))) throw new Error(`a repeat answered ${said(answer)}`);
      return;
    }
    case 'close': {
      const no = tradeNo();
      if (!no) return;
      const answer = await pay.post('/api/v1/pay/close', { trade_no: no });
      if (!ANSWERS.close.includes(said(answer))) throw new Error(`a close answered ${said(answer)}`);
      return;
    }
    case 'buyerConfirms': {
      // The buyer confirms in the wallet, as the sandbox's checkout does: a payment it still
      // waits for is paid (and its callback sent); a closed one is refused.
      const no = tradeNo();
      if (no)
        await fetch(`${stack.baseUrl}/sandbox/pay/${no}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"result":"success"}',
        });
      return;
    }
    case 'paidCallback': {
      // The callback the channel sent when it took the payment, delivered late: after the
      // follow-up queries, during the reverse, or after the reverse gave the money back.
      const no = tradeNo();
      if (!no) return;
      const [row] = await stack.database.db.sequelize.query<{
        channel_trade_no: string;
        paid_at: Date | null;
      }>('SELECT channel_trade_no, paid_at FROM sandbox_orders WHERE trade_no = :no', {
        replacements: { no },
        type: QueryTypes.SELECT,
      });
      if (!row?.paid_at) return;
      const event = JSON.stringify({
        event_id: randomUUID(),
        type: 'payment.paid',
        trade_no: no,
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
      if (text !== 'success') throw new Error(`the channel's paid callback was answered ${text}`);
      return;
    }
    case 'wait':
      await new Promise((r) => setTimeout(r, a.ms));
      return;
  }
}

/** One order through its scenario; the invariants checked once it has settled. */
async function run(s: Scenario): Promise<void> {
  const body = {
    merchant_order_no: `BM-${randomUUID()}`,
    pay_method: 'barcode',
    auth_code: sandboxAuthCode(s.buyer),
    amount: 800,
    subject: 'Counter sale',
    notify_url: receiver.url,
  };
  const opening = await Promise.all(
    Array.from({ length: s.openingCreates }, () =>
      pay.post<{ trade_no: string }>('/api/v1/pay/unified-order', body),
    ),
  );
  for (const a of opening) {
    if (!ANSWERS.create.includes(said(a))) throw new Error(`a create answered ${said(a)}`);
  }
  const tradeNo =
    opening.find((a) => a.data?.trade_no)?.data?.trade_no ?? (await pay.tradeNoOf(body.merchant_order_no));
  for (const batch of s.batches) {
    await Promise.all(batch.map((a) => perform(a, body, () => tradeNo)));
  }
  if (!tradeNo) throw new Error('the barcode create left no order behind');

  await stack.sandboxIdle(tradeNo);
  await pay.settled(tradeNo);
  const order = await pay.query(tradeNo);
  const [held] = await stack.database.db.sequelize.query<{ status: string; create_requests: number }>(
    'SELECT status, create_requests FROM sandbox_orders WHERE trade_no = :tradeNo',
    { replacements: { tradeNo }, type: QueryTypes.SELECT },
  );
  const paid = order.status === 'paid';
  const facts = {
    // Money the channel keeps ⇔ the order paid.
    channelKeepsMoney: held?.status === 'paid',
    // The order has ended one way or the other: never left pending.
    ended: order.status === 'paid' || order.status === 'closed',
    // One channel call, whatever the till repeated (none for a code refused before it was taken).
    channelCalls: held?.create_requests ?? 0,
    succeeded: pay.notificationsFor(tradeNo, 'payment.succeeded').length,
    closed: pay.notificationsFor(tradeNo, 'payment.closed').length,
  };
  const expected = {
    channelKeepsMoney: paid,
    ended: true,
    channelCalls: s.buyer === 'insufficient' ? 0 : 1,
    succeeded: paid ? 1 : 0,
    closed: paid ? 0 : 1,
  };
  if (JSON.stringify(facts) !== JSON.stringify(expected)) {
    throw new Error(
      `order ${tradeNo} (${String(order.status)}, ${String(order.close_reason)}): ${JSON.stringify(facts)}, expected ${JSON.stringify(expected)}`,
    );
  }
}

test('when the buyer confirms, the till repeats and merchants close in any interleaving, then money the channel keeps is exactly the orders paid', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(scenario, { minLength: ORDERS_PER_RUN, maxLength: ORDERS_PER_RUN }),
      async (orders) => {
        await Promise.all(orders.map(run));
      },
    ),
    { numRuns: RUNS, endOnFailure: false, verbose: 1 },
  );
});
