import { proxyActivities } from '@temporalio/workflow';
import type { CallbackActivities as Activities } from './activities';
import { activityProfiles } from '../../platform/workflow/definitions';
import { DAY_MS, type CallbackRetentionInput, type CallbackRetentionResult } from './messages';

const { deleteExpiredCallbacks } = proxyActivities<Activities>(activityProfiles.housekeeping);

/**
 * Deletes the raw callbacks older than the retention (SPEC §9), started by the retention
 * schedule (./schedule.ts). The cutoff is fixed when the run starts (workflow time, the same on
 * replay); the batches are one activity's loop, heartbeating, so that a purge of millions of
 * rows is one activity in this history, not one per batch. A delete the database refuses for
 * good fails the run at once, visibly; the schedule's next run tries again.
 */
export async function callbackRetentionWorkflow(
  input: CallbackRetentionInput,
): Promise<CallbackRetentionResult> {
  const before = new Date(Date.now() - input.retentionDays * DAY_MS).toISOString();
  const done = await deleteExpiredCallbacks({ before, batchSize: input.batchSize });
  return { before, ...done };
}
