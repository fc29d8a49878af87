/** SPEC §6 events. */
export const NOTIFICATION_EVENTS = [
  'payment.succeeded',
  'payment.closed',
  'refund.succeeded',
  'refund.failed',
  'refund.abnormal',
  'merchant.application.updated',
  'merchant.channel_account.updated',
  'transfer.succeeded',
  'transfer.failed',
  'transfer.cancelled',
  'reconciliation.completed',
  'reconciliation.mismatch',
  'complaint.created',
  'complaint.updated',
  'complaint.reply_due',
  'complaint.overdue',
  'contract.signed',
  'contract.cancelled',
  'contract.deduction_failed',
  'contract.ended',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

export const NOTIFICATION_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** What a producer (an order, refund or application workflow) hands to `publishNotification`. */
export interface NotificationRequest {
  appId: string;
  type: NotificationEvent;
  /** Names the event uniquely within the app; publishing the same key twice sends once. */
  eventKey: string;
  url: string;
  /** The resource as its query endpoint returns it; `app_id` is added. */
  data: Record<string, unknown>;
  /** When the event happened (RFC 3339); the body's `timestamp`. */
  occurredAt: string;
  tradeNo?: string;
  refundNo?: string;
  applicationId?: string;
}

/** The body POSTed to the receiver; built once and sent unchanged on every attempt. */
export function notificationBody(req: NotificationRequest): string {
  return JSON.stringify({
    type: req.type,
    timestamp: req.occurredAt,
    data: { ...req.data, app_id: req.appId },
  });
}

export function isSuccessStatus(status: number | undefined): boolean {
  return status !== undefined && status >= 200 && status < 300;
}
