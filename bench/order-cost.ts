/**
 * What one paid order has cost Temporal so far: the workflows it set off (its own, and those of
 * its notifications that needed more than their first attempt), and in their histories the
 * workflow tasks, activity tasks, local activities and events. Read from the histories of a
 * sample of orders taken through the whole cycle (created, paid by the buyer, payment.succeeded
 * verified at the receiver), once each order's workflow has nothing left to do but wait.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { orderWorkflowId } from '../src/modules/orders/messages';
import { REQUEST_TIMEOUT_MS, payAsBuyer, type Bench } from './harness';
import { say } from './lib/cli';
import { orderInput } from './phases';

const { EventType } = temporal.api.enums.v1;

/** Averages per order of the sample. */
export interface OrderCost {
  /** How many orders the averages are over. */
  orders: number;
  workflows: number;
  workflow_tasks: number;
  activity_tasks: number;
  local_activities: number;
  events: number;
  /** The same, by workflow type (orderWorkflow, notificationWorkflow, …): workflows and events. */
  by_type: Record<string, { workflows: number; events: number }>;
  measures: string;
}

/** How many orders the sample holds: enough for an average, few enough to take seconds. */
const SAMPLE = 20;
const AT_REST_TIMEOUT_MS = 15_000;

export async function orderCostPhase(b: Bench): Promise<OrderCost> {
  say(`order cost: ${SAMPLE} orders through the whole cycle, then their histories`);
  const orders: { tradeNo: string; workflowId: string }[] = [];
  for (let i = 0; i < SAMPLE; i++) {
    const input = orderInput(b, 'cost');
    const order = await b.sdk.createOrder(input);
    await payAsBuyer(order);
    await b.receiver.waitFor('payment.succeeded', order.trade_no, REQUEST_TIMEOUT_MS - 1_000);
    orders.push({
      tradeNo: order.trade_no,
      workflowId: orderWorkflowId(b.stack.app.app_id, input.merchant_order_no),
    });
  }
  const totals = { workflows: 0, workflow_tasks: 0, activity_tasks: 0, local_activities: 0, events: 0 };
  const byType: Record<string, { workflows: number; events: number }> = {};
  for (const { tradeNo, workflowId } of orders) {
    await atRest(b, workflowId);
    // The order's own workflow by its id; the others it set off by their TradeNo.
    const ids = new Map<string, string>([[workflowId, 'orderWorkflow']]);
    for await (const wf of b.temporal.workflow.list({ query: `TradeNo = '${tradeNo}'` })) {
      ids.set(wf.workflowId, wf.type);
    }
    for (const [id, type] of ids) {
      const events = (await b.temporal.workflow.getHandle(id).fetchHistory()).events ?? [];
      const count = (t: number) => events.filter((e) => e.eventType === t).length;
      totals.workflows += 1;
      totals.workflow_tasks += count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      totals.activity_tasks += count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
      totals.local_activities += events.filter(
        (e) =>
          e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED &&
          e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
      ).length;
      totals.events += events.length;
      const t = (byType[type] ??= { workflows: 0, events: 0 });
      t.workflows += 1;
      t.events += events.length;
    }
  }
  const per = (n: number) => Math.round((n / orders.length) * 100) / 100;
  return {
    orders: orders.length,
    workflows: per(totals.workflows),
    workflow_tasks: per(totals.workflow_tasks),
    activity_tasks: per(totals.activity_tasks),
    local_activities: per(totals.local_activities),
    events: per(totals.events),
    by_type: Object.fromEntries(
      Object.entries(byType).map(([type, t]) => [
        type,
        { workflows: per(t.workflows), events: per(t.events) },
      ]),
    ),
    measures:
      'per order paid through the whole cycle (created, paid by the buyer, payment.succeeded verified), from the histories of every workflow it set off once its own workflow was at rest',
  };
}

/** Waits until the order's workflow has no task or activity pending: only its long wait is left. */
async function atRest(b: Bench, workflowId: string): Promise<void> {
  const deadline = Date.now() + AT_REST_TIMEOUT_MS;
  for (;;) {
    try {
      const { raw } = await b.temporal.workflow.getHandle(workflowId).describe();
      const busy = !!raw.pendingWorkflowTask || (raw.pendingActivities ?? []).length > 0;
      if (!busy) return;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
    if (Date.now() > deadline) throw new Error(`${workflowId} was still busy after ${AT_REST_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
