// The composition root of activities (as src/workflows is of workflows): every module's
// activities, built from the dependencies each names, under the names the worker registers.
// Modules know nothing of one another's activities; only this file puts them together.
import type { Client } from '@temporalio/client';
import type { ChannelRegistry } from '../channels/registry';
import type { Config } from '../config';
import type { Database } from '../platform/db';
import type { Keyring } from '../platform/crypto/keyring';
import type { Logger } from '../platform/logger';
import { WorkerMetrics } from '../platform/worker-metrics';
import { createDiagnosticActivities, type DiagnosticActivities } from '../diagnostics/activities';
import { createApplicationActivities, type ApplicationActivities } from '../modules/applications';
import type { AppRepository } from '../modules/apps';
import { createCallbackActivities, type CallbackActivities } from '../modules/callbacks';
import { createComplaintActivities, type ComplaintActivities } from '../modules/complaints';
import { createContractActivities, type ContractActivities } from '../modules/contracts';
import { createMerchantActivities, type MerchantActivities } from '../modules/merchants';
import {
  createDelivery,
  createNotificationActivities,
  NotificationPublisher,
  type NotificationActivities,
} from '../modules/notifications';
import {
  createPaymentActivities,
  OrderService,
  type OrderActivities,
  type OrderServiceDeps,
} from '../modules/orders';
import { createRefundActivities, type RefundActivities } from '../modules/refunds';
import { createReconciliationActivities, type ReconciliationActivities } from '../modules/reconciliation';
import { createTransferActivities, type TransferActivities } from '../modules/transfers';
import { failingPermanentDatabaseErrors } from './permanent-database-errors';

export { failingPermanentDatabaseErrors } from './permanent-database-errors';

/** What the worker hands to createActivities; without metrics, its activities count into a registry of their own. */
export interface ActivitiesDeps {
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
  metrics?: WorkerMetrics;
  /** The keys that seal Temporal payloads and applicant data at rest (SPEC §7). */
  payloadKeys: Keyring;
  /**
   * How the orders a worker makes itself (a contract's deductions, SPEC §17) are made: the
   * same settings as the API's orders.
   */
  orders: Pick<
    OrderServiceDeps,
    | 'publicBaseUrl'
    | 'defaultChannel'
    | 'profitShareDelayMs'
    | 'orderIdleEndMs'
    | 'requestTimeoutMs'
    | 'barcodeWaitMs'
  >;
}

/**
 * Every activity the worker serves: what each module's workflows call. The order workflow's
 * refund steps (orders' OrderRefundActivities) are served by the refunds module, which keeps the
 * refunds' rows; building this type from both checks that refunds serves what orders names.
 */
export type Activities = OrderActivities &
  RefundActivities &
  NotificationActivities &
  ApplicationActivities &
  MerchantActivities &
  CallbackActivities &
  ReconciliationActivities &
  TransferActivities &
  ComplaintActivities &
  ContractActivities &
  DiagnosticActivities;

/** Every activity the worker serves, built around the dependencies handed in. */
export function createActivities(given: ActivitiesDeps): Activities {
  const metrics = given.metrics ?? new WorkerMetrics();
  // Built once and shared: how every module's activities publish merchant notifications.
  const deliver = createDelivery({
    db: given.db,
    logger: given.logger,
    webhookSecret: (appId) => given.apps.webhookSecret(appId),
    timeoutMs: given.notifications.timeoutMs,
    guardAddresses: given.guardAddresses,
    metrics,
  });
  const publisher = new NotificationPublisher({
    db: given.db,
    client: given.client,
    taskQueue: given.taskQueue,
    retryScheduleMs: given.notifications.retryScheduleMs,
    timeScale: given.timeScale,
    deliver,
  });
  const { db, logger, channels, payloadKeys, timeScale } = given;
  const activities = {
    ...createDiagnosticActivities({ db }),
    ...createNotificationActivities({ db, publisher, deliver }),
    ...createPaymentActivities({ db, logger, channels, metrics, timeScale, publisher, payloadKeys }),
    ...createRefundActivities({ db, logger, channels, metrics, payloadKeys, publisher }),
    ...createApplicationActivities({ db, logger, channels, payloadKeys, publisher }),
    ...createMerchantActivities({ db, logger, channels, payloadKeys, publisher, timeScale }),
    ...createCallbackActivities({ db, logger, metrics }),
    ...createTransferActivities({ db, logger, channels, metrics, payloadKeys, publisher }),
    ...createComplaintActivities({
      db,
      logger,
      channels,
      payloadKeys,
      publisher,
      client: given.client,
      taskQueue: given.taskQueue,
      timeScale,
    }),
    ...createContractActivities({
      db,
      logger,
      channels,
      payloadKeys,
      publisher,
      timeScale,
      orders: new OrderService({
        db,
        client: given.client,
        taskQueue: given.taskQueue,
        timeScale,
        channels,
        payloadKeys,
        ...given.orders,
      }),
    }),
    ...createReconciliationActivities({
      db,
      logger,
      channels,
      payloadKeys,
      metrics,
      publisher,
      client: given.client,
      taskQueue: given.taskQueue,
      timeScale,
    }),
  };
  return failingPermanentDatabaseErrors(logger, activities);
}
