import { Client, Connection } from '@temporalio/client';
import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import { SEARCH_ATTRIBUTE_KEYS } from './workflow/definitions';
import type { Logger } from './logger';
import type { Keyring } from './crypto/keyring';
import { sealedDataConverter } from './data-converter';

export interface TemporalTarget {
  address: string;
  namespace: string;
}

export async function connectClient(
  target: TemporalTarget,
  keyring: Keyring,
): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect({ address: target.address });
  return {
    connection,
    client: new Client({
      connection,
      namespace: target.namespace,
      dataConverter: sealedDataConverter(keyring),
    }),
  };
}

/** Polls the server until it answers or the deadline passes; a freshly started dev server needs a moment. */
export async function waitForTemporal(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`Temporal at ${address} did not answer within ${timeoutMs} ms: ${String(lastError)}`);
}

/**
 * Registers SPEC §7's search attributes in the namespace when they are missing. The dev
 * server gets them on its command line; a production server gets them here, at worker start.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = SEARCH_ATTRIBUTE_KEYS.filter((k) => !known.has(k.name));
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    // 2 = INDEXED_VALUE_TYPE_KEYWORD
    searchAttributes: Object.fromEntries(missing.map((k) => [k.name, 2])),
  });
  return missing.map((k) => k.name);
}

const LEVELS: Record<LogLevel, 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'debug',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Sends the Temporal SDK's logs (worker, workflow and activity loggers) through winston. */
export class WinstonTemporalLogger implements TemporalLogger {
  constructor(
    private readonly logger: Logger,
    /** Logs every INFO line at debug: the workflow bundler's build report is noise at start-up. */
    private readonly quietInfo = false,
  ) {}
  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const mapped = this.quietInfo && level === 'INFO' ? 'debug' : LEVELS[level];
    // winston formats a line before its transport drops it for its level: the SDK's debug lines
    // (every workflow and activity start and end) cost the worker measurable CPU for nothing.
    if (!this.logger.isLevelEnabled(mapped)) return;
    this.logger.log(mapped, message, meta as Record<string, unknown> | undefined);
  }
  trace(message: string, meta?: LogMetadata) {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata) {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata) {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata) {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata) {
    this.log('ERROR', message, meta);
  }
}
