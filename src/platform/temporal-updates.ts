import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from './logger';

/**
 * The server refuses an update it cannot take now: more than its limit of in-flight updates on
 * one workflow (RESOURCE_EXHAUSTED), an update aborted because the run continued as new or its
 * workflow task was lost (UNAVAILABLE, ABORTED), or one whose workflow task the server failed
 * while it was in flight (FAILED_PRECONDITION, "unexpected workflow task failure": the server
 * calls it transient, to be retried), or one the server sent to a worker in a workflow task
 * that completed without taking it (the server rejects it as `UnprocessedUpdate`: seen when
 * identical creates arrive at once, past the in-flight limit). None was applied, so the update
 * is sent again (every update durapay sends is idempotent).
 */
export function isTransientUpdateError(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const { code, message, type } = e as { code?: unknown; message?: unknown; type?: unknown };
    if (code === 8 || code === 10 || code === 14) return true;
    if (type === 'UnprocessedUpdate') return true;
    if (
      typeof message === 'string' &&
      /in-flight updates|update was aborted|workflow is closing|unexpected workflow task failure|registry was cleared/i.test(
        message,
      )
    ) {
      return true;
    }
  }
  return false;
}

export interface UpdateDelivery {
  client: Client;
  /** When the caller stops waiting (epoch ms). */
  deadline: number;
  log: Logger;
  /** The workflow the update goes to, when it exists already (not update-with-start). */
  workflowId?: string;
  /**
   * An update-with-start: a run that completed while the update waited for it (the server
   * answers NOT_FOUND, "workflow execution already completed") never saw the update, and a new
   * attempt starts the workflow's next run for it.
   */
  withStart?: boolean;
}

/**
 * An update that raced its workflow's continue-as-new can find the old run already completed
 * (WorkflowNotFoundError) although the workflow lives on in its new run: the update was not
 * applied, and the workflow id still has a running execution to send it to.
 */
async function continuedAsNew(
  client: Client,
  err: unknown,
  workflowId: string | undefined,
): Promise<boolean> {
  if (!workflowId || !(err instanceof WorkflowNotFoundError)) return false;
  try {
    const { status } = await client.workflow.getHandle(workflowId).describe();
    return status.name === 'RUNNING';
  } catch {
    return false;
  }
}

/**
 * Runs a workflow update within the deadline, sending it again while the server is busy or the
 * workflow is moving to a new run (the update must be idempotent).
 */
export async function deliverUpdate<T>(fn: () => Promise<T>, opts: UpdateDelivery): Promise<T> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await opts.client.withDeadline(opts.deadline, fn);
    } catch (err) {
      const pause = Math.min(1_000, 25 * 2 ** attempt) * (0.5 + Math.random());
      if (Date.now() + pause >= opts.deadline) throw err;
      const again =
        isTransientUpdateError(err) ||
        (opts.withStart === true && err instanceof WorkflowNotFoundError) ||
        (await continuedAsNew(opts.client, err, opts.workflowId));
      if (!again) throw err;
      opts.log.info('workflow update sent again', {
        attempt: attempt + 1,
        after_ms: Date.now() - started,
        error: err instanceof Error ? err.message : String(err),
      });
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}
