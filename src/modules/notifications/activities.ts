import type { NotificationRequest } from './rules';
import { NotificationRepository } from './repository';
import type { DeliveryAttempt, DeliveryResult } from './delivery';
import type { ActivityDeps } from '../../worker/activities';

export type { DeliveryResult } from './delivery';

export function createNotificationActivities(deps: ActivityDeps) {
  const repo = new NotificationRepository(deps.db);

  return {
    /**
     * The one way an event becomes a merchant notification: store it (once per event key),
     * make its first attempt and start its delivery workflow. Safe to call again: the same
     * event yields the same id.
     */
    async publishNotification(req: NotificationRequest): Promise<string> {
      return deps.publisher.publish(req);
    },

    async beginNotificationSeries(input: { notificationId: string; token: string }): Promise<number> {
      return repo.beginSeries(input.notificationId, input.token);
    },

    /** One delivery attempt (./delivery.ts); only database failures throw. */
    async deliverNotification(input: DeliveryAttempt): Promise<DeliveryResult> {
      return deps.deliver(input);
    },
  };
}
