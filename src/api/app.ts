import express, { type Express, type Router } from 'express';
import type { Scope } from '../domain/apps';
import type { Logger } from '../lib/logger';
import { authenticate, type AuthDeps } from './middleware/authenticate';
import { captureRawBody, refuseEncodedBodies } from './middleware/body';
import { errorHandler, notFound, notFoundError } from './middleware/errors';
import { requestContext } from './middleware/request-context';
import { healthRoutes, type ReadinessProbes } from './routes/health';
import { applicationRoutes } from './routes/applications';
import { callbackRoutes } from './routes/callbacks';
import { merchantRoutes } from './routes/merchants';
import { notificationRoutes } from './routes/notifications';
import { paymentRoutes } from './routes/payments';
import type { ApiServices } from './services';

export interface ApiDeps {
  logger: Logger;
  readiness: ReadinessProbes;
  auth: AuthDeps;
  services: ApiServices;
  /** The sandbox channel's simulated upstream, mounted at /sandbox when enabled. */
  sandbox?: Router;
}

/** Every path an app calls, with the scope it needs (SPEC §2); each needs a signed request. */
export const APP_API_SCOPES: Readonly<Record<string, Scope>> = {
  '/api/v1/pay': 'payments',
  '/api/v1/notifications': 'payments',
  '/api/v1/merchant': 'merchants',
};

export function createApp(deps: ApiDeps): Express {
  const app = express();
  // Before the first app.use: Express builds its router with the settings of that moment.
  app.set('case sensitive routing', true);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);
  app.use(requestContext(deps.logger));
  // Express would answer OPTIONS itself, in plain text; durapay has no OPTIONS routes (no CORS).
  app.use((req, _res, next) => next(req.method === 'OPTIONS' ? notFoundError(req) : undefined));
  // Channel callbacks read their own bodies and answer `fail` to anything wrong (SPEC §4).
  app.use(callbackRoutes(deps.services));
  app.use(refuseEncodedBodies());
  // The simulated upstream reads its own bodies (uploads exceed the API's 1 MiB JSON limit).
  if (deps.sandbox) app.use('/sandbox', deps.sandbox);
  app.use(captureRawBody());
  app.use(healthRoutes(deps.readiness));
  for (const [prefix, scope] of Object.entries(APP_API_SCOPES)) {
    app.use(prefix, authenticate(deps.auth, scope));
  }
  app.use(paymentRoutes(deps.services));
  app.use(merchantRoutes(deps.services));
  app.use(applicationRoutes(deps.services));
  app.use(notificationRoutes(deps.services));
  app.use(notFound());
  app.use(errorHandler(deps.logger));
  return app;
}
