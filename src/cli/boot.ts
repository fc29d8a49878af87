import type { Config } from '../config';
import { createLogger, type Logger } from '../platform/logger';
import { loadCliConfig } from './config';

/** The configuration and a logger for a command that runs a part of the gateway or reaches its database. */
export function boot(role: string): { config: Config; logger: Logger } {
  const config = loadCliConfig();
  return {
    config,
    logger: createLogger({ level: config.logLevel, defaultMeta: { service: 'durapay', role } }),
  };
}
