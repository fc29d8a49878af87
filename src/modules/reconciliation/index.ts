// The reconciliation module's public surface (SPEC §10). Workflow code imports ./messages instead.
export { createReconciliationActivities, type ReconciliationActivities } from './activities';
export { reconciliationRoutes } from './routes';
export { reconciliationOperations } from './openapi';
export { ReconciliationService } from './service';
export { ensureReconciliationSchedule } from './schedule';
export {
  MISMATCH_STATES,
  RECONCILIATION_CATEGORIES,
  RESOLUTIONS,
  RUN_STATUSES,
  type ReconciliationResult,
  type RunSummary,
  type MismatchCategory,
  type MismatchState,
  type Resolution,
  type RunStatus,
} from './messages';
export { ReconciliationRepository, type MismatchRow, type RunRow } from './repository';
export { mismatchView, runView } from './view';
