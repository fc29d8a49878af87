import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';

import { roleAllows, type OperatorRole } from '../operators';

export { OPERATOR_ROLES, roleAllows, type OperatorRole } from '../operators';

/** The operator signed in on a console request, set by the console's session check. */
export interface ConsoleOperator {
  operatorId: string;
  username: string;
  role: OperatorRole;
}

/** One operator action, as the audit log keeps it (who, when and the client address are added). */
export interface AuditInput {
  /** What was done, `<noun>.<verb>`: `order.close`, `refund.create`, `notification.resend`, … */
  action: string;
  /** What it was done to: `order`, `refund`, `transfer`, `notification`, `mismatch`, `app`, `operator`, … */
  targetType: string;
  targetId: string;
  /** The target as it was before, and after (views, never secrets); absent when there is none. */
  before?: unknown;
  after?: unknown;
  /** `succeeded` (default), or `refused` with the error code the operator was answered. */
  outcome?: 'succeeded' | 'refused';
  errorCode?: string;
}

/** Set on `res.locals.console` by the session check for every request past it. */
export interface ConsoleRequestContext {
  operator: ConsoleOperator;
  audit: (entry: AuditInput) => Promise<void>;
}

function context(res: Response): ConsoleRequestContext {
  const ctx = (res.locals as { console?: ConsoleRequestContext }).console;
  if (!ctx) throw new Error('route is not behind the console session check');
  return ctx;
}

/** The operator of a request that passed the console's session check. */
export function currentOperator(res: Response): ConsoleOperator {
  return context(res).operator;
}

/** Appends one entry to the audit log for this request's operator and client address. */
export function audit(res: Response, entry: AuditInput): Promise<void> {
  return context(res).audit(entry);
}

/**
 * Runs an operator's action; when it fails, the refusal goes to the audit log, with the code the
 * operator is answered (`internal_system` for anything not an AppError), before the error goes
 * on. A refusal that cannot be written is logged; the operator still gets the refusal itself.
 */
export async function refusalsAudited<T>(
  res: Response,
  work: () => Promise<T>,
  entry: () => Promise<Omit<AuditInput, 'outcome' | 'errorCode'>>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const errorCode = err instanceof AppError ? err.code : 'internal_system';
    let what: Omit<AuditInput, 'outcome' | 'errorCode'> | undefined;
    try {
      what = await entry();
      await audit(res, { ...what, outcome: 'refused', errorCode });
    } catch (auditErr) {
      (res.locals.log as Logger).error('could not record a refused console action', {
        action: what?.action,
        target_id: what?.targetId,
        error: auditErr instanceof Error ? auditErr.message : String(auditErr),
      });
    }
    throw err;
  }
}

/**
 * Refuses (403 permission_denied) an operator whose role is below `needed`; the attempt is
 * written to the audit log, as every refused action is.
 */
export function requireRole(needed: OperatorRole): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const { role } = currentOperator(res);
    if (roleAllows(role, needed)) return next();
    const refusal = new AppError('permission_denied', `this needs the role ${needed}; you are ${role}`);
    if (req.method === 'GET' || req.method === 'HEAD') return next(refusal);
    audit(res, {
      action: 'permission.denied',
      targetType: 'route',
      targetId: `${req.method} ${req.originalUrl.split('?')[0]}`,
      outcome: 'refused',
      errorCode: 'permission_denied',
    }).then(
      () => next(refusal),
      (err: unknown) => next(err),
    );
  };
}
