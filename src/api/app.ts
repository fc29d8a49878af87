import express, { type Express, type RequestHandler } from 'express';
import type { TrustProxy } from '../platform/config';
import type { Logger } from '../platform/logger';
import { authenticate, type AuthDeps, type Scope } from '../modules/apps';
import { captureRawBody, refuseEncodedBodies } from '../platform/http/body';
import { errorHandler, notFound, notFoundError } from './middleware/errors';
import { requestContext } from './middleware/request-context';
import { healthRoutes, type ReadinessProbes } from './health';
import { ApplicationService, applicationRoutes } from '../modules/applications';
import { callbackRoutes, type CallbackRateLimit } from './callbacks';
import { complaintNotificationRoutes } from './complaint-notifications';
import { contractNotificationRoutes } from './contract-notifications';
import { ContractService, contractRoutes } from '../modules/contracts';
import { merchantRoutes } from '../modules/merchants';
import { notificationRoutes } from '../modules/notifications';
import { OrderService, paymentRoutes } from '../modules/orders';
import { RefundService, refundRoutes } from '../modules/refunds';
import { ReconciliationService, reconciliationRoutes } from '../modules/reconciliation';
import { TransferService, transferRoutes } from '../modules/transfers';
import {
  CheckoutService,
  checkoutPageRoutes,
  merchantCodeRoutes,
  paymentLinkRoutes,
} from '../modules/checkout';
import type { ApiServices } from './services';
import { ApiMetrics } from '../platform/metrics';
import { openApiRoutes } from './openapi/routes';
import { codecRoutes, type CodecServerOptions } from './codec';
import { ComplaintService, complaintRoutes } from '../modules/complaints';
import {
  consoleCheckoutRoutes,
  consoleComplaintRoutes,
  consoleDataRoutes,
  consoleRoutes,
} from '../modules/console';
import { DEFAULT_CONSOLE_SETTINGS, type CoreConfig } from '../platform/config';
import { ROOT_DIR } from '../platform/paths';
import path from 'node:path';

export interface ApiDeps {
  logger: Logger;
  readiness: ReadinessProbes;
  auth: AuthDeps;
  services: ApiServices;
  /** The simulated sandbox upstream (sandbox/, through src/sandbox-hook/), mounted at /sandbox when enabled. */
  sandbox?: RequestHandler;
  /** Other simulated upstreams by mount path (e.g. `/wechatpay`), in development and tests. */
  upstreams?: Record<string, RequestHandler>;
  /** The codec server for the Temporal UI at `/codec/*` (SPEC §7); absent, those paths are unknown. */
  codec?: CodecServerOptions;
  /** Prometheus metrics served at `GET /metrics`; a registry of its own when not given. */
  metrics?: ApiMetrics;
  /** The limit on callbacks that fail verification, per source address (SPEC §9: 50/s when not given). */
  callbackRateLimit?: CallbackRateLimit;
  /**
   * Whether this port serves `GET /metrics`, and to which bearer token (config `metrics`); served
   * to anyone when not given, as outside production.
   */
  metricsAccess?: { onApiPort: boolean; token?: string };
  /**
   * The proxies whose X-Forwarded-* headers are believed (config `api.trustProxy`): then
   * `req.ip` is the client the proxy served, and `req.protocol` the scheme it was reached by.
   * None when not given.
   */
  trustProxy?: TrustProxy;
  /**
   * The operator console's settings (config `console`) and where its built page is; the
   * defaults' when not given (sessions of 30 minutes idle and 12 hours in all, a `Secure` cookie).
   */
  console?: {
    settings: CoreConfig['console'];
    distDir?: string;
    /** Where an order's page links its workflow (config `temporal.uiUrl`, `temporal.namespace`). */
    temporalUi?: { url: string; namespace: string };
    /** The days of the console's overview (config `reconciliation.timeZone`). */
    timeZone?: string;
  };
}

/** Every path an app calls, with the scope it needs (SPEC §2); each needs a signed request. */
export const APP_API_SCOPES: Readonly<Record<string, Scope>> = {
  '/api/v1/pay': 'payments',
  '/api/v1/notifications': 'payments',
  '/api/v1/reconciliation': 'payments',
  '/api/v1/transfer': 'payments',
  '/api/v1/payment-links': 'payments',
  '/api/v1/complaints': 'payments',
  '/api/v1/contracts': 'payments',
  '/api/v1/merchant': 'merchants',
};

export function createApp(deps: ApiDeps): Express {
  const app = express();
  // Before the first app.use: Express builds its router with the settings of that moment.
  app.set('case sensitive routing', true);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy ?? false);
  app.use(requestContext(deps.logger));
  const metrics = deps.metrics ?? new ApiMetrics();
  app.use(metrics.middleware());
  // The codec server reads its own bodies and answers the UI's CORS preflights (OPTIONS).
  if (deps.codec) app.use(codecRoutes(deps.codec));
  // Express would answer OPTIONS itself, in plain text; no other route answers OPTIONS (no CORS).
  app.use((req, _res, next) => next(req.method === 'OPTIONS' ? notFoundError(req) : undefined));
  // Channel callbacks read their own bodies and answer `fail` to anything wrong (SPEC §4).
  // A `checkout` order's credential is its page on the hosted checkout (made below).
  const orders = new OrderService({
    ...deps.services,
    checkoutUrl: (tradeNo: string): string => checkout.orderPageUrl(tradeNo),
  });
  const refunds = new RefundService(deps.services, orders);
  const transfers = new TransferService(deps.services);
  app.use(callbackRoutes(deps.services, { orders, refunds, transfers }, deps.callbackRateLimit));
  // Complaint notifications read their own bodies too, answered as their channel expects (SPEC §16).
  const complaints = new ComplaintService(deps.services, refunds);
  app.use(complaintNotificationRoutes(deps.services, complaints, deps.callbackRateLimit));
  // And contract notifications: the buyer signed, or ended a contract at the channel (SPEC §17).
  const contracts = new ContractService(deps.services);
  app.use(contractNotificationRoutes(deps.services, contracts, deps.callbackRateLimit));
  app.use(refuseEncodedBodies());
  // The simulated upstream reads its own bodies (uploads exceed the API's 1 MiB JSON limit).
  // A simulated upstream's own routes count as its mount point in the metrics.
  const mounted = (mount: string, upstream: RequestHandler) =>
    app.use(mount, (_req, res, next) => ((res.locals.metricsRoute = mount), next()), upstream);
  if (deps.sandbox) mounted('/sandbox', deps.sandbox);
  for (const [mount, upstream] of Object.entries(deps.upstreams ?? {})) mounted(mount, upstream);
  app.use(captureRawBody());
  app.use(healthRoutes(deps.readiness));
  const metricsAccess = deps.metricsAccess ?? { onApiPort: true };
  if (metricsAccess.onApiPort) app.get('/metrics', metrics.handler(metricsAccess.token));
  app.use(openApiRoutes());
  // The buyer's hosted checkout (SPEC §15): pages, unsigned; its links' API is signed below.
  const checkout = new CheckoutService(deps.services, orders);
  app.use(checkoutPageRoutes(checkout));
  // The operator console: its own sessions, never an app's signature (SPEC §12).
  // Its actions call the same services as the API's routes, so every rule of the API holds.
  app.use(
    consoleRoutes(
      {
        db: deps.services.db,
        payloadKeys: deps.services.payloadKeys,
        consoleSettings: deps.console?.settings ?? DEFAULT_CONSOLE_SETTINGS,
        distDir: deps.console?.distDir ?? path.join(ROOT_DIR, 'console', 'dist'),
      },
      [
        consoleDataRoutes({
          services: deps.services,
          orders,
          refunds,
          transfers,
          reconciliation: new ReconciliationService(deps.services),
          // The apps as authentication holds them: disabling one tells every API process's cache.
          apps: deps.auth.apps,
          temporalUi: deps.console?.temporalUi,
          timeZone: deps.console?.timeZone,
        }),
        consoleCheckoutRoutes(checkout),
        consoleComplaintRoutes(complaints),
      ],
    ),
  );
  for (const [prefix, scope] of Object.entries(APP_API_SCOPES)) {
    app.use(prefix, authenticate(deps.auth, scope));
  }
  app.use(paymentRoutes(orders));
  app.use(refundRoutes(refunds));
  app.use(merchantRoutes(deps.services));
  app.use(applicationRoutes(new ApplicationService(deps.services)));
  app.use(notificationRoutes(deps.services));
  app.use(transferRoutes(transfers));
  app.use(paymentLinkRoutes(checkout));
  app.use(merchantCodeRoutes(checkout));
  app.use(reconciliationRoutes(new ReconciliationService(deps.services)));
  app.use(complaintRoutes(complaints));
  app.use(contractRoutes(contracts));
  app.use(notFound());
  app.use(errorHandler(deps.logger));
  return app;
}
