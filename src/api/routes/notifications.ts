import type { Router } from 'express';
import Joi from 'joi';
import { AppError } from '../../domain/errors';
import { NOTIFICATION_STATUSES, type NotificationStatus } from '../../domain/notifications';
import { parsePage } from '../../domain/pagination';
import { scaleDuration } from '../../domain/durations';
import { NotificationRepository, notificationView } from '../../db/repositories/notifications';
import { resendNotification } from '../../lib/notification-starter';
import type { ApiServices } from '../services';
import { sendData } from '../envelope';
import { currentApp } from '../middleware/authenticate';
import { parseJsonBody } from '../middleware/body';
import { lenientQueryValue, pathValue, validate } from '../validation';
import { apiRouter } from '../router';

const listQuery = Joi.object({
  trade_no: Joi.string().min(1).max(64),
  refund_no: Joi.string().min(1).max(64),
  status: Joi.string()
    .valid(...NOTIFICATION_STATUSES)
    .allow(''),
  // Read leniently, as the merchant list reads them (SPEC §5.3).
  limit: lenientQueryValue,
  offset: lenientQueryValue,
});

const resendBody = Joi.object({}).allow(null);

function notFound(): AppError {
  return new AppError('notification_not_found', 'notification not found');
}

/** SPEC §6 (beyond the seed): notifications with their attempts, and resend. */
export function notificationRoutes(services: ApiServices): Router {
  const router = apiRouter();
  const repo = new NotificationRepository(services.db);

  router.get('/api/v1/notifications', async (req, res) => {
    const query = validate(listQuery, req.query) as Record<string, string | undefined>;
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
    validate(resendBody, req.body ?? null);
    const { appId } = currentApp(res);
    const notification = await repo.find(appId, pathValue(req.params, 'notificationId', 'notification_id'));
    if (!notification) throw notFound();
    await resendNotification({
      client: services.client,
      taskQueue: services.taskQueue,
      input: {
        notificationId: notification.notificationId,
        appId,
        gapsMs: services.notifications.retryScheduleMs.map((ms) => scaleDuration(ms, services.timeScale)),
      },
      tradeNo: notification.tradeNo,
    });
    sendData(res, { notification_id: notification.notificationId, status: 'pending' });
  });

  return router;
}
