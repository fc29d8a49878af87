/**
 * What a pending order costs while it waits (SPEC §3.2): one polling activity follows the
 * backoff, its attempts kept by the server, so the order's workflow takes a task only when
 * something happens. Read from the order's own history on the real server.
 */
import { temporal } from '@temporalio/proto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

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

/** The polling activity's scheduled event id, the attempt it ended on, and how it ended. */
function polls(events: HistoryEvent[]) {
  const scheduled = events.filter(
    (e) =>
      e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
      e.activityTaskScheduledEventAttributes?.activityType?.name === 'awaitChannelPayment',
  );
  return scheduled.map((s) => {
    const id = Number(s.eventId);
    const of = (e: HistoryEvent) =>
      Number(
        (
          e.activityTaskStartedEventAttributes ??
          e.activityTaskCompletedEventAttributes ??
          e.activityTaskCancelRequestedEventAttributes ??
          e.activityTaskCanceledEventAttributes
        )?.scheduledEventId,
      ) === id;
    const started = events.find((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED && of(e));
    return {
      attempt: started?.activityTaskStartedEventAttributes?.attempt ?? 0,
      completed: events.some((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED && of(e)),
      cancelRequested: events.some(
        (e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED && of(e),
      ),
    };
  });
}

const count = (events: HistoryEvent[], type: number) => events.filter((e) => e.eventType === type).length;

describe('a pending order waiting on its channel', () => {
  test('when an order waits unpaid until it expires, then one polling activity asked at every gap and its workflow took no task or timer for them', async () => {
    const body = pay.orderBody({ expire_minutes: 5 });
    const created = await pay.post<{ trade_no: string }>('/api/v1/pay/unified-order', body);
    expect(created.code).toBe('success');
    await pay.statusIs(created.data!.trade_no, 'closed');

    const events = await historyOf(body.merchant_order_no);
    const poll = polls(events);
    expect(poll).toHaveLength(1);
    // 3 s of waiting at gaps of 0.1, 0.3, 0.6, 1.2 s…: at least four queries (the server's retry
    // timers may fire late on a loaded machine, never early), all in one activity.
    expect(poll[0]!.attempt).toBeGreaterThanOrEqual(4);
    expect(poll[0]!.completed).toBe(true);
    // Every wait was the activity's: no workflow timer fired while the order was pending.
    expect(count(events, EventType.EVENT_TYPE_TIMER_FIRED)).toBe(0);
    // Create, the poll's end at expiry (then the close), and nothing for the queries between.
    expect(count(events, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toBeLessThanOrEqual(5);
    await until('payment.closed', async () =>
      pay.notificationsFor(created.data!.trade_no, 'payment.closed').length > 0 ? true : undefined,
    );
    expect(pay.notificationsFor(created.data!.trade_no, 'payment.closed')).toHaveLength(1);
  });

  test('when the buyer pays and the callback arrives, then the waiting poll is cancelled and the order is paid once', async () => {
    const body = pay.orderBody({ expire_minutes: 30 });
    const created = await pay.post<{ trade_no: string; pay_credential: { pay_url: string } }>(
      '/api/v1/pay/unified-order',
      body,
    );
    await pay.buyerPays(created.data!.pay_credential.pay_url);
    await pay.statusIs(created.data!.trade_no, 'paid');

    const poll = await until('the poll cancelled', async () => {
      const p = polls(await historyOf(body.merchant_order_no));
      return p[0]?.cancelRequested ? p : undefined;
    });
    expect(poll).toHaveLength(1);
    expect(poll[0]!.completed).toBe(false);
    await until('payment.succeeded', async () =>
      pay.notificationsFor(created.data!.trade_no, 'payment.succeeded').length > 0 ? true : undefined,
    );
    expect(pay.notificationsFor(created.data!.trade_no, 'payment.succeeded')).toHaveLength(1);
  });

  test('when the callback is lost, then the poll finds the payment and ends with it', async () => {
    const body = pay.orderBody({ expire_minutes: 30, extra: { sandbox: { callback: 'drop' } } });
    const created = await pay.post<{ trade_no: string; pay_credential: { pay_url: string } }>(
      '/api/v1/pay/unified-order',
      body,
    );
    await pay.buyerPays(created.data!.pay_credential.pay_url);
    await pay.statusIs(created.data!.trade_no, 'paid');

    const poll = polls(await historyOf(body.merchant_order_no));
    expect(poll).toHaveLength(1);
    expect(poll[0]!.completed).toBe(true);
    expect(poll[0]!.cancelRequested).toBe(false);
    expect(poll[0]!.attempt).toBeGreaterThanOrEqual(2);
  });

  test('when a pending order is closed by its merchant, then the waiting poll is cancelled', async () => {
    const body = pay.orderBody({ expire_minutes: 30 });
    const created = await pay.post<{ trade_no: string }>('/api/v1/pay/unified-order', body);
    const closed = await pay.post('/api/v1/pay/close', { trade_no: created.data!.trade_no });
    expect(closed.code).toBe('success');
    const poll = await until('the poll cancelled', async () => {
      const p = polls(await historyOf(body.merchant_order_no));
      return p[0]?.cancelRequested ? p : undefined;
    });
    expect(poll[0]!.completed).toBe(false);
  });
});
