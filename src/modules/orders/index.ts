// The orders module's public surface: what other modules and the API may use. Workflow code
// imports the workflow-safe ./messages and ./rules instead.
export { paymentRoutes } from './routes';
export { paymentOperations } from './openapi';
export { OrderService, type OrderCallbackSubject, type OrderServiceDeps } from './service';
export {
  createPaymentActivities,
  accountContextOf,
  tradeContext,
  type ChannelRefund,
  type NewRefund,
  type OrderActivities,
  type OrderActivityDeps,
  type OrderRefundActivities,
  type RefundOutcome,
} from './activities';
export {
  OrderRepository,
  SHARE_STEP_KINDS,
  type OrderSearch,
  type OrderTally,
  type ShareStep,
} from './repository';
export { orderView } from './view';
export { ORDER_STATUSES, isPaidStatus, CHECKOUT_PAY_METHOD, type OrderStatus } from './rules';
export { resealSavedStates, savedStatesSealedWith } from './saved-states';
export { PaymentSweeper, sweepTickMs, type PaymentSweeperDeps, type SweepResult } from './sweeper';
export { MAX_AMOUNT, refundRefusal, REFUND_EXCEEDS, PAYMENT_POLL_SCHEDULE_MS, pollGap } from './rules';
export { orderWorkflowId, refundWorkflowId, type RefundRequest, type RefundResult } from './messages';
export { toAppError } from './outcomes';
export { orderWorkflowIdOf, signalOrderPayment } from './service';
export type { Order } from './model';
