import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { resendNotificationSignal, notificationWorkflowId, type NotificationWorkflowInput } from './messages';
import { searchAttributes } from '../../platform/workflow/definitions';
import type { Database } from '../../platform/db';
import { scaleDuration } from '../../platform/durations';
import { NotificationRepository } from './repository';
import type { NotificationRequest } from './rules';
import type { DeliveryAttempt, DeliveryResult } from './delivery';

export interface NotificationStartOptions {
  client: Client;
  taskQueue: string;
  input: NotificationWorkflowInput;
  tradeNo?: string | null;
}

function startOptions(opts: NotificationStartOptions) {
  const first = opts.input.firstAttempt?.outcome;
  const pairs = [
    { key: searchAttributes.AppId, value: opts.input.appId },
    // A first attempt that settled the series shows at once: the workflow need not upsert it.
    {
      key: searchAttributes.BizStatus,
      value: first === 'delivered' || first === 'failed' ? first : 'pending',
    },
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

/** What a resend needs: where the delivery workflow runs, and the retry schedule it follows. */
export interface NotificationResendDeps {
  client: Client;
  taskQueue: string;
  notifications: { retryScheduleMs: number[] };
  timeScale: number;
}

/**
 * Sends a stored notification again as a fresh attempt series (SPEC §6), on the schedule of the
 * configuration: the API's resend and the operator console's.
 */
export async function resendStoredNotification(
  deps: NotificationResendDeps,
  notification: { notificationId: string; appId: string; tradeNo: string | null },
): Promise<void> {
  await resendNotification({
    client: deps.client,
    taskQueue: deps.taskQueue,
    input: {
      notificationId: notification.notificationId,
      appId: notification.appId,
      gapsMs: deps.notifications.retryScheduleMs.map((ms) => scaleDuration(ms, deps.timeScale)),
    },
    tradeNo: notification.tradeNo,
  });
}

export interface NotificationPublisherDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  /** Waits between attempts, unscaled (SPEC §6). */
  retryScheduleMs: readonly number[];
  timeScale: number;
  /** One delivery attempt (./delivery.ts). */
  deliver(input: DeliveryAttempt): Promise<DeliveryResult>;
}

/**
 * The one way an event becomes a merchant notification, for every module that has events:
 * store it (once per event key), make its first attempt, and start its delivery workflow only
 * when that attempt calls for a retry. Safe to call again: the same event yields the same id,
 * and an attempt on record is not sent again (a retried publish finds its outcome).
 *
 * Most receivers answer the first attempt, so making it here, in the producer's own activity
 * (for an order, inside the workflow task that records the payment or the close), spares the
 * buyer's payment a round trip before it reaches the merchant. A notification the first attempt
 * settles (delivered, or refused for good: a forbidden destination, an unknown app) is a
 * database row only, with no workflow (SPEC §7): most notifications cost Temporal nothing. One
 * to retry starts its workflow, which waits the first gap and goes on from attempt 2. A resend
 * starts a workflow for any notification (resendNotification).
 */
export class NotificationPublisher {
  private readonly repo: NotificationRepository;

  constructor(private readonly deps: NotificationPublisherDeps) {
    this.repo = new NotificationRepository(deps.db);
  }

  async publish(req: NotificationRequest): Promise<string> {
    const { notificationId, created } = await this.repo.insertOrGet(req);
    const gapsMs = this.deps.retryScheduleMs.map((ms) => scaleDuration(ms, this.deps.timeScale));
    const series = await this.repo.claimFirstSeries(notificationId, created);
    let firstAttempt: NotificationWorkflowInput['firstAttempt'];
    if (series !== null) {
      const result = await this.deps.deliver({
        notificationId,
        series,
        attempt: 1,
        final: gapsMs.length === 0,
        nextGapMs: gapsMs[0] ?? null,
      });
      firstAttempt = { series, outcome: result.outcome };
      // Settled at once: the row says so, and nothing is left for a workflow to do.
      if (result.outcome !== 'retry') return notificationId;
    }
    await startNotificationWorkflow({
      client: this.deps.client,
      taskQueue: this.deps.taskQueue,
      input: { notificationId, appId: req.appId, gapsMs, ...(firstAttempt ? { firstAttempt } : {}) },
      tradeNo: req.tradeNo,
    });
    return notificationId;
  }
}
