import { Context } from '@temporalio/activity';
import type { Database } from '../../platform/db';
import type { Logger } from '../../platform/logger';
import type { WorkerMetrics } from '../../platform/worker-metrics';
import type { ExpiredCallbacksDeleted, ExpiredCallbacksInput } from './messages';
import { CallbackLog } from './repository';

/** What the callbacks module's activities need. */
export interface CallbackActivityDeps {
  db: Database;
  logger: Logger;
  /** Where the batches deleted are counted, for the worker's `GET /metrics`. */
  metrics: WorkerMetrics;
}

/** The activities of the callbacks module, under the names the worker registers them by. */
export type CallbackActivities = ReturnType<typeof createCallbackActivities>;

export function createCallbackActivities(deps: CallbackActivityDeps) {
  const log = new CallbackLog(deps.db);

  return {
    /**
     * Deletes the callbacks received before `before`, a batch at a time until a batch comes back
     * short, heartbeating after each: a lost worker is noticed at the heartbeat timeout and the
     * next attempt goes on from what is left (a deleted row stays deleted), counting from the
     * last heartbeat. Each batch is counted in the worker's metrics as soon as it is deleted.
     */
    async deleteExpiredCallbacks(input: ExpiredCallbacksInput): Promise<ExpiredCallbacksDeleted> {
      const ctx = Context.current();
      const before = new Date(input.before);
      const done: ExpiredCallbacksDeleted = {
        deleted: 0,
        batches: 0,
        ...(ctx.info.heartbeatDetails as ExpiredCallbacksDeleted | undefined),
      };
      for (;;) {
        // Heartbeats carry a cancellation (the run was cancelled or timed out): stop between batches.
        ctx.cancellationSignal.throwIfAborted();
        const deleted = await log.deleteReceivedBefore(before, input.batchSize);
        done.deleted += deleted;
        done.batches += 1;
        deps.metrics.callbacksDeletedBy(deleted);
        ctx.heartbeat(done);
        if (deleted < input.batchSize) break;
      }
      deps.logger.info('expired callbacks deleted', { before: input.before, ...done });
      return done;
    },
  };
}
