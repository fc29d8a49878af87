import type { Router } from 'express';
import { AppError } from '../../platform/errors';
import { apiRouter } from '../../platform/http/router';
import { OperatorService, type OperatorServiceDeps } from '../operators';
import { adminRoutes } from './admin-routes';
import { sameOriginChanges, sessionCheck } from './session-check';
import { sessionRoutes } from './session-routes';
import { consoleStatic } from './static';

export interface ConsoleDeps extends OperatorServiceDeps {
  consoleSettings: OperatorServiceDeps['consoleSettings'] & { secureCookie: boolean };
  /** The built single-page app (console/dist). */
  distDir: string;
}

/**
 * The operator console (SPEC §12): its JSON API at /console/api — reached only with a console
 * session, never with an app's signature — and its single-page app at /console. `data` are the
 * routes of the business pages, mounted behind the session check.
 */
export function consoleRoutes(deps: ConsoleDeps, data: Router[] = []): Router {
  const operators = new OperatorService(deps);
  const router = apiRouter();
  const api = apiRouter();
  api.use((_req, res, next) => {
    // Operators' data: never kept by a browser or a proxy.
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  api.use(sameOriginChanges());
  api.use(sessionRoutes(operators, deps.consoleSettings));
  api.use(sessionCheck(operators));
  api.use(adminRoutes(operators));
  for (const routes of data) api.use(routes);
  api.use((req, _res, next) =>
    next(new AppError('not_found', `no console route ${req.method} ${req.baseUrl}${req.path}`, 404)),
  );
  router.use('/console/api', api);
  router.use(consoleStatic(deps.distDir));
  return router;
}
