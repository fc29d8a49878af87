/**
 * The workflow's side of waiting on a channel as one polling activity (platform/polling.ts):
 * the activity runs in its own cancellation scope so that a callback, a close or anything else
 * the workflow is told first cancels it; its retries (the backoff) cost the workflow nothing.
 */
import { CancellationScope, condition } from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/common';
import { activityProfiles } from './definitions';

export type Waited<T> = { done: T } | { failed: unknown } | { interrupted: true };

/**
 * Runs `poll` until it ends or `interrupted()` turns true, whichever is first; an interrupted
 * poll is cancelled (the server drops its pending retry at once).
 */
export async function pollUnless<T>(poll: () => Promise<T>, interrupted: () => boolean): Promise<Waited<T>> {
  const scope = new CancellationScope();
  let settled: Waited<T> | undefined;
  scope.run(poll).then(
    (done) => (settled = { done }),
    (failed: unknown) => (settled = { failed }),
  );
  await condition(() => settled !== undefined || interrupted());
  if (settled) return settled;
  scope.cancel();
  return { interrupted: true };
}

/**
 * Options for a polling activity that waits until `deadlineMs`: the profile, with a
 * schedule-to-close bound a little past the deadline so that a poll can never outlive its purpose
 * by long (its last attempt returns at the deadline itself).
 */
export function pollingOptions(deadlineMs: number, slackMs: number): ActivityOptions {
  return {
    ...activityProfiles.channelPolling,
    scheduleToCloseTimeout: Math.max(1, deadlineMs - Date.now()) + slackMs,
  };
}
