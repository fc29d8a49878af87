// The production workflow bundle entry: every workflow type a durapay worker serves. The
// diagnostic and benchmark workflows are in src/diagnostics/workflows.ts.
export { notificationWorkflow } from '../modules/notifications/workflow';
export { orderWorkflow } from '../modules/orders/workflow';
export { refundWorkflow } from '../modules/refunds/workflow';
export { merchantApplicationWorkflow } from '../modules/applications/workflow';
export { callbackRetentionWorkflow } from '../modules/callbacks/workflow';
export { channelTokenWorkflow } from '../modules/merchants/workflow';
export { reconciliationWorkflow, reconciliationDayWorkflow } from '../modules/reconciliation/workflow';
export { transferWorkflow } from '../modules/transfers/workflow';
export { complaintWorkflow, complaintSweepWorkflow } from '../modules/complaints/workflow';
export { contractWorkflow } from '../modules/contracts/workflow';
