import { proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { DiagnosticActivities as Activities } from './activities';
import { activityProfiles } from '../platform/workflow/definitions';
import type { DiagnosticInput, DiagnosticResult } from './messages';

const { recordDiagnosticStep } = proxyActivities<Activities>(activityProfiles.dbWrite);

/**
 * Proves the whole path an order will take: a worker picks the workflow up, an activity
 * writes to Postgres, a durable timer survives a worker restart, a second write follows.
 * `durapay doctor` runs it against a live deployment. A write the database refuses for good
 * fails the run at once, naming the activity and the SQLSTATE: that is the diagnosis.
 */
export async function diagnosticWorkflow(input: DiagnosticInput): Promise<DiagnosticResult> {
  const { workflowId } = workflowInfo();
  const inserted: number[] = [];
  for (const step of [1, 2]) {
    if (step > 1) await sleep(input.pauseMs);
    const wrote = await recordDiagnosticStep({ runId: input.runId, step, workflowId });
    if (wrote) inserted.push(step);
  }
  return { runId: input.runId, steps: [1, 2], insertedSteps: inserted };
}
