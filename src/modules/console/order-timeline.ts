import type { ReceivedCallback } from '../callbacks';
import type { Notification } from '../notifications';
import type { Order, ShareStep } from '../orders';
import type { Refund } from '../refunds';

/** What an entry of an order's timeline tells, in the order the page's legend lists them. */
export const TIMELINE_KINDS = [
  'created',
  'callback',
  'paid',
  'closed',
  'refund_requested',
  'refund_settled',
  'share_step',
  'notification',
  'notification_attempt',
] as const;

/** One thing that happened to an order, as the console's order page shows it. */
export interface TimelineEntry {
  /** When, RFC 3339. */
  at: string;
  kind: (typeof TIMELINE_KINDS)[number];
  summary: string;
  detail?: Record<string, unknown>;
}

export interface OrderHistory {
  order: Order;
  refunds: Refund[];
  shares: (ShareStep & { createdAt: Date })[];
  notifications: Notification[];
  callbacks: ReceivedCallback[];
}

const fen = (n: number | string) => `${Number(n)} fen`;

/**
 * The order's timeline, oldest first, built from what durapay stores of it: its row (created,
 * paid, closed), the channel's callbacks still kept, its refunds, its profit-sharing steps, and
 * its notifications with each delivery attempt. What is not stored (a channel call that got no
 * answer, a poll) is in its workflow's history, which `workflow_url` opens.
 */
export function orderTimeline(h: OrderHistory): TimelineEntry[] {
  const { order } = h;
  const entries: TimelineEntry[] = [
    {
      at: order.createdAt.toISOString(),
      kind: 'created',
      summary: `created: ${fen(order.amount)} by ${order.payMethod} at ${order.channelCode ?? 'no channel yet (the buyer picks one)'}`,
      detail: { merchant_order_no: order.merchantOrderNo, merchant_id: order.merchantId },
    },
  ];
  for (const c of h.callbacks) {
    entries.push({
      at: c.receivedAt.toISOString(),
      kind: 'callback',
      summary: `callback from ${c.channelCode}: ${c.outcome}${c.verified ? '' : ' (not verified)'}`,
      detail: { verified: c.verified, outcome: c.outcome, error: c.error, refund_no: c.refundNo },
    });
  }
  if (order.payTime) {
    entries.push({
      at: order.payTime.toISOString(),
      kind: 'paid',
      summary: order.needsRefundReview
        ? 'paid after it was closed: flagged for a refund review'
        : `paid: ${fen(order.amount)}`,
      detail: { channel_trade_no: order.channelTradeNo },
    });
  }
  if (order.closedAt) {
    entries.push({ at: order.closedAt.toISOString(), kind: 'closed', summary: 'closed' });
  }
  for (const r of h.refunds) {
    entries.push({
      at: r.createdAt.toISOString(),
      kind: 'refund_requested',
      summary: `refund ${r.refundNo} of ${fen(r.refundAmount)} asked`,
      detail: { refund_no: r.refundNo, merchant_refund_no: r.merchantRefundNo, reason: r.reason },
    });
    if (r.status !== 'processing') {
      entries.push({
        at: (r.refundTime ?? r.updatedAt).toISOString(),
        kind: 'refund_settled',
        summary: `refund ${r.refundNo} ${r.status}`,
        detail: { refund_no: r.refundNo, channel_refund_no: r.channelRefundNo, fail_reason: r.failReason },
      });
    }
  }
  for (const s of h.shares) {
    entries.push({
      at: s.createdAt.toISOString(),
      kind: 'share_step',
      summary: `profit sharing ${s.kind} of ${fen(s.amount)}: ${s.status}`,
      detail: {
        step_no: s.stepNo,
        refund_no: s.refundNo ?? null,
        receivers: s.receivers,
        channel_no: s.channelNo ?? null,
        fail_reason: s.failReason ?? null,
      },
    });
  }
  for (const n of h.notifications) {
    entries.push({
      at: n.createdAt.toISOString(),
      kind: 'notification',
      summary: `${n.eventType} to ${n.url}: ${n.status}`,
      detail: { notification_id: n.notificationId, refund_no: n.refundNo },
    });
    const attempts = [...(n.attempts ?? [])].sort((a, b) => a.series - b.series || a.attempt - b.attempt);
    for (const a of attempts) {
      const answer = a.httpStatus === null ? (a.error ?? 'no answer') : `HTTP ${a.httpStatus}`;
      entries.push({
        at: a.attemptedAt.toISOString(),
        kind: 'notification_attempt',
        summary: `${n.eventType} attempt ${a.series}.${a.attempt}: ${answer}`,
        detail: {
          notification_id: n.notificationId,
          series: a.series,
          attempt: a.attempt,
          http_status: a.httpStatus,
          latency_ms: a.latencyMs,
          error: a.error,
        },
      });
    }
  }
  // Oldest first; what happened at the same instant stays in the order it was listed above.
  return entries
    .map((entry, i) => ({ entry, i }))
    .sort((a, b) => a.entry.at.localeCompare(b.entry.at) || a.i - b.i)
    .map(({ entry }) => entry);
}
