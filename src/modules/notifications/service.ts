import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { resendNotificationSignal, notificationWorkflowId, type NotificationWorkflowInput } from './messages';
import { searchAttributes } from '../../platform/workflow/definitions';
import type { Database } from '../../platform/db';
import { scaleDuration } from '../../platform/durations';
import { NotificationRepository } from './repository';
import type { NotificationRequest } from './rules';

export interface NotificationStartOptions {
  client: Client;
  taskQueue: string;
  input: NotificationWorkflowInput;
  tradeNo?: string | null;
}

function startOptions(opts: NotificationStartOptions) {
  const pairs = [
    { key: searchAttributes.AppId, value: opts.input.appId },
    { key: searchAttributes.BizStatus, value: 'pending' },
    ...(opts.tradeNo ? [{ key: searchAttributes.TradeNo, value: opts.tradeNo }] : []),
  ];
  return {
    taskQueue: opts.taskQueue,
    workflowId: notificationWorkflowId(opts.input.notificationId),
    args: [opts.input] as [NotificationWorkflowInput],
    typedSearchAttributes: new TypedSearchAttributes(pairs),
  };
}

/** Starts delivery of a stored notification; starting it again is a no-op. */
export async function startNotificationWorkflow(opts: NotificationStartOptions): Promise<void> {
  try {
    await opts.client.workflow.start('notificationWorkflow', {
      ...startOptions(opts),
      // A notification is delivered by one workflow run; a finished one is not restarted here.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** A fresh attempt series: signals the running workflow, or starts a new run of a finished one. */
export async function resendNotification(opts: NotificationStartOptions): Promise<void> {
  await opts.client.workflow.signalWithStart('notificationWorkflow', {
    ...startOptions(opts),
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    signal: resendNotificationSignal,
    signalArgs: [],
  });
}

export interface NotificationPublisherDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  /** Waits between attempts, unscaled (SPEC §6). */
  retryScheduleMs: readonly number[];
  timeScale: number;
}

/**
 * The one way an event becomes a merchant notification, for every module that has events:
 * store it (once per event key) and start its delivery workflow. Safe to call again: the same
 * event yields the same id.
 */
export class NotificationPublisher {
  private readonly repo: NotificationRepository;

  constructor(private readonly deps: NotificationPublisherDeps) {
    this.repo = new NotificationRepository(deps.db);
  }

  async publish(req: NotificationRequest): Promise<string> {
    const { notificationId } = await this.repo.insertOrGet(req);
    await startNotificationWorkflow({
      client: this.deps.client,
      taskQueue: this.deps.taskQueue,
      input: {
        notificationId,
        appId: req.appId,
        gapsMs: this.deps.retryScheduleMs.map((ms) => scaleDuration(ms, this.deps.timeScale)),
      },
      tradeNo: req.tradeNo,
    });
    return notificationId;
  }
}
