import { ConnectionError, TimeoutError } from 'sequelize';
import type { NextFunction, Request, Response } from 'express';
import { AppError, INTERNAL_SYSTEM_MESSAGE } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { sendError } from '../../platform/http/envelope';
import { bodyParserError } from '../../platform/http/body';

export function notFoundError(req: Request): AppError {
  const path = req.path.length > 200 ? `${req.path.slice(0, 200)}…` : req.path;
  return new AppError('not_found', `no route for ${req.method} ${path}`);
}

export function notFound() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    next(notFoundError(req));
  };
}

/**
 * A path value that does not decode as percent-encoded UTF-8 (`%zz`, `%C0%AF`): the router
 * throws a URIError while matching, before any handler runs.
 */
function undecodablePath(err: unknown): AppError | undefined {
  if (!(err instanceof URIError)) return undefined;
  return new AppError('invalid_param', 'a path value is not valid percent-encoded UTF-8');
}

/** What an error was caused by, innermost last (gRPC codes included), for the log only. */
function causesOf(err: unknown): string[] {
  const out: string[] = [];
  for (
    let e = (err as { cause?: unknown } | null)?.cause;
    e && out.length < 5;
    e = (e as { cause?: unknown }).cause
  ) {
    const { name, message, code } = e as { name?: unknown; message?: unknown; code?: unknown };
    out.push(`${String(name)}: ${String(message)}${code === undefined ? '' : ` (code ${String(code)})`}`);
  }
  return out;
}

/**
 * The database did not answer (a restart, an outage): the request may be sent again as it is.
 * Logged, and answered with a sentence of ours, never the driver's.
 */
function databaseUnreachable(err: unknown): AppError | undefined {
  if (!(err instanceof ConnectionError || err instanceof TimeoutError)) return undefined;
  return new AppError('internal_system', 'the database is not reachable right now; send the request again');
}

/** The one place an error becomes a response. Anything that is not an AppError is a 500. */
export function errorHandler(fallbackLogger: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(err);
    const log = (res.locals.log as Logger | undefined) ?? fallbackLogger;
    const known =
      err instanceof AppError
        ? err
        : (bodyParserError(err) ?? undecodablePath(err) ?? databaseUnreachable(err));
    if (known) {
      if (known.httpStatus >= 500) {
        log.error('request failed', {
          code: known.code,
          error: known.message,
          ...(known === err ? {} : { cause: err instanceof Error ? err.message : String(err) }),
        });
      }
      return sendError(res, known);
    }
    log.error('unexpected error', {
      error: err instanceof Error ? err.stack : String(err),
      causes: causesOf(err),
    });
    sendError(res, new AppError('internal_system', INTERNAL_SYSTEM_MESSAGE));
  };
}
