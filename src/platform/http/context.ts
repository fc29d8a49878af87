import type { Response } from 'express';

/** The app a request was signed by, set by the apps module's authentication. */
export interface AuthenticatedApp {
  appId: string;
  scopes: readonly string[];
}

/** The authenticated app of a request that passed authentication. */
export function currentApp(res: Response): AuthenticatedApp {
  const app = res.locals.app as AuthenticatedApp | undefined;
  if (!app) throw new Error('route is not behind authenticate()');
  return app;
}
