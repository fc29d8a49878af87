import type http from 'node:http';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { NextFunction, Request, Response } from 'express';
import { bearerIs } from './crypto/same-secret';
import { AppError, type ErrorCode } from './errors';
import type { Logger } from './logger';
import { serveMetrics } from './metrics-server';

/** The refusals counted by `durapay_http_requests_refused_total` (SPEC §2: authentication, limits). */
const REFUSAL_CODES: ReadonlySet<ErrorCode> = new Set([
  'unauthorized',
  'app_not_found',
  'permission_denied',
  'rate_limited',
]);

/** Seconds; from a fast read (2 ms) to a create waiting on a slow channel (10 s). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The API process's Prometheus metrics, in a registry of its own (so that several APIs in one
 * process, as in the tests, do not share counters), with Node's process metrics beside them.
 * Label values come from closed sets (route patterns, SPEC error codes, known channel codes),
 * never from what a caller sends, so a caller cannot grow the series.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'durapay_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer, by route pattern, method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  readonly refused = new Counter({
    name: 'durapay_http_requests_refused_total',
    help: 'Requests refused by authentication, authorization or the rate limit, by error code.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly callbacks = new Counter({
    name: 'durapay_channel_callbacks_total',
    help: 'Channel callbacks received, by channel and outcome (delivered, rejected, unknown_order, …).',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Express middleware: times every request and counts refusals and callbacks when it is answered. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const end = this.httpDuration.startTimer();
      res.on('finish', () => {
        end({ method: methodLabel(req.method), route: routeLabel(req, res), status: String(res.statusCode) });
        const code = res.locals.errorCode as ErrorCode | undefined;
        if (code && REFUSAL_CODES.has(code)) this.refused.inc({ reason: code });
        const callback = res.locals.callback as { channel: string; outcome: string } | undefined;
        if (callback) this.callbacks.inc(callback);
      });
      next();
    };
  }

  /**
   * `GET /metrics`: the text exposition format; with `token`, only to a request that carries it
   * as `Authorization: Bearer <token>` (401 unauthorized otherwise).
   */
  handler(token?: string) {
    return async (req: Request, res: Response): Promise<void> => {
      if (token !== undefined && !bearerIs(req.headers.authorization, token)) {
        throw new AppError('unauthorized', 'metrics need the bearer token METRICS_TOKEN names');
      }
      res.set('Content-Type', this.registry.contentType).send(await this.registry.metrics());
    };
  }

  /**
   * Serves `GET /metrics` (and nothing else) on a port of its own, for a Prometheus on the
   * operators' network rather than the API's public one; with `token`, to that bearer only. A
   * port that cannot be bound is logged and left: the API goes on taking payments without it.
   */
  serve(opts: {
    port: number;
    host: string;
    token?: string;
    logger: Logger;
  }): Promise<http.Server | undefined> {
    return serveMetrics({
      name: 'api',
      ...opts,
      exposition: () => this.registry.metrics(),
      contentType: this.registry.contentType,
    });
  }
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'other';
}

/**
 * The matched route's pattern (`/api/v1/pay/query/:tradeNo`), never the path itself; mounted
 * upstream simulators count as their mount point, and anything unmatched as `unmatched`. The
 * request's trace span (platform/tracing.ts) takes its `http.route` from here too.
 */
export function routeLabel(req: Request, res: Response): string {
  const mount = res.locals.metricsRoute as string | undefined;
  if (mount) return mount;
  const route = (req as Request & { route?: { path?: unknown } }).route;
  if (route && typeof route.path === 'string') return route.path;
  if (route && Array.isArray(route.path)) return matchedPattern(route.path as string[], req.params ?? {});
  return 'unmatched';
}

/** Of a route's several patterns, the one whose parameters are the ones the request carried. */
function matchedPattern(patterns: string[], params: Record<string, unknown>): string {
  const carried = Object.keys(params)
    .filter((k) => params[k] !== undefined)
    .sort()
    .join(',');
  const named = (p: string) =>
    [...p.matchAll(/:(\w+)/g)]
      .map((m) => m[1])
      .sort()
      .join(',');
  return patterns.find((p) => named(p) === carried) ?? patterns.join('|');
}
