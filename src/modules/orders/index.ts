// The orders module's public surface: what other modules and the API may use. Workflow code
// imports the workflow-safe ./messages and ./rules instead.
export { paymentRoutes } from './routes';
export { closeOrderSchema, createOrderSchema } from './schemas';
export { OrderService, type OrderCallbackSubject, type OrderServiceDeps } from './service';
export { createPaymentActivities, subMerchantOf, tradeContext } from './activities';
export { OrderRepository } from './repository';
export { PaymentSweeper, sweepTickMs, type PaymentSweeperDeps, type SweepResult } from './sweeper';
export { refundRefusal, REFUND_EXCEEDS, PAYMENT_POLL_SCHEDULE_MS, pollGap } from './rules';
export type { RefundRequest, RefundResult } from './messages';
export { toAppError } from './outcomes';
export { orderWorkflowIdOf } from './service';
export type { Order } from './model';
