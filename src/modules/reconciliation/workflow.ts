import { log, proxyActivities, sleep } from '@temporalio/workflow';
import type { ReconciliationActivities as Activities } from './activities';
import { activityProfiles } from '../../platform/workflow/definitions';
import type { ReconciliationDayInput, ReconciliationInput, ReconciliationResult } from './messages';
import { notReadyBackoffMs } from './rules';

const { beginReconciliationRun } = proxyActivities<Activities>(activityProfiles.dbWrite);
const { matchStatement, finishReconciliationRun } = proxyActivities<Activities>(
  activityProfiles.statementMatch,
);
/** Reading a statement (up to a million lines) and repairing: one activity each, heartbeating. */
const { loadStatement } = proxyActivities<Activities>(activityProfiles.statement);
const { repairLostPayments } = proxyActivities<Activities>(activityProfiles.statementRepair);
const { startReconciliationRuns } = proxyActivities<Activities>(activityProfiles.dbWrite);

/**
 * One reconciliation run (SPEC §10): one channel account's statement of one day against the
 * books. The statement is asked for until it is ready (on a backoff, until midday of the next
 * day); then read, matched, lost payments repaired, and the outcome recorded and announced.
 * Started again for the same day (by hand), it replaces its findings: what it decides is the
 * database's, so a second run of an unchanged day changes nothing.
 */
export async function reconciliationWorkflow(
  input: ReconciliationInput & { startedBy: string },
): Promise<ReconciliationResult> {
  await beginReconciliationRun(input);
  const deadline = Date.parse(input.readyDeadline);
  let statement: 'ready' | 'empty';
  for (let attempt = 0; ; attempt += 1) {
    try {
      const load = await loadStatement(input);
      if (load.status !== 'not_ready') {
        statement = load.status;
        break;
      }
      const wait = Math.max(1, notReadyBackoffMs(attempt) * input.timeScale);
      if (Date.now() + wait > deadline) {
        return fail(`the channel's statement was not ready by ${input.readyDeadline}: ${load.reason}`);
      }
      log.info('statement not ready; asking again later', { run_id: input.runId, wait_ms: wait });
      await sleep(wait);
    } catch (err) {
      return fail(`the statement could not be read: ${describe(err)}`);
    }
  }
  try {
    await matchStatement(input);
  } catch (err) {
    // Recorded as failed, not left running: the day can be started again by hand.
    return fail(`the statement could not be matched: ${describe(err)}`);
  }
  try {
    await repairLostPayments(input);
  } catch (err) {
    // What could not be confirmed stays open, noted: the run's findings are recorded all the same.
    log.warn('lost payments not all repaired', { run_id: input.runId, error: String(err) });
  }
  const summary = await finishReconciliationRun(input, { status: 'completed', statement });
  return { runId: input.runId, status: 'completed', summary, error: null };

  async function fail(error: string): Promise<ReconciliationResult> {
    await finishReconciliationRun(input, { status: 'failed', error });
    return { runId: input.runId, status: 'failed', summary: null, error };
  }
}

/** An activity's failure as its cause says it (the activity's own message, not Temporal's wrapper). */
function describe(err: unknown): string {
  const cause = (err as Error).cause;
  return cause instanceof Error ? cause.message : String(err);
}

/** The daily schedule's workflow: starts the runs of the day before (or of a day given). */
export async function reconciliationDayWorkflow(input: ReconciliationDayInput): Promise<string[]> {
  return startReconciliationRuns(input);
}
