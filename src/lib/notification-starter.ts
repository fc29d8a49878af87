import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import {
  resendNotificationSignal,
  searchAttributes,
  workflowIds,
  type NotificationWorkflowInput,
} from '../workflows/definitions';

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
    workflowId: workflowIds.notification(opts.input.notificationId),
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
