import type { Client } from '@temporalio/client';
import type { ChannelRegistry } from '../channels/registry';
import type { Config } from '../config';
import type { Database } from '../db';

/** What the business routes work with: the read model and the Temporal client. */
export interface ApiServices {
  db: Database;
  client: Client;
  taskQueue: string;
  notifications: Config['notifications'];
  timeScale: number;
  channels: ChannelRegistry;
  /** How channels reach this service (their callbacks). */
  publicBaseUrl: string;
  defaultChannel: string;
  profitShareDelayMs: number;
  /** The deadline of work done inside one request (workflow updates that call a channel). */
  requestTimeoutMs: number;
}
