/**
 * What the complaint tests share (SPEC §16): the safety net's Schedule set up, run once and taken
 * down, and the complaint notifications an app's receiver got.
 */
import { ensureComplaintSweepSchedule } from '../../src/modules/complaints';
import type { TestStack } from './harness';
import type { Receiver } from './receiver';
import { until } from './wait';

const scheduleOf = (stack: TestStack) =>
  stack.client.schedule.getHandle(`complaint-sweep:${stack.taskQueue}`);

/** As every worker with complaints does at start: the safety net's Schedule, run once at once. */
export const startComplaintSweep = (stack: TestStack) =>
  ensureComplaintSweepSchedule(stack.client, { taskQueue: stack.taskQueue, publicBaseUrl: stack.baseUrl });

/** The Schedule gone, so that it does not outlive its stack. */
export const stopComplaintSweep = (stack: TestStack) =>
  scheduleOf(stack)
    .delete()
    .catch(() => undefined);

/** Runs the safety net's Schedule once and waits for its sweep to end. */
export async function sweepOnce(stack: TestStack): Promise<void> {
  const schedule = scheduleOf(stack);
  const before = (await schedule.describe()).info.numActionsTaken;
  await schedule.trigger();
  const action = await until('the sweep started', async () => {
    const info = (await schedule.describe()).info;
    return info.numActionsTaken > before ? info.recentActions.at(-1)!.action : undefined;
  });
  await stack.client.workflow
    .getHandle(action.workflow.workflowId, action.workflow.firstExecutionRunId)
    .result();
}

/** The complaint notifications of one type the receiver got for a complaint. */
export const complaintEvents = (receiver: Receiver, type: string, complaintId: string) =>
  receiver.received.filter((r) => {
    const body = JSON.parse(r.body) as { type: string; data: { complaint_id?: string } };
    return body.type === type && body.data.complaint_id === complaintId;
  });

/** Waits until the receiver has a notification of that type for the complaint. */
export const complaintEventArrived = (
  receiver: Receiver,
  type: string,
  complaintId: string,
  timeoutMs?: number,
) =>
  until(
    `${type} of ${complaintId}`,
    async () => (complaintEvents(receiver, type, complaintId).length > 0 ? true : undefined),
    timeoutMs,
  );
