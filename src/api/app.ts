import express, { type Express } from 'express';
import type { Logger } from '../lib/logger';
import { authenticate, type AuthDeps } from './middleware/authenticate';
import { captureRawBody } from './middleware/body';
import { errorHandler, notFound } from './middleware/errors';
import { requestContext } from './middleware/request-context';
import { healthRoutes, type ReadinessProbes } from './routes/health';
import { notificationRoutes } from './routes/notifications';
import type { ApiServices } from './services';

export interface ApiDeps {
  logger: Logger;
  readiness: ReadinessProbes;
  auth: AuthDeps;
  services: ApiServices;
}

/** Every path an app calls; each needs a signed request (SPEC §2). */
export const APP_API_PREFIXES = ['/api/v1/pay', '/api/v1/notifications', '/api/v1/merchant'];

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);
  app.use(requestContext(deps.logger));
  app.use(captureRawBody());
  app.use(healthRoutes(deps.readiness));
  app.use(APP_API_PREFIXES, authenticate(deps.auth));
  app.use(notificationRoutes(deps.services));
  app.use(notFound());
  app.use(errorHandler(deps.logger));
  return app;
}
