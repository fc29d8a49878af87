import type { NotificationRequest } from './rules';
import { NotificationRepository } from './repository';
import type { DeliveryAttempt, DeliveryResult } from './delivery';
import type { Database } from '../../platform/db';
import type { NotificationPublisher } from './service';

export type { DeliveryResult } from './delivery';

/** What the notifications module's activities need. */
export interface NotificationActivityDeps {
  db: Database;
  /** How an event becomes a merchant notification (./service.ts). */
  publisher: Pick<NotificationPublisher, 'publish'>;
  /** One attempt to deliver a stored notification (./delivery.ts). */
  deliver(input: DeliveryAttempt): Promise<DeliveryResult>;
}

/** The activities of the notifications module, under the names the worker registers them by. */
export type NotificationActivities = ReturnType<typeof createNotificationActivities>;

export function createNotificationActivities(deps: NotificationActivityDeps) {
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
