import {
  type NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  type WorkerOptions,
} from '@temporalio/worker';
import { createActivities, type WorkerActivityDeps as ActivityDeps } from './activities';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../platform/config';
import type { Logger } from '../platform/logger';
import { WinstonTemporalLogger } from '../platform/temporal';

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
 * Bundles the workflow code once; the worker and tests can reuse the result. With
 * `diagnostics`, the bundle also holds the diagnostic and benchmark-floor workflows.
 */
export async function bundleWorkflows(
  logger?: Logger,
  opts: { diagnostics?: boolean } = {},
): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: opts.diagnostics ? diagnosticWorkflowsPath : workflowsPath,
    logger: logger ? new WinstonTemporalLogger(logger, true) : undefined,
  });
  return code;
}

export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: ActivityDeps;
  /** Prebuilt bundle code; without it the worker bundles from source at start (a few seconds). */
  workflowBundleCode?: string;
  /** Without prebuilt code: whether to serve the diagnostic and benchmark workflows too. */
  diagnosticWorkflows?: boolean;
  /** The sticky cache's size (WORKER_MAX_CACHED_WORKFLOWS); it bounds the worker's memory. */
  maxCachedWorkflows?: number;
  /** Extra Worker options (tests shorten the shutdown grace time, for instance). */
  options?: Partial<WorkerOptions>;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    ...(deps.workflowBundleCode
      ? { workflowBundle: { code: deps.workflowBundleCode } }
      : { workflowsPath: deps.diagnosticWorkflows ? diagnosticWorkflowsPath : workflowsPath }),
    activities: createActivities(deps.activities),
    // Bounded so that tens of thousands of open orders do not grow memory without limit.
    maxCachedWorkflows: deps.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
    shutdownGraceTime: '10 seconds',
    ...deps.options,
  });
}
