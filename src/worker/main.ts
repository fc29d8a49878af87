import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config';
import { requireDatabaseUrl, requireTemporalAddress } from '../platform/config';
import { channelsFromConfig, observeChannelCalls } from '../channels/registry';
import { connectDatabase } from '../platform/db';
import { AppRepository } from '../modules/apps';
import { ensureCallbackRetentionSchedule } from '../modules/callbacks';
import { ensureReconciliationSchedule } from '../modules/reconciliation';
import { ensureComplaintSweepSchedule } from '../modules/complaints';
import type { ChannelRegistry } from '../channels/registry';
import { PAYMENT_POLL_SCHEDULE_MS, PaymentSweeper, sweepTickMs } from '../modules/orders';
import { TransferService } from '../modules/transfers';
import { scaleDuration } from '../platform/durations';
import { resolveMasterKey } from '../platform/crypto/master-key';
import { SecretBox } from '../platform/crypto/secret-box';
import { resolvePayloadKeys } from '../platform/crypto/keyring';
import { ensurePayloadKeys } from '../platform/crypto/key-registry';
import { sealedDataConverter } from '../platform/data-converter';
import type { Logger } from '../platform/logger';
import { ensureSearchAttributes } from '../platform/temporal';
import { freePort } from '../platform/net';
import { WorkerMetrics } from '../platform/worker-metrics';
import { WORKFLOW_TYPES } from '../platform/workflow/definitions';
import { describeTracing, installTracing, type Tracing } from '../platform/tracing';
import { bundleTraces, bundleWorkflows, createWorker, installRuntime } from '.';
import { activityHolds } from './activity-holds';

/**
 * The production worker process. Resolves when the worker has shut down (SIGINT/SIGTERM are
 * handled by the Temporal Runtime: in-flight activities get the grace period to finish).
 */
export async function runWorkerProcess(config: Config, logger: Logger): Promise<void> {
  const metrics = new WorkerMetrics(logger);
  const metricsPort = config.worker.metricsPort;
  if (metricsPort !== undefined) {
    // The SDK core's own endpoint stays on loopback: the worker's port serves both.
    const sdkMetricsAddress = `127.0.0.1:${await freePort()}`;
    installRuntime(logger, { sdkMetricsAddress });
    metrics.appendSdkMetricsFrom(sdkMetricsAddress);
  } else {
    installRuntime(logger);
  }
  const tracing = config.tracing ? installTracing(config.tracing, 'worker', logger) : undefined;
  if (config.tracing) logger.info('tracing on', describeTracing(config.tracing));
  const masterKey = resolveMasterKey(config);
  const payloadKeys = resolvePayloadKeys(config);
  const address = requireTemporalAddress(config);
  // A client connection too: activities start workflows (a notification per event).
  const clientConnection = await Connection.connect({ address });
  const added = await ensureSearchAttributes(clientConnection, config.temporal.namespace);
  if (added.length) logger.info('registered search attributes', { added });
  const connection = await NativeConnection.connect({ address });
  const db = connectDatabase(requireDatabaseUrl(config));
  // Before any task runs: a key that sealed histories or rows and is missing now stops the start.
  await ensurePayloadKeys(db, payloadKeys).catch(async (err: unknown) => {
    await Promise.allSettled([db.close(), connection.close(), clientConnection.close()]);
    throw err;
  });
  const bundlePath = config.temporal.workflowBundlePath;
  const client = new Client({
    connection: clientConnection,
    namespace: config.temporal.namespace,
    dataConverter: sealedDataConverter(payloadKeys),
    ...(tracing ? { interceptors: tracing.clientInterceptors } : {}),
  });
  const channels = observeChannelCalls(channelsFromConfig(config, masterKey), (...call) =>
    metrics.channelCall(...call),
  );
  metrics.countOpenWorkflowsWith(() => countOpenWorkflows(client));
  const holdsDir = config.worker.chaosHoldsDir;
  if (holdsDir)
    logger.warn('activities armed in this directory are held until the worker is killed', { dir: holdsDir });
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    activities: {
      db,
      logger,
      client,
      taskQueue: config.temporal.taskQueue,
      apps: new AppRepository(db, new SecretBox(masterKey)),
      notifications: config.notifications,
      timeScale: config.timeScale,
      guardAddresses: config.env === 'production',
      channels,
      metrics,
      payloadKeys,
      orders: {
        publicBaseUrl: config.payments.publicBaseUrl,
        defaultChannel: config.payments.defaultChannel,
        profitShareDelayMs: config.payments.profitShareDelayMs,
        orderIdleEndMs: config.payments.orderIdleEndMs,
        barcodeWaitMs: config.payments.barcodeWaitMs,
        requestTimeoutMs: config.api.requestTimeoutMs,
      },
    },
    workflowBundleCode: await workflowCode(config, logger, tracing),
    maxCachedWorkflows: config.temporal.maxCachedWorkflows,
    tracing,
    ...(holdsDir ? { options: { interceptors: { activity: [activityHolds(holdsDir)] } } } : {}),
  });
  await scheduleCallbackRetention(client, config, logger);
  await scheduleReconciliation(client, config, logger);
  await scheduleComplaintSweep(client, config, channels, logger);
  // Served before "worker running" is logged, so a supervisor that waits for it can scrape at once.
  const metricsServer =
    metricsPort === undefined ? undefined : await metrics.serve(metricsPort, config.api.host);
  logger.info('worker running', {
    task_queue: config.temporal.taskQueue,
    namespace: config.temporal.namespace,
    max_cached_workflows: config.temporal.maxCachedWorkflows,
    diagnostic_workflows: bundlePath ? 'as bundled' : config.temporal.diagnosticWorkflows,
  });
  // Pending orders' polls, in batches beside the worker (modules/orders/sweeper.ts).
  const sweeper = new PaymentSweeper({
    db,
    client,
    channels,
    logger,
    payloadKeys,
    tickMs: sweepTickMs(PAYMENT_POLL_SCHEDULE_MS.map((ms) => scaleDuration(ms, config.timeScale))),
  });
  // Transfers recorded whose start never reached Temporal, and that nobody sent again: started
  // here after a minute (SPEC §11: every transfer ends).
  const transfers = new TransferService({
    db,
    client,
    taskQueue: config.temporal.taskQueue,
    timeScale: config.timeScale,
    channels,
    requestTimeoutMs: config.api.requestTimeoutMs,
    payloadKeys,
    publicBaseUrl: config.payments.publicBaseUrl,
  });
  const neverSentMs = Math.max(1_000, scaleDuration(60_000, config.timeScale));
  const neverSent = setInterval(() => {
    transfers.startNeverSent(neverSentMs).then(
      (started) => {
        if (started > 0) logger.warn('transfers recorded but never started were started', { started });
      },
      (err: unknown) =>
        logger.error('transfers never started could not be looked at; the next tick tries again', {
          error: err instanceof Error ? err.message : String(err),
        }),
    );
  }, neverSentMs);
  // A supervisor that dies without a chance to signal us closes the IPC channel: follow it down.
  process.once('disconnect', () => worker.shutdown());
  sweeper.start();
  try {
    await worker.run();
  } finally {
    metricsServer?.close();
    clearInterval(neverSent);
    await sweeper.stop();
    await Promise.allSettled([db.close(), connection.close(), clientConnection.close()]);
    await tracing?.shutdown();
    logger.info('worker stopped');
  }
}

/** The daily reconciliation (SPEC §10), made sure of at every start; a failure is logged, as above. */
async function scheduleReconciliation(client: Client, config: Config, logger: Logger): Promise<void> {
  const options = { taskQueue: config.temporal.taskQueue, ...config.reconciliation };
  try {
    const done = await ensureReconciliationSchedule(client, options);
    logger.info(`reconciliation schedule ${done}`, { at: options.at, time_zone: options.timeZone });
  } catch (err) {
    logger.error('reconciliation not scheduled; the next worker start tries again', {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/**
 * The complaints' safety net (SPEC §16), when a configured channel has complaints: made sure of
 * at every start and run once at once, which registers the notification URL. A failure is logged.
 */
async function scheduleComplaintSweep(
  client: Client,
  config: Config,
  channels: ChannelRegistry,
  logger: Logger,
): Promise<void> {
  const withComplaints = channels
    .codes()
    .some((code) => channels.accounts(code).some((a) => channels.get(code, a)?.complaints));
  if (!withComplaints) return;
  try {
    const done = await ensureComplaintSweepSchedule(client, {
      taskQueue: config.temporal.taskQueue,
      publicBaseUrl: config.payments.publicBaseUrl,
    });
    logger.info(`complaint sweep schedule ${done}`);
  } catch (err) {
    logger.error('complaints not swept on a schedule; the next worker start tries again', {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/**
 * The raw callbacks' retention (SPEC §9), made sure of at every start. A failure leaves the
 * worker running, since it moves money without it, and is logged as an error; the next start
 * tries again, and callbacks are only kept longer meanwhile.
 */
async function scheduleCallbackRetention(client: Client, config: Config, logger: Logger): Promise<void> {
  const options = {
    taskQueue: config.temporal.taskQueue,
    retentionDays: config.callbacks.retentionDays,
    batchSize: config.callbacks.retentionBatchSize,
  };
  try {
    const done = await ensureCallbackRetentionSchedule(client, options);
    logger.info(`callback retention schedule ${done}`, {
      retention_days: options.retentionDays,
      batch_size: options.batchSize,
    });
  } catch (err) {
    logger.error('callback retention not scheduled; the next worker start tries again', {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/**
 * The prebuilt bundle (DURAPAY_WORKFLOW_BUNDLE), or the workflows bundled now. A worker that
 * traces needs the tracing interceptors in its bundle: without them in the prebuilt one, it
 * bundles at start (a few seconds) rather than trace nothing past the activities.
 */
async function workflowCode(config: Config, logger: Logger, tracing: Tracing | undefined): Promise<string> {
  const bundlePath = config.temporal.workflowBundlePath;
  if (bundlePath) {
    const code = fs.readFileSync(bundlePath, 'utf8');
    if (!tracing || bundleTraces(code)) return code;
    logger.warn('the workflow bundle has no tracing interceptors; bundling the workflows at start', {
      bundle: bundlePath,
    });
  }
  return bundleWorkflows(logger, {
    diagnostics: config.temporal.diagnosticWorkflows,
    tracing: tracing !== undefined,
  });
}

/** Running workflows of each type durapay starts; a visibility count per type, at scrape time. */
async function countOpenWorkflows(client: Client): Promise<Record<string, number>> {
  const counts = await Promise.all(
    WORKFLOW_TYPES.map(async (type) => {
      const { count } = await client.workflow.count(
        `WorkflowType = '${type}' AND ExecutionStatus = 'Running'`,
      );
      return [type, count] as const;
    }),
  );
  return Object.fromEntries(counts);
}
