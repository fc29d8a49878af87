import { ApplicationFailure } from '@temporalio/common';
import type { Logger } from '../platform/logger';
import { isPermanentDatabaseError, sqlStateOf } from '../platform/db/errors';

/**
 * A database failure no retry can mend (a constraint, a check, a type: platform/db/errors.ts)
 * fails its activity at once, as `internal_system`, instead of being retried for ever and
 * wedging the workflow that waits for it; the workflow decides what the failed step means.
 * Activities that know what such a failure means for a client (a merchant_refund_no used twice)
 * say so themselves first. The message names the activity and the SQLSTATE, never SQL or values.
 *
 * Not the polls and queries (`await…`, `query…`): they only read, and a workflow takes their
 * failure for "the channel did not answer" (a refund followed to `failed`, its amount free
 * again), which a database that refuses a read must never make of a refund the channel made.
 * They go on retrying, visibly, until the database is mended.
 */
export function failingPermanentDatabaseErrors<
  T extends Record<string, (...args: never[]) => Promise<unknown>>,
>(logger: Logger, activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    if (/^(await|query)[A-Z]/.test(name)) {
      wrapped[name] = fn;
      continue;
    }
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        if (err instanceof ApplicationFailure || !isPermanentDatabaseError(err)) throw err;
        const sqlState = sqlStateOf(err);
        logger.error('a database write failed for good; its step fails', {
          activity: name,
          sql_state: sqlState,
        });
        throw ApplicationFailure.nonRetryable(
          `the database refused ${name} (SQLSTATE ${sqlState}); it cannot succeed when tried again`,
          'internal_system',
        );
      }
    };
  }
  return wrapped as T;
}
