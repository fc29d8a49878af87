import type { Router } from 'express';
import { AppError } from '../../platform/errors';
import { type NotificationStatus } from './rules';
import { parsePage } from '../../platform/pagination';
import { NotificationRepository } from './repository';
import { notificationView } from './view';
import { resendStoredNotification } from './service';
import type { Client } from '@temporalio/client';
import type { CoreConfig } from '../../platform/config';
import type { Database } from '../../platform/db';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { listNotificationsQuery, resendNotificationBody } from './schemas';

function notFound(): AppError {
  return new AppError('notification_not_found', 'notification not found');
}

/** What the notification routes need (a resend starts the notification's workflow again). */
export interface NotificationRoutesDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  notifications: CoreConfig['notifications'];
  timeScale: number;
}

/** SPEC §6 (beyond the seed): notifications with their attempts, and resend. */
export function notificationRoutes(services: NotificationRoutesDeps): Router {
  const router = apiRouter();
  const repo = new NotificationRepository(services.db);

  router.get('/api/v1/notifications', async (req, res) => {
    const query = validate(listNotificationsQuery, req.query) as Record<string, string | undefined>;
    const page = parsePage(query);
    const rows = await repo.list(
      currentApp(res).appId,
      {
        tradeNo: query.trade_no,
        refundNo: query.refund_no,
        status: query.status ? (query.status as NotificationStatus) : undefined,
      },
      page,
    );
    sendData(res, { list: rows.map(notificationView), ...page });
  });

  router.post('/api/v1/notifications/:notificationId/resend', parseJsonBody(), async (req, res) => {
    validate(resendNotificationBody, req.body ?? null);
    const { appId } = currentApp(res);
    const notification = await repo.find(appId, pathValue(req.params, 'notificationId', 'notification_id'));
    if (!notification) throw notFound();
    await resendStoredNotification(services, notification);
    sendData(res, { notification_id: notification.notificationId, status: 'pending' });
  });

  return router;
}
