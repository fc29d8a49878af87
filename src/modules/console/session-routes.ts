import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { sendData } from '../../platform/http/envelope';
import { parseJsonBody } from '../../platform/http/body';
import { validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { operatorView, type OperatorService } from '../operators';
import { actorOf, currentSession, sessionCheck, sessionToken, SESSION_COOKIE } from './session-check';

/** `POST /console/api/session`'s body. */
export const signInBody = Joi.object({
  username: Joi.string().min(1).max(64).required(),
  password: Joi.string().min(1).max(256).required(),
  totp_code: Joi.string().max(16),
});

export interface SessionRouteOptions {
  sessionMaxMs: number;
  /** The cookie's `Secure` flag: everywhere but development. */
  secureCookie: boolean;
}

/** Sign-in, the session of the cookie, sign-out (SPEC §12). Mounted at /console/api. */
export function sessionRoutes(operators: OperatorService, options: SessionRouteOptions): Router {
  const router = apiRouter();
  const cookie = {
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: options.secureCookie,
    path: '/console',
  };
  const clearCookie = (res: Response) => res.clearCookie(SESSION_COOKIE, cookie);

  router.post('/session', parseJsonBody(), async (req: Request, res: Response) => {
    const body = validate(signInBody, req.body ?? null) as {
      username: string;
      password: string;
      totp_code?: string;
    };
    const signedIn = await operators.signIn({
      username: body.username,
      password: body.password,
      totpCode: body.totp_code,
      clientIp: req.ip ?? 'unknown',
      userAgent: req.get('user-agent'),
      requestId: res.locals.requestId as string | undefined,
    });
    res.cookie(SESSION_COOKIE, signedIn.token, { ...cookie, maxAge: options.sessionMaxMs });
    sendData(res, { operator: operatorView(signedIn.operator), csrf_token: signedIn.csrfToken });
  });

  const check = sessionCheck(operators);
  router.get('/session', check, (_req, res) => {
    const session = currentSession(res);
    sendData(res, { operator: operatorView(session.operator), csrf_token: session.csrfToken });
  });
  router.delete('/session', check, async (req, res) => {
    const session = currentSession(res);
    await operators.signOut(actorOf(req, res, session), session);
    clearCookie(res);
    sendData(res, { signed_out: true });
  });
  router.post('/session/sign-out-everywhere', check, parseJsonBody(), async (req, res) => {
    const session = currentSession(res);
    const ended = await operators.signOutEverywhere(actorOf(req, res, session), session.operator.operatorId);
    clearCookie(res);
    sendData(res, { sessions_ended: ended });
  });
  // Cookie-less requests to any other console path are answered by the session check itself.
  void sessionToken;
  return router;
}
