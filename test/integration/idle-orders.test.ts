/**
 * Temporal holds what is active (SPEC §7): a paid order with nothing left to wait for ends its
 * workflow run after the idle period, with its state saved in the database, and the next request
 * for it starts a new run of the same id (update-with-start) that loads that state and decides
 * exactly as the first run would have. A request that meets a run as it ends is taken once:
 * counted at the channel, over many rounds.
 */
import { QueryTypes } from 'sequelize';
import { createActivities } from '../../src/activities';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import {
  openSavedState,
  resealSavedStates,
  savedStatesSealedWith,
} from '../../src/modules/orders/saved-states';
import { newPayloadKeyEntry, parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { startTestStack, type TestStack } from '../support/harness';
import { globalState } from '../support/state';
import { inRounds, paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(300_000);

/** 10 minutes at this scale: 300 ms. */
const TIME_SCALE = 0.0005;
const IDLE_MS = 600_000 * TIME_SCALE;
const ROUNDS = 30;

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE, sandboxRefundDelayMs: 200 });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

const workflowIdOf = async (tradeNo: string) => {
  const [row] = await stack.database.db.sequelize.query<{ merchant_order_no: string }>(
    'SELECT merchant_order_no FROM orders WHERE trade_no = :t',
    { replacements: { t: tradeNo }, type: QueryTypes.SELECT },
  );
  return orderWorkflowId(app.app_id, row!.merchant_order_no);
};

/** Every run of the order's workflow, oldest first: [status, result]. */
async function runsOf(workflowId: string): Promise<{ status: string; result?: string }[]> {
  const runs: { status: string; result?: string; startMs: number; runId: string }[] = [];
  for await (const r of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runs.push({ status: r.status.name, startMs: r.startTime.getTime(), runId: r.runId });
  }
  runs.sort((a, b) => a.startMs - b.startMs);
  return Promise.all(
    runs.map(async (r) => ({
      status: r.status,
      ...(r.status === 'COMPLETED'
        ? { result: (await stack.client.workflow.getHandle(workflowId, r.runId).result()) as string }
        : {}),
    })),
  );
}

const ended = (workflowId: string) =>
  until(
    `${workflowId} ended`,
    async () => {
      const d = await stack.client.workflow.getHandle(workflowId).describe();
      return d.status.name === 'RUNNING' ? undefined : d.status.name;
    },
    30_000,
  );

const channelRefunds = (tradeNo: string) =>
  pay.count('SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t', { t: tradeNo });

test('when a paid order waits the idle period, then its run ends with its state saved, and refunds reopen it and are decided against what it knew', async () => {
  const paid = await pay.paidOrder({ amount: 100 });
  const workflowId = await workflowIdOf(paid.trade_no);
  expect(await ended(workflowId)).toBe('COMPLETED');
  expect(await runsOf(workflowId)).toEqual([{ status: 'COMPLETED', result: 'idle' }]);
  const saved = await pay.count('SELECT count(*) AS n FROM order_saved_states WHERE trade_no = :t', {
    t: paid.trade_no,
  });
  expect(saved).toBe(1);
  // Sealed: neither the order's number nor its status stands in the row in the clear.
  const [row] = await stack.database.db.sequelize.query<{ state: string }>(
    'SELECT state FROM order_saved_states WHERE trade_no = :t',
    { replacements: { t: paid.trade_no }, type: QueryTypes.SELECT },
  );
  expect(row!.state).not.toContain('"status"');

  // A refund reopens it: a new run of the same id, which refunds once.
  const first = await pay.post<{ refund_no: string; status: string }>('/api/v1/pay/refund', {
    trade_no: paid.trade_no,
    refund_amount: 30,
    merchant_refund_no: 'MR-1',
  });
  expect([first.status, first.code, first.data?.status]).toEqual([200, 'success', 'processing']);
  await until('the refund succeeded', async () =>
    (await pay.query(paid.trade_no)).refunded_amount === 30 ? true : undefined,
  );
  expect(await ended(workflowId)).toBe('COMPLETED');

  // The next run knows the 30 refunded: 80 does not fit, 70 does, and the order ends refunded.
  const tooMuch = await pay.post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 80 });
  expect([tooMuch.status, tooMuch.code]).toEqual([422, 'refund_amount_exceed']);
  // A repeat of the first refund's number is the first refund.
  const repeat = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
    trade_no: paid.trade_no,
    refund_amount: 30,
    merchant_refund_no: 'MR-1',
  });
  expect(repeat.data?.refund_no).toBe(first.data!.refund_no);
  const rest = await pay.post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 70 });
  expect([rest.status, rest.code]).toEqual([200, 'success']);
  await pay.statusIs(paid.trade_no, 'refunded');
  await pay.settled(paid.trade_no);
  expect(await ended(workflowId)).toBe('COMPLETED');

  const runs = await runsOf(workflowId);
  expect(runs[0]).toEqual({ status: 'COMPLETED', result: 'idle' });
  expect(runs.at(-1)).toEqual({ status: 'COMPLETED', result: 'refunded' });
  expect(runs.every((r) => r.status === 'COMPLETED')).toBe(true);
  expect(await channelRefunds(paid.trade_no)).toBe(2);
  expect(
    await pay.count(
      "SELECT SUM(amount) AS n FROM sandbox_refunds WHERE trade_no = :t AND status = 'success'",
      {
        t: paid.trade_no,
      },
    ),
  ).toBe(100);
  expect(pay.notificationsFor(paid.trade_no, 'refund.succeeded')).toHaveLength(2);
});

test('when the refund that reopens an order is refused by the channel, then the reopened run ends idle again', async () => {
  const paid = await pay.paidOrder({ amount: 100 });
  const workflowId = await workflowIdOf(paid.trade_no);
  await ended(workflowId);
  // Reserved, then released when the channel refuses it: the run has nothing to wait for again.
  const refused = await pay.post('/api/v1/pay/refund', {
    trade_no: paid.trade_no,
    refund_amount: 10,
    reason: 'no [sandbox:refuse]',
  });
  expect([refused.status, refused.code]).toEqual([502, 'channel_refund_fail']);
  expect(await ended(workflowId)).toBe('COMPLETED');
  expect((await runsOf(workflowId)).map((r) => r.result)).toEqual(['idle', 'idle']);
  // And the next run still knows the whole amount is there.
  const whole = await pay.post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 100 });
  expect([whole.status, whole.code]).toEqual([200, 'success']);
  await pay.statusIs(paid.trade_no, 'refunded');
});

test('when a reopened run continues as new with refunds in flight, then the next run goes on from its state, not the saved one', async () => {
  const paid = await pay.paidOrder({ amount: 100 });
  const workflowId = await workflowIdOf(paid.trade_no);
  await ended(workflowId);
  // Twelve refunds at once keep the reopened run busy past the events after which the tests'
  // Temporal server suggests continuing as new (120).
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, k) =>
      pay.post('/api/v1/pay/refund', {
        trade_no: paid.trade_no,
        refund_amount: 1,
        merchant_refund_no: `MR-can-${k}`,
      }),
    ),
  );
  expect(answers.map((a) => a.code)).toEqual(Array.from({ length: 12 }, () => 'success'));
  await until('the refunds settled', async () =>
    (await pay.query(paid.trade_no)).refunded_amount === 12 ? true : undefined,
  );
  const rest = await pay.post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 88 });
  expect([rest.status, rest.code]).toEqual([200, 'success']);
  await pay.statusIs(paid.trade_no, 'refunded');
  await pay.settled(paid.trade_no);
  const runs = await runsOf(workflowId);
  // Ended idle, reopened, continued as new at least once, ended refunded.
  expect(runs.length).toBeGreaterThanOrEqual(3);
  expect(runs.filter((r) => r.status === 'CONTINUED_AS_NEW').length).toBeGreaterThan(0);
  expect(runs.at(-1)).toEqual({ status: 'COMPLETED', result: 'refunded' });
  expect(await channelRefunds(paid.trade_no)).toBe(13);
  expect(
    await pay.count(
      "SELECT SUM(amount) AS n FROM sandbox_refunds WHERE trade_no = :t AND status = 'success'",
      {
        t: paid.trade_no,
      },
    ),
  ).toBe(100);
});

test('when the saved state is not what the read model says, then a refund that reopens the order is refused and nothing is refunded', async () => {
  const paid = await pay.paidOrder({ amount: 100 });
  const workflowId = await workflowIdOf(paid.trade_no);
  await ended(workflowId);
  // As if a run had refunded 10 and ended without saving it (a run terminated by an operator).
  await stack.database.db.sequelize.query(
    "UPDATE orders SET refunded_amount = 10, status = 'partially_refunded' WHERE trade_no = :t",
    { replacements: { t: paid.trade_no } },
  );
  const refused = await pay.post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: 10 });
  expect([refused.status, refused.code]).toEqual([500, 'internal_system']);
  expect(refused.message).toContain('cannot be reopened');
  await ended(workflowId);
  expect((await runsOf(workflowId)).at(-1)).toEqual({ status: 'COMPLETED', result: 'ended' });
  expect(await channelRefunds(paid.trade_no)).toBe(0);
});

test("when an older save of an order's state reaches the database after the newer one, then the newer stays and the order reopens from it", async () => {
  const paid = await pay.paidOrder({ amount: 100 });
  await ended(await workflowIdOf(paid.trade_no));
  const [kept] = await stack.database.db.sequelize.query<{
    run_id: string;
    run_started_at: Date;
    history_length: number;
    save_seq: number;
  }>('SELECT run_id, run_started_at, history_length, save_seq FROM order_saved_states WHERE trade_no = :t', {
    replacements: { t: paid.trade_no },
    type: QueryTypes.SELECT,
  });
  expect(kept!.history_length).toBeGreaterThan(1);
  // Saves decided before the kept one (earlier in its run's history, and in a run that started
  // before it), arriving late, as a local activity of a workflow task that timed out may: each
  // says the order was refunded 10, which its row does not, so a reopened run would refuse it.
  const { saveOrderState } = createActivities(stack.activityDeps);
  const stale = (runId: string, runStartedMs: number, historyLength: number, saveSeq: number) =>
    saveOrderState({
      tradeNo: paid.trade_no,
      state: { stale: true },
      status: 'partially_refunded',
      refundedAmount: 10,
      version: { runId, runStartedMs, historyLength, saveSeq },
    });
  const started = kept!.run_started_at.getTime();
  await stale(kept!.run_id, started, kept!.history_length - 1, kept!.save_seq + 5);
  await stale('an-earlier-run', started - 1, 1_000_000, 0);

  const refund = await pay.post<{ status: string }>('/api/v1/pay/refund', {
    trade_no: paid.trade_no,
    refund_amount: 30,
  });
  expect([refund.status, refund.code, refund.data?.status]).toEqual([200, 'success', 'processing']);
  await until('the refund succeeded', async () =>
    (await pay.query(paid.trade_no)).refunded_amount === 30 ? true : undefined,
  );
  expect(await channelRefunds(paid.trade_no)).toBe(1);
});

test('when the payload keys rotate, then `keys reseal --rotate` seals saved states again with the new key, and the old key no longer opens any', async () => {
  const paid = await pay.paidOrder({ amount: 100 });
  await ended(await workflowIdOf(paid.trade_no));
  const entry = newPayloadKeyEntry('rotated');
  const old = parsePayloadKeys(globalState().payloadKeys, 'the tests');
  const rotated = parsePayloadKeys(`${entry},${globalState().payloadKeys}`, 'rotated');
  const stateOf = async () =>
    (
      await stack.database.db.sequelize.query<{ state: string }>(
        'SELECT state FROM order_saved_states WHERE trade_no = :t',
        { replacements: { t: paid.trade_no }, type: QueryTypes.SELECT },
      )
    )[0]!.state;
  const before = openSavedState<{ status: string }>(old, paid.trade_no, await stateOf());
  expect(before.status).toBe('paid');
  expect(await savedStatesSealedWith(stack.database.db, old.current.id)).toBeGreaterThan(0);

  expect((await resealSavedStates(stack.database.db, rotated)).resealed).toBeGreaterThan(0);
  expect(await savedStatesSealedWith(stack.database.db, old.current.id)).toBe(0);
  const resealed = await stateOf();
  expect(openSavedState(rotated, paid.trade_no, resealed)).toEqual(before);
  expect(() => openSavedState(old, paid.trade_no, resealed)).toThrow('rotated');
  // Bound to its order: under another order's number it does not open.
  expect(() => openSavedState(rotated, `${paid.trade_no}0`, resealed)).toThrow();

  // A state whose key is not listed is named and left as it is; the others go on.
  const stranger = parsePayloadKeys(newPayloadKeyEntry('stranger'), 'stranger');
  const unlisted = await resealSavedStates(stack.database.db, stranger);
  expect(unlisted.resealed).toBe(0);
  expect(unlisted.unopened.map((u) => u.tradeNo)).toContain(paid.trade_no);
  expect(await stateOf()).toBe(resealed);

  // Sealed back with the stack's key, which its worker opens with.
  const back = parsePayloadKeys(`${globalState().payloadKeys},${entry}`, 'back');
  expect((await resealSavedStates(stack.database.db, back)).resealed).toBeGreaterThan(0);
  expect(openSavedState(old, paid.trade_no, await stateOf())).toEqual(before);
});

test(`when refunds reach a paid order as its run ends idle, ${ROUNDS} rounds, then each one that fits is made once at the channel and no more leaves than was paid`, async () => {
  const rounds = await inRounds(ROUNDS, 3, async (i) => {
    const paid = await pay.paidOrder({ amount: 100 });
    // Four refunds of 30 (three fit), each sent at its own moment around the end of the idle
    // period: some meet the run before it ends, some as it ends, some the run that reopens it.
    const answers = await Promise.all(
      Array.from({ length: 4 }, async (_, k) => {
        await new Promise((r) => setTimeout(r, IDLE_MS * (0.6 + ((i * 7 + k * 13) % 10) / 10)));
        for (let sent = 1; ; sent++) {
          const a = await pay.post('/api/v1/pay/refund', {
            trade_no: paid.trade_no,
            refund_amount: 30,
            merchant_refund_no: `MR-${i}-${k}`,
          });
          if (a.code !== 'channel_timeout' || sent === 5) return a;
        }
      }),
    );
    await until('the refunds settled', async () =>
      (await pay.query(paid.trade_no)).refunded_amount === 90 ? true : undefined,
    );
    await pay.settled(paid.trade_no);
    const codes = answers.map((a) => a.code);
    return {
      result: {
        succeeded: codes.filter((c) => c === 'success').length,
        exceeded: codes.filter((c) => c === 'refund_amount_exceed').length,
        others: answers
          .filter((a) => a.code !== 'success' && a.code !== 'refund_amount_exceed')
          .map((a) => `${a.status} ${a.code}: ${a.message}`),
        channelRefunds: await channelRefunds(paid.trade_no),
        channelRequests: await pay.count(
          'SELECT SUM(refund_requests) AS n FROM sandbox_refunds WHERE trade_no = :t',
          { t: paid.trade_no },
        ),
        channelRefunded: await pay.count(
          "SELECT SUM(amount) AS n FROM sandbox_refunds WHERE trade_no = :t AND status = 'success'",
          { t: paid.trade_no },
        ),
        refunded: (await pay.query(paid.trade_no)).refunded_amount,
      },
      runs: (await runsOf(await workflowIdOf(paid.trade_no))).length,
    };
  });
  const expected = {
    succeeded: 3,
    exceeded: 1,
    others: [],
    channelRefunds: 3,
    channelRequests: 3,
    channelRefunded: 90,
    refunded: 90,
  };
  expect(rounds.map((r) => r.result)).toEqual(Array.from({ length: ROUNDS }, () => expected));
  // The race was run: in some rounds a refund reopened the order.
  expect(rounds.filter((r) => r.runs > 1).length).toBeGreaterThan(0);
});
