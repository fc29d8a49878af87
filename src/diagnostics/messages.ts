/** Messages of the diagnostic (`durapay doctor`) and benchmark-floor workflows. */
import { defineUpdate } from '@temporalio/workflow';

export const diagnosticWorkflowId = (runId: string) => `diagnostic:${runId}`;
export const benchFloorWorkflowId = (runId: string) => `bench-floor:${runId}`;

/** The benchmark's no-op update (see bench-floor.ts): answered at once. */
export const benchFloorUpdate = defineUpdate<{ ok: true }, []>('benchFloor');

export interface DiagnosticInput {
  runId: string;
  /** How long the workflow waits between its two steps, already scaled. */
  pauseMs: number;
}

export interface DiagnosticResult {
  runId: string;
  steps: number[];
  insertedSteps: number[];
}
