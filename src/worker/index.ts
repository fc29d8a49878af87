import {
  type NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  type WorkerOptions,
} from '@temporalio/worker';
import { createActivities, type ActivitiesDeps } from '../activities';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../platform/config';
import type { Logger } from '../platform/logger';
import { WinstonTemporalLogger } from '../platform/temporal';
import { FAILURE_CONVERTER_PATH, sealedDataConverter } from '../platform/data-converter';
import type { Tracing } from '../platform/tracing';

let runtimeInstalled = false;

/**
 * The Runtime is process-wide and can be installed once; later calls keep the first logger.
 * With `sdkMetricsAddress` (loopback `host:port`), the SDK's core serves its worker metrics
 * there (task slots, poll and schedule-to-start latencies, sticky cache, …), in seconds and with
 * `_total` counters as Prometheus names them.
 */
export function installRuntime(logger: Logger, opts: { sdkMetricsAddress?: string } = {}): void {
  if (runtimeInstalled) return;
  Runtime.install({
    logger: new WinstonTemporalLogger(logger),
    ...(opts.sdkMetricsAddress
      ? {
          telemetryOptions: {
            metrics: {
              prometheus: {
                bindAddress: opts.sdkMetricsAddress,
                countersTotalSuffix: true,
                unitSuffix: true,
                useSecondsForDurations: true,
              },
            },
          },
        }
      : {}),
  });
  runtimeInstalled = true;
}

export const workflowsPath = require.resolve('../workflows');
/** Production's workflows plus the diagnostic and benchmark-floor ones. */
export const diagnosticWorkflowsPath = require.resolve('../diagnostics/workflows');

/**
 * The workflow half of tracing: OpenTelemetry's workflow interceptors (a span per run, update,
 * signal and scheduled activity; the context passed on in activities' headers). In a bundle only
 * when the worker traces, since its spans leave the sandbox through a sink only such a worker has.
 */
export const tracingInterceptorsPath =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/**
 * Bundles the workflow code once; the worker and tests can reuse the result. With
 * `diagnostics`, the bundle also holds the diagnostic and benchmark-floor workflows; with
 * `tracing`, the tracing interceptors.
 */
export async function bundleWorkflows(
  logger?: Logger,
  opts: { diagnostics?: boolean; tracing?: boolean } = {},
): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: opts.diagnostics ? diagnosticWorkflowsPath : workflowsPath,
    ...(opts.tracing ? { workflowInterceptorModules: [tracingInterceptorsPath] } : {}),
    // Failures leave the workflow with their messages sealed too (platform/data-converter.ts).
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: logger ? new WinstonTemporalLogger(logger, true) : undefined,
  });
  return code;
}

/**
 * Whether bundled code seals its failures (it holds platform/failure-converter): a bundle made
 * before durapay sealed them would leave the messages of failures its workflows raise in the clear.
 */
export function bundleSealsFailures(code: string): boolean {
  return /platform\/failure-converter\.(ts|js)/.test(code);
}

/** Whether bundled code holds the tracing interceptors (webpack names each module by its path). */
export function bundleTraces(code: string): boolean {
  return code.includes('interceptors-opentelemetry/lib/workflow-interceptors.js"');
}

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: ActivitiesDeps;
  /** Prebuilt bundle code; without it the worker bundles from source at start (a few seconds). */
  workflowBundleCode?: string;
  /** Without prebuilt code: whether to serve the diagnostic and benchmark workflows too. */
  diagnosticWorkflows?: boolean;
  /** The sticky cache's size (WORKER_MAX_CACHED_WORKFLOWS); it bounds the worker's memory. */
  maxCachedWorkflows?: number;
  /** Extra Worker options (tests shorten the shutdown grace time, for instance). */
  options?: Partial<WorkerOptions>;
  /**
   * Tracing (platform/tracing.ts): its activity interceptors and workflow span sink, and its
   * workflow interceptors, bundled in at start or already in workflowBundleCode.
   */
  tracing?: Tracing;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const { interceptors, sinks, ...options } = deps.options ?? {};
  const { tracing, workflowBundleCode } = deps;
  if (workflowBundleCode !== undefined && !bundleSealsFailures(workflowBundleCode)) {
    throw new Error(
      'the workflow bundle was made by an older durapay (its failures are not sealed): make it again with `durapay bundle`',
    );
  }
  if (workflowBundleCode !== undefined && bundleTraces(workflowBundleCode) !== (tracing !== undefined)) {
    // Either the workflows would trace into a sink the worker lacks, or not trace at all.
    throw new Error(
      tracing
        ? 'the workflow bundle has no tracing interceptors: bundle it with tracing, or let the worker bundle at start'
        : 'the workflow bundle has tracing interceptors but the worker does not trace: bundle it without',
    );
  }
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    ...(deps.workflowBundleCode
      ? { workflowBundle: { code: deps.workflowBundleCode } }
      : { workflowsPath: deps.diagnosticWorkflows ? diagnosticWorkflowsPath : workflowsPath }),
    activities: createActivities(deps.activities),
    // Every payload sealed with the payload keys (SPEC §7); histories from before pass through.
    dataConverter: sealedDataConverter(deps.activities.payloadKeys),
    // Bounded so that tens of thousands of open orders do not grow memory without limit.
    maxCachedWorkflows: deps.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
    shutdownGraceTime: '10 seconds',
    ...options,
    interceptors: tracing
      ? {
          ...interceptors,
          // Outermost, so that the other interceptors run inside the activity's span.
          activity: [...tracing.activityInterceptors, ...(interceptors?.activity ?? [])],
          ...(workflowBundleCode === undefined
            ? { workflowModules: [tracingInterceptorsPath, ...(interceptors?.workflowModules ?? [])] }
            : {}),
        }
      : interceptors,
    sinks: tracing ? { ...sinks, ...tracing.workflowSinks } : sinks,
  });
}
