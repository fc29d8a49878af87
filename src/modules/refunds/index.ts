// The refunds module's public surface: what other modules and the API may use. Workflow code
// imports the workflow-safe ./messages instead.
export { refundRoutes } from './routes';
export { refundOperations } from './openapi';
export { RefundService, type AbnormalRefundBody, type RefundBody } from './service';
export { RefundRepository, type RefundSearch, type RefundTally } from './repository';
export { createRefundActivities, type RefundActivities, type RefundActivityDeps } from './activities';
export { refundView } from './view';
export { REFUND_STATUSES, type RefundStatus } from './rules';
export { abnormalRefundSchema } from './schemas';
export type { Refund } from './model';
