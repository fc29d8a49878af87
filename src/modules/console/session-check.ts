import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { parse as parseCookie } from 'cookie';
import { AppError } from '../../platform/errors';
import { csrfTokenMatches, type ActiveSession, type Actor, type OperatorService } from '../operators';
import type { ConsoleRequestContext } from './guard';

/** The console's session cookie: scoped to /console, never sent to /api/v1. */
export const SESSION_COOKIE = 'durapay_console';
export const CSRF_HEADER = 'X-CSRF-Token';

const SAFE_METHODS = new Set(['GET', 'HEAD']);

export function sessionToken(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  try {
    return parseCookie(header)[SESSION_COOKIE];
  } catch {
    return undefined;
  }
}

/**
 * Why a change may have come from another site, or undefined: its `Origin` is not this host's
 * own, or (a browser that sent no Origin) its `Sec-Fetch-Site` says another site. A client that
 * is not a browser sends neither; the CSRF token still guards it.
 */
export function crossOriginProblem(req: Request): string | undefined {
  const origin = req.get('origin');
  if (origin !== undefined) {
    // req.host and req.protocol are what a proxy named in TRUST_PROXY was reached by (its
    // X-Forwarded-Host and -Proto); without one, this server's own Host and scheme.
    const own = `${req.protocol}://${req.host ?? ''}`;
    return origin === own ? undefined : `a change from the origin ${origin.slice(0, 100)} is refused`;
  }
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none')
    return `a change from a ${site} page is refused`;
  return undefined;
}

/** Refuses changes from other origins (the sign-in too, which has no session yet). */
export function sameOriginChanges(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const problem = crossOriginProblem(req);
    next(problem ? new AppError('permission_denied', problem) : undefined);
  };
}

export function actorOf(req: Request, res: Response, session?: ActiveSession): Actor {
  return {
    operatorId: session?.operator.operatorId ?? null,
    username: session?.operator.username ?? 'anonymous',
    clientIp: req.ip,
    requestId: res.locals.requestId as string | undefined,
  };
}

/**
 * Every console request past this point has a live session: the operator (role read afresh on
 * each request), and for a change, the session's CSRF token in `X-CSRF-Token`.
 */
export function sessionCheck(operators: OperatorService): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const session = await operators.session(sessionToken(req));
      if (!session)
        throw new AppError('unauthorized', 'sign in to the console first (no session, or it ended)');
      if (!SAFE_METHODS.has(req.method) && !csrfTokenMatches(session, req.get(CSRF_HEADER)))
        throw new AppError('permission_denied', `"${CSRF_HEADER}" is missing or is not this session's`);
      const actor = actorOf(req, res, session);
      const ctx: ConsoleRequestContext & { session: ActiveSession } = {
        operator: {
          operatorId: session.operator.operatorId,
          username: session.operator.username,
          role: session.operator.role,
        },
        audit: (entry) =>
          operators.record(actor, {
            action: entry.action,
            targetType: entry.targetType,
            targetId: entry.targetId,
            before: entry.before,
            after: entry.after,
            outcome: entry.outcome ?? 'succeeded',
            errorCode: entry.errorCode,
          }),
        session,
      };
      res.locals.console = ctx;
      next();
    } catch (err) {
      next(err);
    }
  };
}

export function currentSession(res: Response): ActiveSession {
  const ctx = res.locals.console as { session?: ActiveSession } | undefined;
  if (!ctx?.session) throw new Error('route is not behind the console session check');
  return ctx.session;
}
