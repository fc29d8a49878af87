import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Database } from '../db';

/** What the business routes work with: the read model and the Temporal client. */
export interface ApiServices {
  db: Database;
  client: Client;
  taskQueue: string;
  notifications: Config['notifications'];
  timeScale: number;
}
