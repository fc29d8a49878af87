import express, { type Express } from 'express';
import type { Logger } from '../lib/logger';
import { captureRawBody } from './middleware/body';
import { errorHandler, notFound } from './middleware/errors';
import { requestContext } from './middleware/request-context';
import { healthRoutes, type ReadinessProbes } from './routes/health';

export interface ApiDeps {
  logger: Logger;
  readiness: ReadinessProbes;
}

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);
  app.use(requestContext(deps.logger));
  app.use(captureRawBody());
  app.use(healthRoutes(deps.readiness));
  app.use(notFound());
  app.use(errorHandler(deps.logger));
  return app;
}
