import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerIs } from './crypto/same-secret';
import type { Logger } from './logger';

export interface MetricsServerOptions {
  /** Whose metrics, for the log lines: `api metrics served`, `worker metrics not served`. */
  name: 'api' | 'worker';
  port: number;
  host: string;
  /** The text exposition format, and its content type. */
  exposition(): Promise<string>;
  contentType: string;
  /** Served only to a request that carries it as `Authorization: Bearer <token>` (401 otherwise). */
  token?: string;
  logger?: Logger;
}

/**
 * Serves `GET /metrics` (and nothing else, 404) on a port of its own, for a Prometheus on the
 * operators' network. A port that cannot be bound is logged and left (undefined): the process
 * goes on moving money without its metrics.
 */
export function serveMetrics(opts: MetricsServerOptions): Promise<http.Server | undefined> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (opts.token !== undefined && !bearerIs(req.headers.authorization, opts.token)) {
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' })
        .end('unauthorized\n');
      return;
    }
    opts.exposition().then(
      (text) => res.writeHead(200, { 'content-type': opts.contentType }).end(text),
      (err: unknown) => {
        opts.logger?.error('metrics failed', { error: err instanceof Error ? err.message : String(err) });
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n');
      },
    );
  });
  return new Promise((resolve) => {
    server.once('error', (err) => {
      opts.logger?.error(`${opts.name} metrics not served`, { port: opts.port, error: err.message });
      resolve(undefined);
    });
    server.listen(opts.port, opts.host, () => {
      opts.logger?.info(`${opts.name} metrics served`, {
        host: opts.host,
        port: (server.address() as AddressInfo).port,
      });
      resolve(server);
    });
  });
}
