import { Webhook } from 'standardwebhooks';
import { isSuccessStatus } from './rules';
import { NotificationRepository } from './repository';
import { ForbiddenDestinationError, postWebhook } from '../../platform/http-out';
import type { Database } from '../../platform/db';
import type { Logger } from '../../platform/logger';
import type { WorkerMetrics } from '../../platform/worker-metrics';

/** The receiver's answer is kept for operators, cut to this many characters. */
const RESPONSE_EXCERPT_CHARS = 2_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface DeliveryResult {
  /** delivered: a 2xx; retry: try again after the gap; failed: never again in this series. */
  outcome: 'delivered' | 'retry' | 'failed';
  httpStatus: number | null;
  error: string | null;
}

export interface DeliveryAttempt {
  notificationId: string;
  series: number;
  attempt: number;
  final: boolean;
  nextGapMs: number | null;
}

export interface DeliveryDeps {
  db: Database;
  logger: Logger;
  /** The app's Standard Webhooks secret (`whsec_…`), or undefined for an unknown app. */
  webhookSecret(appId: string): Promise<string | undefined>;
  /** Per attempt (SPEC §6: 10 s). */
  timeoutMs: number;
  /** Refuse notify_urls that resolve to loopback, private or link-local addresses (production). */
  guardAddresses: boolean;
  /** Counts each attempt this call records (not one found on record). */
  metrics?: Pick<WorkerMetrics, 'notificationAttempt'>;
}

/**
 * One delivery attempt (SPEC §6). HTTP failures are results (recorded, then retried on
 * schedule); only database failures throw. An attempt already recorded returns that record
 * instead of posting again, so a retried caller never sends one attempt twice once it is on
 * record (a caller lost between the POST and its record rightly posts it again, with the same
 * webhook-id).
 */
export function createDelivery(deps: DeliveryDeps): (input: DeliveryAttempt) => Promise<DeliveryResult> {
  const repo = new NotificationRepository(deps.db);

  return async function deliver(input) {
    const recorded = await repo.findAttempt(input.notificationId, input.series, input.attempt);
    if (recorded) {
      const ok = isSuccessStatus(recorded.httpStatus ?? undefined);
      return {
        outcome: ok ? 'delivered' : input.final ? 'failed' : 'retry',
        httpStatus: recorded.httpStatus,
        error: recorded.error,
      };
    }
    const notification = await repo.loadForDelivery(input.notificationId);
    if (!notification) return { outcome: 'failed', httpStatus: null, error: 'notification not found' };
    const secret = await deps.webhookSecret(notification.appId);
    if (!secret) return { outcome: 'failed', httpStatus: null, error: 'app not found' };

    const attemptedAt = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'durapay-webhooks/1',
      'webhook-id': notification.notificationId,
      'webhook-timestamp': String(Math.floor(attemptedAt.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(
        notification.notificationId,
        attemptedAt,
        notification.body,
      ),
    };
    let httpStatus: number | null = null;
    let error: string | null = null;
    let excerpt: string | null = null;
    let refused = false;
    let latencyMs = 0;
    try {
      const res = await postWebhook({
        url: notification.url,
        body: notification.body,
        headers,
        timeoutMs: deps.timeoutMs,
        maxBodyBytes: MAX_RESPONSE_BYTES,
        guardAddresses: deps.guardAddresses,
      });
      httpStatus = res.status;
      latencyMs = Math.round(res.latencyMs);
      excerpt = res.body.slice(0, RESPONSE_EXCERPT_CHARS);
      if (!isSuccessStatus(res.status)) error = `HTTP ${res.status}`;
    } catch (err) {
      latencyMs = Date.now() - attemptedAt.getTime();
      refused = err instanceof ForbiddenDestinationError;
      error = err instanceof Error ? err.message : String(err);
    }

    const delivered = isSuccessStatus(httpStatus ?? undefined);
    const outcome: DeliveryResult['outcome'] = delivered
      ? 'delivered'
      : refused || input.final
        ? 'failed'
        : 'retry';
    const isNewRecord = await repo.recordAttempt(
      notification.notificationId,
      {
        series: input.series,
        attempt: input.attempt,
        attemptedAt,
        httpStatus,
        latencyMs,
        error,
        responseExcerpt: excerpt,
      },
      {
        status: outcome === 'retry' ? 'pending' : outcome,
        nextAttemptAt:
          outcome === 'retry' && input.nextGapMs !== null ? new Date(Date.now() + input.nextGapMs) : null,
      },
    );
    if (isNewRecord) deps.metrics?.notificationAttempt(notification.eventType, outcome, input.attempt);
    deps.logger.info('notification attempt', {
      notification_id: notification.notificationId,
      app_id: notification.appId,
      series: input.series,
      attempt: input.attempt,
      http_status: httpStatus,
      latency_ms: latencyMs,
      outcome,
      ...(error ? { error } : {}),
    });
    return { outcome, httpStatus, error };
  };
}
