import type { Database } from '../db';
import type { Logger } from '../lib/logger';
import { createDiagnosticActivities } from './diagnostic';

export interface ActivityDeps {
  db: Database;
  logger: Logger;
}

/** Every activity the worker serves, built around the dependencies handed in. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createDiagnosticActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
