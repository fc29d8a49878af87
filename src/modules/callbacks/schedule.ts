import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { createOrUpdateSchedule } from '../../platform/temporal-schedules';
import { callbackRetentionScheduleId, type CallbackRetentionInput } from './messages';
import type { callbackRetentionWorkflow } from './workflow';

export interface CallbackRetentionScheduleOptions extends CallbackRetentionInput {
  taskQueue: string;
}

/**
 * Makes sure the retention schedule of this task queue exists and starts the purge as
 * configured; every worker calls it at start. Its id is fixed per task queue: the first start
 * creates it, later ones update it (a changed CALLBACK_RETENTION_DAYS reaches it) and keep its
 * paused state (platform/temporal-schedules.ts). Answers which it did.
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
  return createOrUpdateSchedule<typeof callbackRetentionWorkflow>(client, {
    scheduleId,
    spec: { calendars: [{ hour: 19, minute: 0 }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'callbackRetentionWorkflow',
      workflowId: scheduleId,
      taskQueue: options.taskQueue,
      args: [input],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  });
}
