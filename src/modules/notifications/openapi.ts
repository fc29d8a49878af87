// The notification operations of the OpenAPI document, beside the routes that serve them; the
// webhooks durapay posts are described by the API with the shared resource schemas.
import { type ApiOperation } from '../../platform/http/openapi';
import { listNotificationsQuery, resendNotificationBody } from './schemas';

export const notificationOperations: ApiOperation[] = [
  {
    method: 'get',
    path: '/api/v1/notifications',
    operationId: 'listNotifications',
    tag: 'Notifications',
    summary: 'List notifications with their attempts',
    description: 'Newest first, with every recorded delivery attempt (time, HTTP status, latency, error).',
    scope: 'payments',
    query: listNotificationsQuery,
    data: 'NotificationPage',
    errors: { 400: ['invalid_param'] },
  },
  {
    method: 'post',
    path: '/api/v1/notifications/{notificationId}/resend',
    operationId: 'resendNotification',
    tag: 'Notifications',
    summary: 'Deliver a notification again',
    description: 'Starts a fresh series of attempts with the same `webhook-id`.',
    scope: 'payments',
    pathParameters: [
      {
        name: 'notificationId',
        description: 'The `notification_id`.',
        example: 'ntf_01JD4W6Y7Z8A9B0C1D2E3F4G5H',
      },
    ],
    body: { name: 'ResendNotificationRequest', schema: resendNotificationBody, required: false },
    data: 'ResentNotification',
    errors: { 400: ['invalid_param'], 404: ['notification_not_found'] },
  },
];
