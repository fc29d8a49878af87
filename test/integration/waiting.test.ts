/**
 * What a pending order costs while it waits (SPEC §3.2): the payment sweeper polls it from
 * Postgres in batches and signals only a payment, so the order's workflow takes a task only when
 * something happens. Read from the order's own history on the real server and from its poll row.
 */
import { temporal } from '@temporalio/proto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { startTestStack, type TestStack } from '../support/harness';
import { inRounds, paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';
import { activityCalls } from '../support/history';
import { QueryTypes } from 'sequelize';
import { OrderRepository } from '../../src/modules/orders';

jest.setTimeout(120_000);

// 1/100 of real time: polls 100 ms, 300 ms, 600 ms, 1.2 s, 3 s apart; a 5-minute expiry is 3 s.
const TIME_SCALE = 0.01;

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
  await receiver?.stop();
  await stack?.stop();
});

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { EventType } = temporal.api.enums.v1;

async function historyOf(merchantOrderNo: string): Promise<HistoryEvent[]> {
  const history = await stack.client.workflow
    .getHandle(orderWorkflowId(app.app_id, merchantOrderNo))
    .fetchHistory();
  return history.events ?? [];
}

/** The channel queries an order's workflow made itself (none: the sweeper makes them). */
const polls = (events: HistoryEvent[]) =>
  activityCalls(events).filter((name) => name === 'queryChannelPayment' || name === 'awaitChannelPayment');

const count = (events: HistoryEvent[], type: number) => events.filter((e) => e.eventType === type).length;

async function pollRow(tradeNo: string): Promise<{ gap_index: number } | undefined> {
  const rows = await stack.database.db.sequelize.query<{ gap_index: number }>(
    'SELECT gap_index FROM payment_polls WHERE trade_no = :tradeNo',
    { replacements: { tradeNo }, type: QueryTypes.SELECT },
  );
  return rows[0];
}

async function create(overrides: Record<string, unknown>) {
  const body = pay.orderBody(overrides);
  const created = await pay.post<{ trade_no: string; pay_credential: { pay_url: string } }>(
    '/api/v1/pay/unified-order',
    body,
  );
  expect(created.code).toBe('success');
  return { merchantOrderNo: body.merchant_order_no, ...created.data! };
}

describe('a pending order waiting on its channel', () => {
  test('when an order waits unpaid until it expires, then the sweeper asks at every gap and the order workflow takes no task for it', async () => {
    const order = await create({ expire_minutes: 5 });
    // 3 s of waiting at gaps of 0.1, 0.3, 0.6, 1.2 s: the sweeper moves the order's poll along.
    await until(
      'three polls',
      async () => ((await pollRow(order.trade_no))?.gap_index ?? 0) >= 3 || undefined,
    );
    await pay.statusIs(order.trade_no, 'closed');
    expect(await pollRow(order.trade_no)).toBeUndefined();

    const events = await historyOf(order.merchantOrderNo);
    expect(polls(events)).toEqual([]);
    // Create, expiry (the close), and nothing for the polls between.
    expect(count(events, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toBeLessThanOrEqual(5);
    await until('payment.closed', async () =>
      pay.notificationsFor(order.trade_no, 'payment.closed').length > 0 ? true : undefined,
    );
    expect(pay.notificationsFor(order.trade_no, 'payment.closed')).toHaveLength(1);
  });

  test('when the buyer pays and the callback arrives, then the order is paid once and no longer polled', async () => {
    const order = await create({ expire_minutes: 30 });
    await pay.buyerPays(order.pay_credential.pay_url);
    await pay.statusIs(order.trade_no, 'paid');
    expect(await pollRow(order.trade_no)).toBeUndefined();
    await until('payment.succeeded', async () =>
      pay.notificationsFor(order.trade_no, 'payment.succeeded').length > 0 ? true : undefined,
    );
    expect(pay.notificationsFor(order.trade_no, 'payment.succeeded')).toHaveLength(1);
  });

  test('when the callback is lost, then the sweeper finds the payment and signals the order', async () => {
    const order = await create({ expire_minutes: 30, extra: { sandbox: { callback: 'drop' } } });
    await pay.buyerPays(order.pay_credential.pay_url);
    await pay.statusIs(order.trade_no, 'paid');
    expect(await pollRow(order.trade_no)).toBeUndefined();

    const events = await historyOf(order.merchantOrderNo);
    expect(polls(events)).toEqual([]);
    expect(count(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toBeGreaterThanOrEqual(1);
    await until('payment.succeeded', async () =>
      pay.notificationsFor(order.trade_no, 'payment.succeeded').length > 0 ? true : undefined,
    );
  });

  test('when a pending order is closed by its merchant, then it is no longer polled', async () => {
    const order = await create({ expire_minutes: 30 });
    const closed = await pay.post('/api/v1/pay/close', { trade_no: order.trade_no });
    expect(closed.code).toBe('success');
    expect(await pollRow(order.trade_no)).toBeUndefined();
  });
});

describe('sweepers side by side', () => {
  test('when two sweepers claim due polls at once, round after round, then every due poll is claimed by exactly one of them', async () => {
    const orders = await inRounds(30, 4, () =>
      create({ expire_minutes: 30, extra: { sandbox: { callback: 'drop' } } }),
    );
    const tradeNos = orders.map((o) => o.trade_no).sort();
    await stack.sweeper.stop();
    const repo = new OrderRepository(stack.database.db);
    try {
      for (let round = 0; round < 25; round++) {
        await stack.database.db.sequelize.query(
          "UPDATE payment_polls SET next_poll_at = now() - interval '1 second' WHERE trade_no IN (:tradeNos)",
          { replacements: { tradeNos } },
        );
        const claimed: string[] = [];
        const sweeper = async () => {
          for (;;) {
            const batch = await repo.claimDuePolls(4);
            if (batch.length === 0) return;
            claimed.push(...batch.map((b) => b.tradeNo).filter((t) => tradeNos.includes(t)));
          }
        };
        await Promise.all([sweeper(), sweeper(), sweeper()]);
        expect(claimed.sort()).toEqual(tradeNos);
      }
    } finally {
      stack.sweeper.start();
    }
  });
});
