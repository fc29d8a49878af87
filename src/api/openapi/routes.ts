import fs from 'node:fs';
import path from 'node:path';
import type { Router } from 'express';
import { apiRouter } from '../../platform/http/router';
import { ROOT_DIR } from '../../platform/paths';
import { buildConsoleDocument } from './console-document';
import { buildOpenApiDocument } from './document';

/** Redoc's self-contained browser build: served from node_modules, never from a CDN. */
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js');

/**
 * The page loads only what durapay serves; Redoc styles itself with inline styles and runs its
 * search index in a worker made from a blob.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>durapay API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<div id="redoc"></div>
<script src="/docs/redoc.standalone.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// In a file of its own, so that the page's CSP needs no inline script.
const DOCS_INIT = `Redoc.init('/openapi.json', { expandResponses: '200', jsonSampleExpandLevel: 3 }, document.getElementById('redoc'));\n`;

function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT_DIR, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * `GET /openapi.json` (the app API's document, built once), `GET /console/openapi.json` (the
 * operator console's API) and `GET /docs` (the app API's, rendered by Redoc).
 */
export function openApiRoutes(): Router {
  const router = apiRouter();
  const version = packageVersion();
  const document = JSON.stringify(buildOpenApiDocument({ version }));
  const consoleDocument = JSON.stringify(buildConsoleDocument({ version }));
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').set('Cache-Control', 'no-cache').send(document);
  });
  router.get('/console/openapi.json', (_req, res) => {
    res.type('application/json').set('Cache-Control', 'no-cache').send(consoleDocument);
  });
  router.get('/docs', (_req, res) => {
    res
      .type('html')
      .set('Content-Security-Policy', DOCS_CSP)
      .set('Cache-Control', 'no-cache')
      .send(DOCS_PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'no-cache').send(DOCS_INIT);
  });
  router.get('/docs/redoc.standalone.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'public, max-age=86400').sendFile(REDOC_BUNDLE);
  });
  return router;
}
