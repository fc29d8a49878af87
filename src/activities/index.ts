import type { Client } from '@temporalio/client';
import type { ChannelRegistry } from '../channels/registry';
import type { Config } from '../config';
import type { Database } from '../db';
import type { AppRepository } from '../db/repositories/apps';
import type { Logger } from '../lib/logger';
import { createApplicationActivities } from './applications';
import { createDiagnosticActivities } from './diagnostic';
import { createNotificationActivities } from './notifications';
import { createPaymentActivities } from './payments';

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
}

/** Every activity the worker serves, built around the dependencies handed in. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createDiagnosticActivities(deps),
    ...createNotificationActivities(deps),
    ...createPaymentActivities(deps),
    ...createApplicationActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
