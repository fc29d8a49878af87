import fs from 'node:fs';
import path from 'node:path';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { apiRouter } from '../../platform/http/router';

/**
 * The console's built single-page app (console/dist, made by `npm run console:build`, or by
 * `npm start` and `npm test` when missing), served at /console; any other /console/… path that
 * is not a file is the app's own route and gets its index.html.
 */
export function consoleStatic(distDir: string): Router {
  const router = apiRouter();
  const headers: RequestHandler = (_req, res, next) => {
    // Ant Design writes its styles at run time: inline styles, and nothing else from elsewhere.
    res.setHeader(
      'Content-Security-Policy',
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
    );
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'same-origin');
    next();
  };
  const index = path.join(distDir, 'index.html');
  const app: RequestHandler = (_req: Request, res: Response) => {
    if (!fs.existsSync(index)) {
      res
        .status(503)
        .type('text/plain')
        .send(
          'The operator console is not built: run `npm run console:build` (npm start builds it when missing).\n',
        );
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  };
  router.use('/console', headers);
  router.use(
    '/console/assets',
    express.static(path.join(distDir, 'assets'), { immutable: true, maxAge: '365d' }),
  );
  // A missing asset is a 404, never the app's page in its place.
  router.use('/console/assets', (_req, res) => void res.status(404).type('text/plain').send('not found\n'));
  router.use('/console', express.static(distDir, { index: false }));
  router.get(['/console', '/console/{*rest}'], app);
  return router;
}
