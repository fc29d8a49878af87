import type { Response } from 'express';
import { ConnectionError, DatabaseError, TimeoutError, ValidationError } from 'sequelize';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { MerchantExistsError } from './repository';

export function merchantNotFound(): AppError {
  return new AppError('order_not_found', 'merchant not found', 404);
}

export function log(res: Response): Logger {
  return res.locals.log as Logger;
}

/**
 * The merchant endpoints answer a failed database call with `500 database_error` (seed 4.3)
 * and a sentence of their own: never SQL, never a driver's message.
 */
export function databaseError(res: Response, err: unknown, what: string): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof MerchantExistsError) return new AppError('database_error', err.message);
  log(res).error(`could not ${what}`, { error: err instanceof Error ? err.stack : String(err) });
  if (err instanceof ConnectionError || err instanceof TimeoutError) {
    return new AppError('database_error', `could not ${what}: the database is not reachable`);
  }
  if (err instanceof ValidationError || err instanceof DatabaseError) {
    return new AppError('database_error', `could not ${what}: the database refused the request`);
  }
  return new AppError('database_error', `could not ${what}`);
}
