// Longer than 300 lines: what tracing installs (provider, exporter, instrumentation, Temporal's
// interceptors and sink, the API's request span) is installed and shut down together, here.
/**
 * OpenTelemetry traces, off unless configured (Config.tracing, from the OTEL_* variables): one
 * trace follows a request from the API through the Temporal client, the workflow and its
 * activities to the channel's and the merchant's HTTP endpoints.
 *
 * - The API's server span is made here, around the Express app (`serve`), so that it can carry
 *   the request id and the trade, refund and merchant numbers the request was about.
 * - Temporal's client, activity and workflow interceptors carry the context through the client's
 *   calls and the workflow's history headers; workflow spans leave the workflow sandbox through
 *   the worker's `exporter` sink.
 * - Outbound HTTP: undici (the sandbox adapter, notification delivery, Alipay's urllib, fetch) is
 *   seen through its diagnostics channels by @opentelemetry/instrumentation-undici, which needs no
 *   require hook and so no particular load order; axios (WeChat Pay) goes through Node's http
 *   module, whose instrumentation is a require hook that must run before `http` is first loaded
 *   (and never runs under jest), so its calls get a span by hand (platform/spans.ts).
 *
 * Nothing reaches a span attribute that could be a secret: no headers, no bodies, no URL queries.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { Resource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  InjectedSinks,
  Next,
} from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { Request, Response } from 'express';
import type { TracingConfig } from './config';
import type { Logger } from './logger';
import { routeLabel } from './metrics';
import { urlForSpan, useTracer } from './spans';

const TRACER_NAME = 'durapay';

/** Where spans go: OTLP as configured, or an exporter of the caller's (tests: in memory). */
export type TraceDestination = TracingConfig | { serviceName: string; exporter: SpanExporter };

export interface Tracing {
  readonly tracer: Tracer;
  /** For every Temporal client of a traced process (the API's, the worker's activities'). */
  readonly clientInterceptors: ClientInterceptors;
  /** The worker's activity interceptors: a span per activity run, the business numbers on it. */
  readonly activityInterceptors: ActivityInterceptorsFactory[];
  /** The worker's sinks: workflow spans leave the workflow sandbox through `exporter`. */
  readonly workflowSinks: InjectedSinks<OpenTelemetrySinks>;
  /** An HTTP server's request listener, each request in a SERVER span (the API's, in http-server.ts). */
  serve(listener: RequestListener): RequestListener;
  /** Exports what is still buffered, then uninstalls everything installTracing installed. */
  shutdown(): Promise<void>;
}

let installed = false;

/** For the start-up log line: where spans go, without credentials a URL may carry. */
export function describeTracing(config: TracingConfig): Record<string, string> {
  let url: string;
  try {
    url = urlForSpan(new URL(config.tracesUrl));
  } catch {
    url = '(invalid URL)';
  }
  return { traces_url: url, protocol: config.protocol, service_name: config.serviceName };
}

/**
 * Installs tracing for this process: the tracer provider (with the global context manager and
 * W3C propagator), the undici instrumentation, and the pieces the Temporal client and worker
 * take. `role` names the process (`api`, `worker`) as the resource attribute `durapay.process`.
 * OpenTelemetry's own warnings and errors (a collector that refuses spans) go to `logger`.
 */
export function installTracing(to: TraceDestination, role: string, logger?: Logger): Tracing {
  if (installed) throw new Error('tracing is already installed in this process');
  if (logger) {
    const warn = (message: string, ...args: unknown[]) =>
      logger.warn(`opentelemetry: ${message}`, args.length ? { details: args.map(String) } : {});
    const ignore = () => undefined;
    diag.setLogger(
      { error: warn, warn, info: ignore, debug: ignore, verbose: ignore },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
  }
  const resource = new Resource({ 'service.name': to.serviceName, 'durapay.process': role });
  const processor: SpanProcessor =
    'exporter' in to
      ? // Each span as it ends, so that a test reads it without waiting for a batch.
        new SimpleSpanProcessor(to.exporter)
      : new BatchSpanProcessor(
          to.protocol === 'http/json'
            ? new OtlpJsonExporter({ url: to.tracesUrl })
            : new OtlpProtobufExporter({ url: to.tracesUrl }),
        );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  const tracer = provider.getTracer(TRACER_NAME);

  // Subscribes to undici's diagnostics channels as it is made (its config's `enabled: false`
  // would silence it for good).
  const undici = new UndiciInstrumentation({
    // Its own attributes, less the query: Alipay's gateway URL carries `sign` and
    // `app_auth_token`, and a notify_url may carry the merchant's token.
    startSpanHook: (request) => {
      try {
        return { 'url.full': urlForSpan(new URL(request.path, request.origin)), 'url.query': undefined };
      } catch {
        return { 'url.full': undefined, 'url.query': undefined };
      }
    },
  });
  undici.setTracerProvider(provider);
  useTracer(tracer);
  installed = true;

  const interceptorOptions = { tracer };
  return {
    tracer,
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor(interceptorOptions)] },
    activityInterceptors: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx, interceptorOptions),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
      // Inside the activity's span, so that it is the span these attributes go on.
      () => ({ inbound: new BusinessNumbersInterceptor() }),
    ],
    workflowSinks: { exporter: workflowExporter(processor, resource) },
    serve: (listener) => serveTraced(tracer, listener),
    async shutdown() {
      undici.disable();
      useTracer(undefined);
      try {
        await provider.shutdown();
      } catch (err) {
        // A collector that is gone costs the last spans, never the process its clean exit.
        logger?.warn('opentelemetry: the last spans could not be exported', { error: String(err) });
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
        diag.disable();
        installed = false;
      }
    },
  };
}

/** Camel-case fields of activity inputs and their attributes. */
const ACTIVITY_NUMBERS: Record<string, string> = {
  tradeNo: 'durapay.trade_no',
  refundNo: 'durapay.refund_no',
  merchantOrderNo: 'durapay.merchant_order_no',
  notificationId: 'durapay.notification_id',
  applicationId: 'durapay.application_id',
  channelCode: 'durapay.channel',
};

/** Fields of request and answer bodies and their attributes. */
const API_NUMBERS: Record<string, string> = {
  trade_no: 'durapay.trade_no',
  refund_no: 'durapay.refund_no',
  merchant_order_no: 'durapay.merchant_order_no',
  merchant_refund_no: 'durapay.merchant_refund_no',
};

/** Path parameters (`/api/v1/pay/query/:tradeNo`) and their attributes. */
const PATH_NUMBERS: Record<string, string> = {
  tradeNo: 'durapay.trade_no',
  refundNo: 'durapay.refund_no',
};

/**
 * Copies the named string fields of `source` into `into`, an attribute already there winning.
 * Identifiers only, and short ones: what a caller sent that is not an identifier stays out.
 */
function pickNumbers(source: unknown, fields: Record<string, string>, into: Attributes): void {
  if (typeof source !== 'object' || source === null) return;
  for (const [field, attribute] of Object.entries(fields)) {
    const value = (source as Record<string, unknown>)[field];
    if (typeof value === 'string' && value.length > 0 && value.length <= 128 && !(attribute in into)) {
      into[attribute] = value;
    }
  }
}

/** Puts the trade, refund, notification or application an activity works on onto its span. */
class BusinessNumbersInterceptor implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>) {
    const span = trace.getActiveSpan();
    if (span) {
      const attributes: Attributes = {};
      const [first] = input.args;
      pickNumbers(first, ACTIVITY_NUMBERS, attributes);
      // One level down too: an activity that takes parts ({ channel, order }) names them there.
      if (typeof first === 'object' && first !== null) {
        for (const part of Object.values(first)) pickNumbers(part, ACTIVITY_NUMBERS, attributes);
      }
      span.setAttributes(attributes);
    }
    return next(input);
  }
}

/**
 * The Temporal SDK's workflow span sink, given only the run's identity and its business
 * numbers: by itself it copies the whole WorkflowInfo (memo, every search attribute, the last
 * failure) onto each span.
 */
function workflowExporter(
  processor: SpanProcessor,
  resource: Resource,
): InjectedSinks<OpenTelemetrySinks>['exporter'] {
  const sink = makeWorkflowExporter(processor, resource);
  return {
    export: {
      ...sink.export,
      fn: (info, spans) => {
        const attributes: Attributes = {
          workflowId: info.workflowId,
          runId: info.runId,
          workflowType: info.workflowType,
          taskQueue: info.taskQueue,
          namespace: info.namespace,
          attempt: info.attempt,
        };
        const searchAttributes = (info as { searchAttributes?: Record<string, unknown> }).searchAttributes;
        for (const [key, attribute] of [
          ['TradeNo', 'durapay.trade_no'],
          ['MerchantOrderNo', 'durapay.merchant_order_no'],
          ['AppId', 'durapay.app_id'],
        ] as const) {
          const values = searchAttributes?.[key];
          if (Array.isArray(values) && typeof values[0] === 'string') attributes[attribute] = values[0];
        }
        // The sink reads attributes off the info it is given; the rest of WorkflowInfo stays out.
        sink.export.fn(attributes as unknown as WorkflowInfo, spans);
      },
    },
  };
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/**
 * Each request in a SERVER span, the child of the caller's (W3C traceparent), current while
 * Express handles it: the Temporal client's spans become its children. The context survives the
 * body being read, since durapay's handlers await it and raw-body binds its callback to the
 * caller's async context. Ends when the response closes, with the route, the status and what
 * Express left in `res.locals`: the request id, the app, the error code, the answer.
 */
function serveTraced(tracer: Tracer, listener: RequestListener): RequestListener {
  return (req, res) => {
    const method = METHODS.has(req.method ?? '') ? req.method! : '_OTHER';
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(
      method === '_OTHER' ? 'HTTP' : method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': method,
          'url.path': (req.url ?? '/').split('?', 1)[0]!.slice(0, 512),
          'url.scheme': 'http',
        },
      },
      parent,
    );
    res.once('close', () => endServerSpan(span, method, req, res));
    context.with(trace.setSpan(parent, span), () => listener(req, res));
  };
}

function endServerSpan(span: Span, method: string, req: IncomingMessage, res: ServerResponse): void {
  const express = { req: req as Request, res: res as Response };
  const locals = (express.res.locals ?? {}) as Record<string, unknown>;
  const attributes: Attributes = { 'http.response.status_code': res.statusCode };
  const route = routeLabel(express.req, express.res);
  if (route !== 'unmatched') {
    attributes['http.route'] = route;
    span.updateName(`${method === '_OTHER' ? 'HTTP' : method} ${route}`);
  }
  if (typeof locals.requestId === 'string') attributes['durapay.request_id'] = locals.requestId;
  const app = locals.app as { appId?: unknown } | undefined;
  if (typeof app?.appId === 'string') attributes['durapay.app_id'] = app.appId;
  if (typeof locals.errorCode === 'string') attributes['durapay.error_code'] = locals.errorCode;
  // The answer first (the trade number a create made), then what the request named.
  pickNumbers(locals.data, API_NUMBERS, attributes);
  pickNumbers(express.req.params, PATH_NUMBERS, attributes);
  pickNumbers(express.req.body, API_NUMBERS, attributes);
  span.setAttributes(attributes);
  if (res.statusCode >= 500) {
    span.setAttribute('error.type', String(res.statusCode));
    span.setStatus({ code: SpanStatusCode.ERROR });
  } else if (!res.writableFinished) {
    // The client hung up before the answer was sent.
    span.setAttribute('error.type', 'aborted');
  }
  span.end();
}
