// The workflow bundle entry of a worker that also serves the diagnostic (`durapay doctor`) and
// benchmark-floor workflows: everything production serves, and those two. Production workers
// bundle src/workflows alone unless DURAPAY_DIAGNOSTIC_WORKFLOWS is set.
export * from '../workflows';
export { benchFloorWorkflow } from './bench-floor-workflow';
export { diagnosticWorkflow } from './diagnostic-workflow';
