/** The notification workflow's messages (SPEC §6). */
import { defineSignal } from '@temporalio/workflow';

export const notificationWorkflowId = (notificationId: string) => `notification:${notificationId}`;

export interface NotificationWorkflowInput {
  notificationId: string;
  appId: string;
  /** Waits between attempts, already scaled; attempts = gaps + 1. */
  gapsMs: number[];
  /**
   * Attempt 1 of the first series, already made by the publisher: the workflow goes on from
   * attempt 2 after the first gap, or ends when it settled the series. Absent when the publisher
   * made none (a resend, or a series it did not claim): the workflow then makes attempt 1 itself.
   */
  firstAttempt?: { series: number; outcome: 'delivered' | 'retry' | 'failed' };
}

export type NotificationOutcome = 'delivered' | 'failed';

/** Starts a fresh attempt series now (POST /api/v1/notifications/{id}/resend). */
export const resendNotificationSignal = defineSignal('resendNotification');
