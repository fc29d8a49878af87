// The notifications module's public surface: what other modules, the worker and the API use to
// publish and deliver merchant notifications. Workflow code imports ./messages instead.
export { notificationRoutes, type NotificationRoutesDeps } from './routes';
export { notificationOperations } from './openapi';
export {
  createNotificationActivities,
  type NotificationActivities,
  type NotificationActivityDeps,
} from './activities';
export { createDelivery, type DeliveryAttempt, type DeliveryResult } from './delivery';
export {
  NotificationPublisher,
  resendStoredNotification,
  type NotificationPublisherDeps,
  type NotificationResendDeps,
} from './service';
export { NotificationRepository, type NotificationSearch } from './repository';
export { notificationView, type NotificationView } from './view';
export type { Notification, NotificationAttempt } from './model';
export {
  NOTIFICATION_EVENTS,
  NOTIFICATION_STATUSES,
  type NotificationEvent,
  type NotificationRequest,
  type NotificationStatus,
} from './rules';
