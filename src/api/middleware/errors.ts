import type { NextFunction, Request, Response } from 'express';
import { AppError, INTERNAL_SYSTEM_MESSAGE } from '../../domain/errors';
import type { Logger } from '../../lib/logger';
import { sendError } from '../envelope';
import { bodyParserError } from './body';

export function notFound() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    next(new AppError('not_found', `no route for ${req.method} ${req.path}`));
  };
}

/** The one place an error becomes a response. Anything that is not an AppError is a 500. */
export function errorHandler(fallbackLogger: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(err);
    const log = (res.locals.log as Logger | undefined) ?? fallbackLogger;
    const known = err instanceof AppError ? err : bodyParserError(err);
    if (known) {
      if (known.httpStatus >= 500) log.error('request failed', { code: known.code, error: known.message });
      return sendError(res, known);
    }
    log.error('unexpected error', { error: err instanceof Error ? err.stack : String(err) });
    sendError(res, new AppError('internal_system', INTERNAL_SYSTEM_MESSAGE));
  };
}
