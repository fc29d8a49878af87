import type { Database } from '../platform/db';

/** The diagnostic activities, under the names the worker registers them by. */
export type DiagnosticActivities = ReturnType<typeof createDiagnosticActivities>;

export function createDiagnosticActivities({ db }: { db: Database }) {
  return {
    /**
     * Writes one step of a diagnostic run. Idempotent on (run_id, step): a retry after a
     * lost acknowledgement finds the row and reports that it wrote nothing new.
     */
    async recordDiagnosticStep(input: { runId: string; step: number; workflowId: string }): Promise<boolean> {
      const [rows] = await db.sequelize.query(
        `INSERT INTO diagnostic_steps (run_id, step, workflow_id, recorded_at)
         VALUES (:runId, :step, :workflowId, now())
         ON CONFLICT (run_id, step) DO NOTHING
         RETURNING step`,
        { replacements: input },
      );
      return rows.length === 1;
    },
  };
}
