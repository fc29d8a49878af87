import { randomUUID } from 'node:crypto';
import { diagnosticWorkflowId, type DiagnosticResult } from '../../diagnostics/messages';
import { resolvePayloadKeys } from '../../platform/crypto/keyring';
import { connectClient } from '../../platform/temporal';
import { boot } from '../boot';
import { fail } from '../config';

/** `durapay doctor`. */
export async function doctor(opts: { pauseMs: string }): Promise<void> {
  const { config } = boot('doctor');
  if (!config.temporal.address)
    fail('set TEMPORAL_ADDRESS (npm start prints it) to the server the worker uses');
  const { client, connection } = await connectClient(
    { address: config.temporal.address, namespace: config.temporal.namespace },
    resolvePayloadKeys(config),
  ).catch(fail);
  const runId = randomUUID();
  const started = Date.now();
  try {
    const result: DiagnosticResult = await client.workflow.execute('diagnosticWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: diagnosticWorkflowId(runId),
      args: [{ runId, pauseMs: Number(opts.pauseMs) }],
      workflowExecutionTimeout: '1 minute',
    });
    console.error(
      `ok: workflow ${diagnosticWorkflowId(runId)} wrote steps ${result.steps.join(', ')} in ${Date.now() - started} ms`,
    );
  } catch (err) {
    fail(
      `${err instanceof Error ? err.message : String(err)} (the worker serves the diagnostic ` +
        'workflow only when DURAPAY_DIAGNOSTIC_WORKFLOWS is on, the default outside production)',
    );
  } finally {
    await connection.close();
  }
}
