/**
 * Waiting until nothing more can happen, so that a count taken next is final: "sent once" and
 * "never sent" are only true once every workflow that could still send has closed, or stands
 * with nothing pending after taking in every signal it was sent: no workflow task, activity or
 * child workflow, and no timer due soon. A sleep instead lets a late duplicate through.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { QueryTypes } from 'sequelize';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { refundWorkflowId } from '../../src/modules/refunds/messages';
import { notificationWorkflowId } from '../../src/modules/notifications/messages';
import type { Database } from '../../src/platform/db';
import { scaleDuration } from '../../src/platform/durations';
import type { TestStack } from './harness';
import { until } from './wait';

type State = 'closed' | 'at rest' | 'busy' | 'absent';

const { EVENT_TYPE_TIMER_STARTED, EVENT_TYPE_TIMER_FIRED, EVENT_TYPE_TIMER_CANCELED } =
  temporal.api.enums.v1.EventType;

/**
 * A timer due within this is part of a step still under way (a wait between attempts); one due
 * later is where the workflow stands (a paid order's long wait, a pending order's expiry at the
 * tests' time scales), which no test waits for.
 */
const SOON_MS = 10_000;

/**
 * When the first of the run's open timers is due (undefined when none is open), and how many
 * events the history it read has. A timer of
 * `restingMs` is where the workflow stands, however soon it is due: a paid order's idle period
 * (SPEC §7), whose end only ends the run.
 */
async function nextTimerDue(
  client: Client,
  workflowId: string,
  restingMs?: number,
): Promise<{ due: number | undefined; length: number }> {
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  const open = new Map<string, number>();
  for (const e of events ?? []) {
    if (e.eventType === EVENT_TYPE_TIMER_STARTED) {
      const a = e.timerStartedEventAttributes!;
      if (restingMs !== undefined && tsToMs(a.startToFireTimeout) === restingMs) continue;
      open.set(a.timerId!, tsToMs(e.eventTime) + tsToMs(a.startToFireTimeout));
    } else if (e.eventType === EVENT_TYPE_TIMER_FIRED) {
      open.delete(e.timerFiredEventAttributes!.timerId!);
    } else if (e.eventType === EVENT_TYPE_TIMER_CANCELED) {
      open.delete(e.timerCanceledEventAttributes!.timerId!);
    }
  }
  return { due: open.size > 0 ? Math.min(...open.values()) : undefined, length: events?.length ?? 0 };
}

async function stateOf(client: Client, workflowId: string, restingMs?: number): Promise<State> {
  let d;
  try {
    d = await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'absent';
    throw err;
  }
  if (d.status.name !== 'RUNNING') return 'closed';
  const { pendingWorkflowTask, pendingActivities, pendingChildren, pendingNexusOperations } = d.raw;
  const pending =
    !!pendingWorkflowTask ||
    (pendingActivities ?? []).length > 0 ||
    (pendingChildren ?? []).length > 0 ||
    (pendingNexusOperations ?? []).length > 0;
  if (pending) return 'busy';
  const { due, length } = await nextTimerDue(client, workflowId, restingMs);
  // The history is read after the description: a run that moved on in between (a timer fired,
  // its task scheduled, which the description did not see) is busy, not at rest without it.
  if (length !== Number(d.raw.workflowExecutionInfo?.historyLength ?? 0)) return 'busy';
  return due !== undefined && due - Date.now() < SOON_MS ? 'busy' : 'at rest';
}

/**
 * Waits until the workflow is in one of `states`: `closed`; `at rest`, open with nothing pending
 * (only a timer due later, a signal or an update can move it now); `absent`, never started.
 */
export function reaches(
  client: Client,
  workflowId: string,
  states: State[],
  timeoutMs = 30_000,
  restingMs?: number,
): Promise<State> {
  return until(
    `${workflowId} ${states.join(' or ')}`,
    async () => {
      const state = await stateOf(client, workflowId, restingMs);
      return states.includes(state) ? state : undefined;
    },
    timeoutMs,
  );
}

/**
 * Everything an order's events can still set off, finished: its workflow at rest (or closed),
 * its refunds' workflows closed (a refund the channel refused at once has none), and every
 * notification of the order and its refunds delivered or given up: its workflow closed, or none
 * started because the publisher's first attempt settled it.
 * Call it once what the test did has been answered and every callback it caused has reached
 * durapay.
 */
export async function orderSettled(
  deps: {
    client: Client;
    db: Database;
    /** The stack's idle period, scaled: an order waiting it is at rest. */
    idleEndMs?: number;
  },
  tradeNo: string,
  timeoutMs = 30_000,
): Promise<void> {
  const rows = <T extends object>(sql: string) =>
    deps.db.sequelize.query<T>(sql, { replacements: { t: tradeNo }, type: QueryTypes.SELECT });
  const [order] = await rows<{ app_id: string; merchant_order_no: string }>(
    'SELECT app_id, merchant_order_no FROM orders WHERE trade_no = :t',
  );
  if (!order) throw new Error(`no order ${tradeNo} in the read model`);
  const orderId = orderWorkflowId(order.app_id, order.merchant_order_no);
  // The order records its refunds; each refund tells the order when it ends, so the order is
  // looked at again after them.
  await reaches(deps.client, orderId, ['closed', 'at rest'], timeoutMs, deps.idleEndMs);
  const refunds = await rows<{ refund_no: string }>('SELECT refund_no FROM refunds WHERE trade_no = :t');
  for (const r of refunds) {
    await reaches(deps.client, refundWorkflowId(r.refund_no), ['closed', 'absent'], timeoutMs);
  }
  await reaches(deps.client, orderId, ['closed', 'at rest'], timeoutMs, deps.idleEndMs);
  // Published by the steps above, all finished: every notification they made is in the table.
  const notifications = await rows<{ notification_id: string; status: string }>(
    `SELECT notification_id, status FROM notifications
      WHERE trade_no = :t OR refund_no IN (SELECT refund_no FROM refunds WHERE trade_no = :t)`,
  );
  for (const n of notifications) {
    // A pending one has a workflow (its publisher started it before the step finished).
    const settledAtOnce = n.status !== 'pending';
    await reaches(
      deps.client,
      notificationWorkflowId(n.notification_id),
      settledAtOnce ? ['closed', 'absent'] : ['closed'],
      timeoutMs,
    );
  }
}

/** orderSettled for a test stack's orders, its idle period taken from the stack's settings. */
export function settledIn(
  stack: Pick<TestStack, 'client' | 'database' | 'services'>,
): (tradeNo: string) => Promise<void> {
  const { orderIdleEndMs, timeScale } = stack.services;
  return (tradeNo) =>
    orderSettled(
      { client: stack.client, db: stack.database.db, idleEndMs: scaleDuration(orderIdleEndMs, timeScale) },
      tradeNo,
    );
}
