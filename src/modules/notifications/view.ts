import type { Notification, NotificationAttempt } from './model';

/** The notification as the API shows it (SPEC §6 list endpoint). */
export function notificationView(n: Notification) {
  const attempts = [...(n.attempts ?? [])].sort((a, b) => a.series - b.series || a.attempt - b.attempt);
  return {
    notification_id: n.notificationId,
    type: n.eventType,
    status: n.status,
    url: n.url,
    trade_no: n.tradeNo,
    refund_no: n.refundNo,
    application_id: n.applicationId,
    payload: JSON.parse(n.body) as unknown,
    // A notification is in its first series from the moment it is stored: the row says 0 only
    // until the publisher's first attempt opens that series, a moment later.
    series: Math.max(n.series, 1),
    attempt_count: n.attemptCount,
    next_attempt_at: n.nextAttemptAt?.toISOString() ?? null,
    last_error: n.lastError,
    delivered_at: n.deliveredAt?.toISOString() ?? null,
    created_at: n.createdAt.toISOString(),
    updated_at: n.updatedAt.toISOString(),
    attempts: attempts.map((a: NotificationAttempt) => ({
      series: a.series,
      attempt: a.attempt,
      attempted_at: a.attemptedAt.toISOString(),
      http_status: a.httpStatus,
      latency_ms: a.latencyMs,
      error: a.error,
    })),
  };
}

export type NotificationView = ReturnType<typeof notificationView>;
