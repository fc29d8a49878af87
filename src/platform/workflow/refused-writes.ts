/**
 * The workflow's side of a database write refused for good (a constraint, a check, a type): the
 * worker fails its activity at once instead of retrying it for ever
 * (activities/permanent-database-errors.ts), and the workflow decides what the unrecorded step means.
 */
import { ActivityFailure, ApplicationFailure, log } from '@temporalio/workflow';

/**
 * Runs a write whose profile retries it for as long as the database may still take it (dbWrite,
 * publish: no attempt limit, no schedule-to-close), so that the only ActivityFailure with an
 * ApplicationFailure inside is a refusal for good. Such a refusal is logged as an error for an
 * operator, with `fields` saying what was not recorded, and answered false, so that the workflow
 * goes on with what must still happen; anything else (a cancellation) is thrown.
 */
export async function unlessRefusedForGood(
  what: string,
  fields: Record<string, unknown>,
  write: () => Promise<unknown>,
): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (err) {
    if (!(err instanceof ActivityFailure && err.cause instanceof ApplicationFailure)) throw err;
    log.error(`${what} was not recorded: the database refused it for good; an operator must record it`, {
      ...fields,
      error: err.cause.message,
    });
    return false;
  }
}
