/**
 * Waiting on a channel as one activity whose retries are the backoff (Temporal's "infrequent
 * polling"): every attempt asks once, and an answer that is not final yet fails the attempt with
 * the next gap of the schedule as its retry delay. The server keeps the retry timer; an attempt
 * adds no workflow task and no history event, and the workflow sleeps, evictable from the
 * worker's cache, until the activity has something to say (or a callback cancels it).
 *
 * The first attempt runs as soon as the activity is scheduled (with the step that scheduled it)
 * and only waits for the schedule's first gap: nobody has paid a code that was shown a moment ago.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';

/** The schedule one polling activity follows; it is recorded with the activity's input. */
export interface PollPlan {
  /** Gaps between queries; the last one repeats. */
  gapsMs: number[];
  /** Where in the gaps this activity starts (an activity scheduled again continues the schedule). */
  firstGap?: number;
  /** When the waiting ends, in epoch milliseconds. */
  deadlineMs: number;
  /** Whether to ask the channel once more at the deadline; if not, the caller's own final step does. */
  askAtDeadline: boolean;
}

/**
 * What a polling activity ends with: an answer worth a workflow task (and the index of the gap a
 * poll scheduled after it continues with), or the deadline.
 */
export type PollOutcome<T> = { answer: T; nextGap: number } | { due: true };

/** Thrown, never returned: the type of the failure that asks for the next attempt. */
export const STILL_WAITING = 'still_waiting';

export function gapAt(gapsMs: number[], index: number): number {
  return gapsMs[Math.min(Math.max(0, index), gapsMs.length - 1)]!;
}

/**
 * One attempt: asks (except on the first attempt), returns an answer `ask` calls final, returns
 * `due` at the deadline, and otherwise fails as retryable with the next gap as the delay. A query
 * that fails is logged and counts as "not final": the schedule goes on, as it would after a
 * pending answer.
 */
export async function pollAttempt<T>(
  plan: PollPlan,
  ask: () => Promise<T | undefined>,
  onAskFailed: (err: unknown) => void,
): Promise<PollOutcome<T>> {
  const attempt = Context.current().info.attempt;
  const firstGap = plan.firstGap ?? 0;
  const leftMs = () => plan.deadlineMs - Date.now();
  if (attempt > 1 && (leftMs() > 0 || plan.askAtDeadline)) {
    try {
      const answer = await ask();
      if (answer !== undefined) return { answer, nextGap: firstGap + attempt - 1 };
    } catch (err) {
      onAskFailed(err);
    }
  }
  const left = leftMs();
  if (left <= 0) return { due: true };
  const gap = gapAt(plan.gapsMs, firstGap + attempt - 1);
  throw ApplicationFailure.create({
    type: STILL_WAITING,
    message: 'no final answer yet; asking again after the next gap',
    nextRetryDelay: Math.max(1, Math.min(gap, left)),
    // Expected, once per gap of every waiting order: logged at debug, not as a failed activity.
    category: ApplicationFailureCategory.BENIGN,
  });
}
