import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { callbackRetentionScheduleId, type CallbackRetentionInput } from './messages';
import type { callbackRetentionWorkflow } from './workflow';

export interface CallbackRetentionScheduleOptions extends CallbackRetentionInput {
  taskQueue: string;
}

/**
 * Makes sure the retention schedule of this task queue exists and starts the purge as
 * configured; every worker calls it at start. The schedule lives in Temporal, so it survives
 * restarts; its id is fixed per task queue, so there is never a second one: the first start
 * creates it, later ones update its spec and action (a changed CALLBACK_RETENTION_DAYS reaches it)
 * and keep its state, so a schedule an operator paused stays paused. Answers which it did.
 *
 * Daily at 19:00 UTC (03:00 in China, where the channels' traffic is lowest), catching up on a
 * missed day for a day; one purge at a time (a run still going when the next is due makes the
 * next one skip).
 */
export async function ensureCallbackRetentionSchedule(
  client: Client,
  options: CallbackRetentionScheduleOptions,
): Promise<'created' | 'updated'> {
  const scheduleId = callbackRetentionScheduleId(options.taskQueue);
  const input: CallbackRetentionInput = {
    retentionDays: options.retentionDays,
    batchSize: options.batchSize,
  };
  const spec = { calendars: [{ hour: 19, minute: 0 }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'callbackRetentionWorkflow',
    workflowId: scheduleId,
    taskQueue: options.taskQueue,
    args: [input] as Parameters<typeof callbackRetentionWorkflow>,
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' as const };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await client.schedule.getHandle(scheduleId).update((previous) => ({
    spec,
    action,
    policies,
    state: { paused: previous.state.paused, note: previous.state.note },
  }));
  return 'updated';
}
