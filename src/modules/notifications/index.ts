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
export { NotificationPublisher, type NotificationPublisherDeps } from './service';
export type { NotificationEvent, NotificationRequest } from './rules';
