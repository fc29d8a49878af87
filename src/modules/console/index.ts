// The console module's public surface: the operator console's routes (its API and its page).
export { consoleRoutes, type ConsoleDeps } from './routes';
export { consoleDataRoutes, type ConsoleDataDeps } from './data-routes';
export { consoleCheckoutRoutes } from './checkout-routes';
export { consoleComplaintRoutes } from './complaint-routes';
export { SESSION_COOKIE, CSRF_HEADER } from './session-check';
export { consoleOperations } from './openapi';
export { EXCEPTION_KINDS } from './overview';
export { TIMELINE_KINDS } from './order-timeline';
