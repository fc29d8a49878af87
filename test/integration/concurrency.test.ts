/**
 * No money moves twice under concurrency (SPEC §3.1, §3.5, §7). Every race here runs for many
 * rounds, and counts its effects where they land: requests at the channel (the sandbox counts
 * every create and refund it is asked for), rows and totals in the read model, notifications at
 * the receiver, and activities in the order's history; never only the answers.
 *
 * @runs-alone: its races meet production's deadlines (10 s a request) with 20 requests at once,
 * so no other file shares the machine with it (test/support/tiered-runner.ts).
 */
import fs from 'node:fs';
import { QueryTypes } from 'sequelize';
import { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { createWorker } from '../../src/worker';
import { orderWorkflowId as workflowIdOf } from '../../src/modules/orders/messages';
import { serveApi, startTestStack, uniqueName, type ExtraApi, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { inRounds, paymentsClient, type Created, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { globalState } from '../support/state';
import { until } from '../support/wait';

jest.setTimeout(300_000);

/** Rounds of every race: 20 in `npm test`; CONCURRENCY_ROUNDS raises it (`npm run soak` runs 100). */
const ROUNDS = Math.max(20, Number(process.env.CONCURRENCY_ROUNDS ?? 20));

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 200 });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

const EventType = temporal.api.enums.v1.EventType;

/** How many times the order's history ran an activity (remote or local) of this type. */
async function activityRuns(workflowId: string, activityType: string): Promise<number> {
  let n = 0;
  // Every run of the order (it may continue as new).
  for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const { events } = await stack.client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    for (const e of events ?? []) {
      if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        if (e.activityTaskScheduledEventAttributes?.activityType?.name === activityType) n += 1;
      } else if (e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED) {
        const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
        if (data && Buffer.from(data).toString('utf8').includes(`"${activityType}"`)) n += 1;
      }
    }
  }
  return n;
}

/** The channel's create requests for an order: SPEC §3.1 says one, however many creates raced. */
const channelCreates = (tradeNo: string) => pay.channelCreates(tradeNo);

const orderWorkflowId = (merchantOrderNo: string) => workflowIdOf(app.app_id, merchantOrderNo);

describe('identical creates', () => {
  test(`when 20 identical creates arrive at once, ${ROUNDS} rounds, then every round has one order, one create that asks the channel once, and exactly one is_idempotent false`, async () => {
    const rounds = await inRounds(ROUNDS, 4, async () => {
      const body = pay.orderBody();
      // Each caller does what the API tells it when the outcome is not known by the deadline
      // (502 channel_timeout, which a loaded machine can give): send the same request again.
      let unknown = 0;
      const answers = await Promise.all(
        Array.from({ length: 20 }, async () => {
          for (let sent = 1; ; sent++) {
            const a = await pay.post<Created>('/api/v1/pay/unified-order', body);
            if (a.code !== 'channel_timeout' || sent === 5) return a;
            unknown += 1;
          }
        }),
      );
      const tradeNo = answers[0]!.data?.trade_no ?? '';
      const workflowId = orderWorkflowId(body.merchant_order_no);
      const firsts = answers.filter((a) => a.data?.is_idempotent === false).length;
      // Counted once nothing more can come of the order: a late create would be seen.
      await pay.settled(tradeNo);
      return {
        codes: [...new Set(answers.map((a) => a.code))],
        tradeNos: new Set(answers.map((a) => a.data?.trade_no)).size,
        // The one answer that created the order says so, unless that very answer came too late
        // and its caller learnt the order from a repeat.
        firsts: firsts === 1 || (firsts === 0 && unknown > 0) ? 'one, or its answer was late' : firsts,
        orders: await pay.count('SELECT count(*) AS n FROM orders WHERE merchant_order_no = :m', {
          m: body.merchant_order_no,
        }),
        channelRequests: await channelCreates(tradeNo),
        createActivities: await activityRuns(workflowId, 'createOrderAtChannel'),
      };
    });
    const expected = {
      codes: ['success'],
      tradeNos: 1,
      firsts: 'one, or its answer was late',
      orders: 1,
      channelRequests: 1,
      createActivities: 1,
    };
    expect(rounds).toEqual(Array.from({ length: ROUNDS }, () => expected));
  });
});

describe('many updates in one activation', () => {
  let burst: ExtraApi;
  const taskQueue = uniqueName('tq-burst');

  // The same API on a task queue that no worker polls yet: every update waits at the server.
  beforeAll(async () => {
    burst = await serveApi(stack, { taskQueue, requestTimeoutMs: 60_000 });
  });
  afterAll(async () => {
    await burst?.close();
  });

  test(`when 10 creates for each of ${ROUNDS} orders reach the worker in its first activation, then each order runs one create, asks the channel once, and answers is_idempotent false once`, async () => {
    const bodies = Array.from({ length: ROUNDS }, () => pay.orderBody());
    const answers = bodies.map((body) =>
      Promise.all(
        Array.from({ length: 10 }, async () =>
          envelope<Created>(
            await signedFetch(burst.baseUrl, app, 'POST', '/api/v1/pay/unified-order', { json: body }),
          ),
        ),
      ),
    );
    // Every order's workflow exists, and its creates wait at the server for a worker.
    await until('every order started', async () => {
      for (const b of bodies) {
        try {
          await stack.client.workflow.getHandle(orderWorkflowId(b.merchant_order_no)).describe();
        } catch {
          return undefined;
        }
      }
      return true;
    });
    await new Promise((r) => setTimeout(r, 2_000));

    const connection = await NativeConnection.connect({ address: globalState().temporalAddress });
    const worker = await createWorker({
      connection,
      namespace: 'default',
      taskQueue,
      activities: { ...stack.activityDeps, taskQueue },
      workflowBundleCode: fs.readFileSync(globalState().bundlePath, 'utf8'),
      options: { shutdownGraceTime: '1 second' },
    });
    const running = worker.run();
    try {
      const results = await Promise.all(answers);
      for (const [i, body] of bodies.entries()) {
        const workflowId = orderWorkflowId(body.merchant_order_no);
        const { events } = await stack.client.workflow.getHandle(workflowId).fetchHistory();
        // The proof that they raced: all ten were accepted by the same workflow task.
        const sequencing = new Set(
          (events ?? [])
            .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
            .map((e) =>
              String(e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequestSequencingEventId),
            ),
        );
        const tradeNo = results[i]![0]!.data?.trade_no ?? '';
        await pay.settled(tradeNo);
        expect({
          codes: [...new Set(results[i]!.map((a) => a.code))],
          firsts: results[i]!.filter((a) => a.data?.is_idempotent === false).length,
          activations: sequencing.size,
          channelRequests: await channelCreates(tradeNo),
          createActivities: await activityRuns(workflowId, 'createOrderAtChannel'),
        }).toEqual({
          codes: ['success'],
          firsts: 1,
          activations: 1,
          channelRequests: 1,
          createActivities: 1,
        });
      }
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  });
});

describe('refunds', () => {
  test(`when 20 refunds of 10 race on a paid order of 100, ${ROUNDS} rounds, then exactly 10 succeed, the channel refunds 100 once each, and the order ends refunded`, async () => {
    // One order at a time: each refund that fits runs its own refund and notification
    // workflows, and several orders' worth on two cores shared with Temporal and Postgres
    // measure the machine (answers past the request deadline), not the rule.
    const rounds = await inRounds(ROUNDS, 1, async () => {
      const paid = await pay.paidOrder({ amount: 100 });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
            trade_no: paid.trade_no,
            refund_amount: 10,
          }),
        ),
      );
      await pay.statusIs(paid.trade_no, 'refunded');
      // Counted once the order, its refunds and their notifications are done: a late duplicate
      // (a refund or a notification) would be seen.
      await pay.settled(paid.trade_no);
      const codes = answers.map((a) => a.code);
      return {
        succeeded: codes.filter((c) => c === 'success').length,
        exceeded: codes.filter((c) => c === 'refund_amount_exceed').length,
        // Anything else, said in full, so that a failing round shows what it met.
        others: answers
          .filter((a) => a.code !== 'success' && a.code !== 'refund_amount_exceed')
          .map((a) => `${a.status} ${a.code}: ${a.message}`),
        channelRefunds: await pay.count('SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t', {
          t: paid.trade_no,
        }),
        channelRefunded: await pay.count(
          "SELECT SUM(amount) AS n FROM sandbox_refunds WHERE trade_no = :t AND status = 'success'",
          { t: paid.trade_no },
        ),
        channelRequests: await pay.count(
          'SELECT SUM(refund_requests) AS n FROM sandbox_refunds WHERE trade_no = :t',
          {
            t: paid.trade_no,
          },
        ),
        refundRows: await pay.count(
          "SELECT count(*) AS n FROM refunds WHERE trade_no = :t AND status = 'success'",
          {
            t: paid.trade_no,
          },
        ),
        refunded: (await pay.query(paid.trade_no)).refunded_amount,
        notified: pay.notificationsFor(paid.trade_no, 'refund.succeeded').length,
      };
    });
    const expected = {
      succeeded: 10,
      exceeded: 10,
      others: [],
      channelRefunds: 10,
      channelRefunded: 100,
      channelRequests: 10,
      refundRows: 10,
      refunded: 100,
      notified: 10,
    };
    expect(rounds).toEqual(Array.from({ length: ROUNDS }, () => expected));
  });

  test(`when 20 repeats of one merchant_refund_no race, ${ROUNDS} rounds, then one refund at the channel and the same refund_no in every answer`, async () => {
    // Two orders at a time: only one refund per order reaches the channel.
    const rounds = await inRounds(ROUNDS, 2, async (i) => {
      const paid = await pay.paidOrder({ amount: 100 });
      // Each caller does what the API tells it when the outcome is not known by the deadline
      // (502 channel_timeout, which a loaded machine can give): send the same request again.
      const answers = await Promise.all(
        Array.from({ length: 20 }, async () => {
          for (let sent = 1; ; sent++) {
            const a = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
              trade_no: paid.trade_no,
              refund_amount: 30,
              merchant_refund_no: `MR-${i}`,
            });
            if (a.code !== 'channel_timeout' || sent === 5) return a;
          }
        }),
      );
      await until('the refund settled', async () =>
        (await pay.query(paid.trade_no)).refunded_amount === 30 ? true : undefined,
      );
      await pay.settled(paid.trade_no);
      return {
        codes: [...new Set(answers.map((a) => a.code))],
        refundNos: new Set(answers.map((a) => a.data?.refund_no)).size,
        channelRefunds: await pay.count('SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t', {
          t: paid.trade_no,
        }),
        channelRequests: await pay.count(
          'SELECT SUM(refund_requests) AS n FROM sandbox_refunds WHERE trade_no = :t',
          {
            t: paid.trade_no,
          },
        ),
        refundRows: await pay.count('SELECT count(*) AS n FROM refunds WHERE trade_no = :t', {
          t: paid.trade_no,
        }),
      };
    });
    const expected = {
      codes: ['success'],
      refundNos: 1,
      channelRefunds: 1,
      channelRequests: 1,
      refundRows: 1,
    };
    expect(rounds).toEqual(Array.from({ length: ROUNDS }, () => expected));
  });
});

describe('close, pay and create at once', () => {
  test(`when a buyer pays while the merchant closes and creates again, ${ROUNDS} rounds, then the order ends paid or closed everywhere alike, announced once`, async () => {
    const rounds = await inRounds(ROUNDS, 4, async () => {
      const body = pay.orderBody({ extra: { sandbox: { callback: 'drop' } } });
      const created = (await pay.post<Created>('/api/v1/pay/unified-order', body)).data!;
      const [closes, paidAnswer, creates] = await Promise.all([
        Promise.all(
          Array.from({ length: 3 }, () => pay.post('/api/v1/pay/close', { trade_no: created.trade_no })),
        ),
        pay.buyerPays(created.pay_credential.pay_url),
        Promise.all(Array.from({ length: 3 }, () => pay.post('/api/v1/pay/unified-order', body))),
      ]);
      const final = await until('a final state', async () => {
        const s = String((await pay.query(created.trade_no)).status);
        return s === 'paid' || s === 'closed' ? s : undefined;
      });
      const event = final === 'paid' ? 'payment.succeeded' : 'payment.closed';
      await pay.settled(created.trade_no);
      const [channel] = await stack.database.db.sequelize.query<{ status: string }>(
        'SELECT status FROM sandbox_orders WHERE trade_no = :t',
        { replacements: { t: created.trade_no }, type: QueryTypes.SELECT },
      );
      return {
        // The buyer paid only if the channel took the payment before the close.
        consistent: final === channel?.status && (final === 'paid') === paidAnswer.ok,
        closes: [...new Set(closes.map((c) => `${c.status} ${c.code}`))],
        creates: [...new Set(creates.map((c) => c.code))],
        announced: pay.notificationsFor(created.trade_no, event).length,
        other: pay.notificationsFor(
          created.trade_no,
          final === 'paid' ? 'payment.closed' : 'payment.succeeded',
        ).length,
        final,
        channelRequests: await channelCreates(created.trade_no),
      };
    });
    for (const r of rounds) {
      expect(r).toMatchObject({ consistent: true, announced: 1, other: 0, channelRequests: 1 });
      // Every close answered as the final state says: closed (200), or already paid (422).
      expect(r.closes).toEqual([r.final === 'paid' ? '422 order_already_paid' : '200 success']);
      for (const c of r.creates) expect(['success', 'order_already_paid', 'order_closed']).toContain(c);
    }
  });
});

describe('transfers', () => {
  interface Transfer {
    transfer_no: string;
    status: string;
  }
  const transferBody = (overrides: Record<string, unknown> = {}) => ({
    merchant_transfer_no: uniqueName('W'),
    channel_code: 'sandbox',
    amount: 100,
    payee: { type: 'alipay_user_id', account: '2088000000000001' },
    remark: 'Cashback',
    notify_url: receiver.url,
    ...overrides,
  });
  const ended = (transferNo: string) =>
    stack.client.workflow.getHandle(`transfer:${transferNo}`).result() as Promise<string>;
  const announced = (transferNo: string) =>
    receiver.received.filter(
      (r) => (JSON.parse(r.body) as { data: { transfer_no?: string } }).data.transfer_no === transferNo,
    ).length;
  /** The channel's side of a transfer: how often it was asked to make it, and how it stands. */
  const atChannel = async (transferNo: string) => {
    const [row] = await stack.database.db.sequelize.query<{
      create_requests: number;
      status: string;
      amount: string;
    }>('SELECT create_requests, status, amount FROM sandbox_transfers WHERE transfer_no = :transferNo', {
      replacements: { transferNo },
      type: QueryTypes.SELECT,
    });
    return row;
  };

  test(`when 20 identical transfer requests race, ${ROUNDS} rounds, then one transfer, asked of the channel once, announced once`, async () => {
    const rounds = await inRounds(ROUNDS, 2, async (i) => {
      const body = transferBody(i % 3 === 0 ? { remark: 'Lost [transfer:lost]' } : {});
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          signedFetch(stack.baseUrl, app, 'POST', '/api/v1/transfer', { json: body }).then((r) =>
            envelope<Transfer>(r),
          ),
        ),
      );
      const numbers = new Set(answers.map((a) => a.data?.transfer_no));
      const [transferNo] = [...numbers];
      const status = await ended(transferNo!);
      const channel = await atChannel(transferNo!);
      return {
        codes: [...new Set(answers.map((a) => a.code))],
        transfers: numbers.size,
        rows: await pay.count('SELECT count(*) AS n FROM transfers WHERE merchant_transfer_no = :m', {
          m: body.merchant_transfer_no,
        }),
        status,
        channel: { creates: Number(channel?.create_requests), status: channel?.status },
        announced: announced(transferNo!),
      };
    });
    const expected = {
      codes: ['success'],
      transfers: 1,
      rows: 1,
      status: 'success',
      channel: { creates: 1, status: 'success' },
      announced: 1,
    };
    expect(rounds).toEqual(Array.from({ length: ROUNDS }, () => expected));
  });

  test(`when a cancel races the payee's confirmation, ${ROUNDS} rounds, then durapay and the channel end alike, announced once`, async () => {
    const rounds = await inRounds(ROUNDS, 2, async () => {
      const made = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/transfer', {
        json: transferBody({ payee: { type: 'openid', account: 'o-race' } }),
      }).then((r) => envelope<Transfer>(r));
      const transferNo = made.data!.transfer_no;
      const [cancel] = await Promise.all([
        signedFetch(stack.baseUrl, app, 'POST', '/api/v1/transfer/cancel', {
          json: { transfer_no: transferNo },
        }).then((r) => envelope<Transfer>(r)),
        stack.sandboxControls.confirmTransfer(transferNo).catch(() => undefined),
      ]);
      const status = await ended(transferNo);
      const channel = await atChannel(transferNo);
      return {
        // The cancel either took (cancelled) or came too late (the channel's refusal).
        cancel: cancel.code === 'success' ? 'taken' : cancel.code,
        agrees: status === channel?.status,
        ended: ['success', 'cancelled'].includes(status),
        consistent: cancel.code === 'success' ? status === 'cancelled' : status === 'success',
        announced: announced(transferNo),
      };
    });
    for (const r of rounds) {
      expect(r).toMatchObject({ agrees: true, ended: true, consistent: true, announced: 1 });
      expect(['taken', 'channel_transfer_fail']).toContain(r.cancel);
    }
  });
});
