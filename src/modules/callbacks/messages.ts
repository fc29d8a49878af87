/**
 * The callback retention's messages (SPEC §9): its schedule's id, its workflow's input and
 * result. Workflow-safe: no Node built-ins, no I/O.
 */

export const DAY_MS = 86_400_000;

/**
 * The retention schedule of the workers of a task queue, and the id of the workflows it starts
 * (Temporal adds each run's time to it). One per task queue: the deployments that share a
 * namespace each purge their own database.
 */
export const callbackRetentionScheduleId = (taskQueue: string) => `callback-retention:${taskQueue}`;

export interface CallbackRetentionInput {
  /** Callbacks received longer ago than this are deleted (CALLBACK_RETENTION_DAYS). */
  retentionDays: number;
  /** Rows deleted by one statement (CALLBACK_RETENTION_BATCH). */
  batchSize: number;
}

export interface ExpiredCallbacksInput {
  /** RFC 3339: callbacks received before it are deleted. */
  before: string;
  batchSize: number;
}

export interface ExpiredCallbacksDeleted {
  deleted: number;
  /** DELETE statements run, the last one deleting fewer than a batch. */
  batches: number;
}

export interface CallbackRetentionResult extends ExpiredCallbacksDeleted {
  before: string;
}
