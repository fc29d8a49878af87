import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ChannelRegistry } from '../channels/registry';
import type { Config } from '../platform/config';
import type { Database } from '../platform/db';
import type { AppRepository } from '../modules/apps';
import type { Logger } from '../platform/logger';
import type { Keyring } from '../platform/crypto/keyring';
import { WorkerMetrics } from '../platform/worker-metrics';
import { createApplicationActivities } from '../modules/applications';
import { createCallbackActivities } from '../modules/callbacks';
import { createDiagnosticActivities } from '../diagnostics/activities';
import {
  createDelivery,
  createNotificationActivities,
  NotificationPublisher,
  type DeliveryAttempt,
  type DeliveryResult,
} from '../modules/notifications';
import { createPaymentActivities } from '../modules/orders';
import { createRefundActivities } from '../modules/refunds';
import { isPermanentDatabaseError, sqlStateOf } from '../platform/db/errors';

/** What the worker hands to createActivities; without metrics, its activities count into a registry of their own. */
export type WorkerActivityDeps = Omit<ActivityDeps, 'publisher' | 'deliver' | 'metrics'> & {
  metrics?: WorkerMetrics;
};

export interface ActivityDeps {
  db: Database;
  logger: Logger;
  /** For activities that start workflows (publishing a notification). */
  client: Client;
  taskQueue: string;
  apps: AppRepository;
  notifications: Config['notifications'];
  timeScale: number;
  channels: ChannelRegistry;
  /** Refuse notify_urls that resolve to loopback, private or link-local addresses (production). */
  guardAddresses: boolean;
  /** What the activities did, for the worker's `GET /metrics`. */
  metrics: WorkerMetrics;
  /** The keys that seal Temporal payloads and applicant data at rest (SPEC §7). */
  payloadKeys: Keyring;
  /** Built by createActivities: how every module's activities publish merchant notifications. */
  publisher: NotificationPublisher;
  /** Built by createActivities: one attempt to deliver a stored notification. */
  deliver(input: DeliveryAttempt): Promise<DeliveryResult>;
}

/** Every activity the worker serves, built around the dependencies handed in. */
export function createActivities(given: WorkerActivityDeps) {
  const base = { ...given, metrics: given.metrics ?? new WorkerMetrics() };
  const deliver = createDelivery({
    db: base.db,
    logger: base.logger,
    webhookSecret: (appId) => base.apps.webhookSecret(appId),
    timeoutMs: base.notifications.timeoutMs,
    guardAddresses: base.guardAddresses,
    metrics: base.metrics,
  });
  const publisher = new NotificationPublisher({
    db: base.db,
    client: base.client,
    taskQueue: base.taskQueue,
    retryScheduleMs: base.notifications.retryScheduleMs,
    timeScale: base.timeScale,
    deliver,
  });
  const deps: ActivityDeps = { ...base, publisher, deliver };
  return failingPermanentDatabaseErrors(deps.logger, {
    ...createDiagnosticActivities(deps),
    ...createNotificationActivities(deps),
    ...createPaymentActivities(deps),
    ...createRefundActivities(deps),
    ...createApplicationActivities(deps),
    ...createCallbackActivities(deps),
  });
}

/**
 * A database failure no retry can mend (a constraint, a check, a type: platform/db/errors.ts)
 * fails its activity at once, as `internal_system`, instead of being retried for ever and
 * wedging the workflow that waits for it; the workflow decides what the failed step means.
 * Activities that know what such a failure means for a client (a merchant_refund_no used twice)
 * say so themselves first. The message names the activity and the SQLSTATE, never SQL or values.
 *
 * Not the polls and queries (`await…`, `query…`): they only read, and a workflow takes their
 * failure for "the channel did not answer" (a refund followed to `failed`, its amount free
 * again), which a database that refuses a read must never make of a refund the channel made.
 * They go on retrying, visibly, until the database is mended.
 */
export function failingPermanentDatabaseErrors<
  T extends Record<string, (...args: never[]) => Promise<unknown>>,
>(logger: Logger, activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    if (/^(await|query)[A-Z]/.test(name)) {
      wrapped[name] = fn;
      continue;
    }
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        if (err instanceof ApplicationFailure || !isPermanentDatabaseError(err)) throw err;
        const sqlState = sqlStateOf(err);
        logger.error('a database write failed for good; its step fails', {
          activity: name,
          sql_state: sqlState,
        });
        throw ApplicationFailure.nonRetryable(
          `the database refused ${name} (SQLSTATE ${sqlState}); it cannot succeed when tried again`,
          'internal_system',
        );
      }
    };
  }
  return wrapped as T;
}

export type Activities = ReturnType<typeof createActivities>;
