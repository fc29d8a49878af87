import fs from 'node:fs';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { type Config, requireDatabaseUrl, requireTemporalAddress } from '../config';
import { connectDatabase } from '../db';
import type { Logger } from '../lib/logger';
import { ensureSearchAttributes } from '../lib/temporal';
import { bundleWorkflows, createWorker, installRuntimeLogger } from './index';

/**
 * The production worker process. Resolves when the worker has shut down (SIGINT/SIGTERM are
 * handled by the Temporal Runtime: in-flight activities get the grace period to finish).
 */
export async function runWorkerProcess(config: Config, logger: Logger): Promise<void> {
  installRuntimeLogger(logger);
  const address = requireTemporalAddress(config);
  const admin = await Connection.connect({ address });
  try {
    const added = await ensureSearchAttributes(admin, config.temporal.namespace);
    if (added.length) logger.info('registered search attributes', { added });
  } finally {
    await admin.close();
  }
  const connection = await NativeConnection.connect({ address });
  const db = connectDatabase(requireDatabaseUrl(config));
  const bundlePath = config.temporal.workflowBundlePath;
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    db,
    logger,
    workflowBundleCode: bundlePath ? fs.readFileSync(bundlePath, 'utf8') : await bundleWorkflows(logger),
  });
  logger.info('worker running', {
    task_queue: config.temporal.taskQueue,
    namespace: config.temporal.namespace,
  });
  // A supervisor that dies without a chance to signal us closes the IPC channel: follow it down.
  process.once('disconnect', () => worker.shutdown());
  try {
    await worker.run();
  } finally {
    await Promise.allSettled([db.close(), connection.close()]);
    logger.info('worker stopped');
  }
}
