import { SpanKind, SpanStatusCode, type Attributes, type Tracer } from '@opentelemetry/api';

/**
 * Spans durapay makes by hand, around the outbound calls OpenTelemetry's instrumentations do not
 * see. Until tracing is installed (platform/tracing.ts) there is no tracer here, and each helper
 * only calls through: a process without tracing pays one check per call.
 */
let tracer: Tracer | undefined;

/** Set by installTracing, cleared by its shutdown. */
export function useTracer(t: Tracer | undefined): void {
  tracer = t;
}

/**
 * A URL as a span may carry it: scheme, host and path. The query and any credentials are left
 * out, since they may hold a signature or a token (Alipay's gateway URL carries `sign` and
 * `app_auth_token`; a merchant's notify_url may carry anything).
 */
export function urlForSpan(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * A CLIENT span around one outbound HTTP call, the current span's child, named and described as
 * the undici instrumentation names its own: method, URL without query, server, status. Never
 * headers or bodies. `statusOf` reads the HTTP status from the call's result or from its error.
 */
export async function outboundHttpSpan<T>(
  request: { method: string; url: string; attributes?: Attributes },
  call: () => Promise<T>,
  statusOf: (resultOrError: unknown) => number | undefined,
): Promise<T> {
  if (!tracer) return call();
  let url: URL | undefined;
  try {
    url = new URL(request.url);
  } catch {
    url = undefined;
  }
  const method = request.method.toUpperCase();
  const attributes: Attributes = {
    'http.request.method': method,
    ...(url
      ? {
          'url.full': urlForSpan(url),
          'server.address': url.hostname,
          'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        }
      : {}),
    ...request.attributes,
  };
  return tracer.startActiveSpan(method, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const answered = (outcome: unknown) => {
      const status = statusOf(outcome);
      if (status === undefined) return false;
      span.setAttribute('http.response.status_code', status);
      if (status >= 400) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return true;
    };
    try {
      const result = await call();
      answered(result);
      return result;
    } catch (err) {
      if (!answered(err)) {
        // The error's kind, not its message: a message may quote what was sent.
        const code = (err as { code?: unknown } | null)?.code;
        span.setAttribute('error.type', typeof code === 'string' ? code : 'error');
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      throw err;
    } finally {
      span.end();
    }
  });
}
