import express, { type Express, type Router } from 'express';
import type { Logger } from '../lib/logger';
import { authenticate, type AuthDeps } from './middleware/authenticate';
import { captureRawBody } from './middleware/body';
import { errorHandler, notFound } from './middleware/errors';
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

/** Every path an app calls; each needs a signed request (SPEC §2). */
export const APP_API_PREFIXES = ['/api/v1/pay', '/api/v1/notifications', '/api/v1/merchant'];

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);
  app.use(requestContext(deps.logger));
  // The simulated upstream reads its own bodies (uploads exceed the API's 1 MiB JSON limit).
  if (deps.sandbox) app.use('/sandbox', deps.sandbox);
  app.use(captureRawBody());
  app.use(healthRoutes(deps.readiness));
  app.use(callbackRoutes(deps.services));
  app.use(APP_API_PREFIXES, authenticate(deps.auth));
  app.use(paymentRoutes(deps.services));
  app.use(merchantRoutes(deps.services));
  app.use(applicationRoutes(deps.services));
  app.use(notificationRoutes(deps.services));
  app.use(notFound());
  app.use(errorHandler(deps.logger));
  return app;
}
