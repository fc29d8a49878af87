// The reconciliation module's public surface (SPEC §10). Workflow code imports ./messages instead.
export { createReconciliationActivities, type ReconciliationActivities } from './activities';
export { reconciliationRoutes } from './routes';
export { reconciliationOperations } from './openapi';
export { ReconciliationService } from './service';
export { ensureReconciliationSchedule } from './schedule';
export type { ReconciliationResult, RunSummary, MismatchCategory } from './messages';
