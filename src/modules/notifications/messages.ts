/** The notification workflow's messages (SPEC §6). */
import { defineSignal } from '@temporalio/workflow';

export const patches = {
  /** The notification workflow opens its attempt series in a local activity. */
  notificationLocalSeries: 'notification-local-series',
} as const;

export const notificationWorkflowId = (notificationId: string) => `notification:${notificationId}`;

export interface NotificationWorkflowInput {
  notificationId: string;
  appId: string;
  /** Waits between attempts, already scaled; attempts = gaps + 1. */
  gapsMs: number[];
}

export type NotificationOutcome = 'delivered' | 'failed';

/** Starts a fresh attempt series now (POST /api/v1/notifications/{id}/resend). */
export const resendNotificationSignal = defineSignal('resendNotification');
