// The worker's workflow bundle entry point: every workflow type the worker serves.
export { benchFloorWorkflow } from './bench-floor';
export { diagnosticWorkflow } from './diagnostic';
export { notificationWorkflow } from './notification';
export { orderWorkflow } from './order';
export { refundWorkflow } from './refund';
export { merchantApplicationWorkflow } from './merchant-application';
