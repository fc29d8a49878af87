import type { ApplicationRepository } from '../applications';
import type { ComplaintRepository } from '../complaints';
import type { NotificationRepository } from '../notifications';
import type { OrderRepository } from '../orders';
import type { ReconciliationRepository } from '../reconciliation';
import type { RefundRepository } from '../refunds';

/** How many days the overview counts, today included. */
export const OVERVIEW_DAYS = 30;

export interface OverviewSources {
  orders: OrderRepository;
  refunds: RefundRepository;
  notifications: NotificationRepository;
  applications: ApplicationRepository;
  reconciliation: ReconciliationRepository;
  complaints: ComplaintRepository;
}

/** One day's (or one channel's and pay method's) figures. Amounts in fen. */
interface Figures {
  orders: number;
  paid_orders: number;
  paid_amount: number;
  /** Refunds asked, whatever became of them. */
  refunds: number;
  /** The amount of those that succeeded. */
  refunded_amount: number;
  /** paid_orders / orders, to 4 places; null without orders. */
  conversion: number | null;
}

const none = (): Omit<Figures, 'conversion'> => ({
  orders: 0,
  paid_orders: 0,
  paid_amount: 0,
  refunds: 0,
  refunded_amount: 0,
});

const withConversion = (f: Omit<Figures, 'conversion'>): Figures => ({
  ...f,
  conversion: f.orders === 0 ? null : Math.round((f.paid_orders / f.orders) * 10_000) / 10_000,
});

/** The calendar day of `at` in `timeZone`, YYYY-MM-DD. */
export function dayIn(timeZone: string, at: Date): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}

/** The `count` calendar days that end with `lastDay`, oldest first. */
export function daysEndingOn(lastDay: string, count: number): string[] {
  const [y, m, d] = lastDay.split('-').map(Number) as [number, number, number];
  return Array.from({ length: count }, (_, i) =>
    new Date(Date.UTC(y, m - 1, d - (count - 1 - i))).toISOString().slice(0, 10),
  );
}

/**
 * The console's overview (docs/console.md): today and each of the last 30 days, counted in the
 * reconciliation's time zone; the same 30 days by channel and pay method; and the exceptions left
 * to a person, by kind. Every figure is aggregated by Postgres (one grouped read of the orders
 * and one of the refunds since the first day, through their created_at indexes; counts through
 * partial or status indexes), so it costs the same with 100 000 orders as with 100.
 */
/** The exceptions the overview counts, each left to a person. */
export const EXCEPTION_KINDS = [
  'needs_refund_review',
  'abnormal_refunds',
  'failed_notifications',
  'rejected_applications',
  'open_mismatches',
  'overdue_complaints',
] as const;

export async function overview(sources: OverviewSources, timeZone: string, now = new Date()) {
  const [orders, refunds, needsReview, abnormal, failed, rejected, open, overdue] = await Promise.all([
    sources.orders.tallySince(timeZone, OVERVIEW_DAYS),
    sources.refunds.tallySince(timeZone, OVERVIEW_DAYS),
    sources.orders.countNeedingRefundReview(),
    sources.refunds.countInStatus('abnormal'),
    sources.notifications.countInStatus('failed'),
    sources.applications.countStandingRejected(),
    sources.reconciliation.countOpenMismatches(),
    sources.complaints.overdueCount(),
  ]);
  const days = daysEndingOn(dayIn(timeZone, now), OVERVIEW_DAYS);
  const byDay = new Map(days.map((d) => [d, none()]));
  const byChannel = new Map<string, { channel_code: string; pay_method: string } & ReturnType<typeof none>>();
  const channel = (channelCode: string, payMethod: string) => {
    const key = `${channelCode}\u0000${payMethod}`;
    let f = byChannel.get(key);
    if (!f) byChannel.set(key, (f = { channel_code: channelCode, pay_method: payMethod, ...none() }));
    return f;
  };
  for (const t of orders) {
    const day = byDay.get(t.day);
    // A day before the first (the clock moved on between the read and now) is left out.
    if (!day) continue;
    for (const f of [day, channel(t.channelCode, t.payMethod)]) {
      f.orders += t.orders;
      f.paid_orders += t.paidOrders;
      f.paid_amount += t.paidAmount;
    }
  }
  for (const t of refunds) {
    const day = byDay.get(t.day);
    if (!day) continue;
    for (const f of [day, channel(t.channelCode, t.payMethod)]) {
      f.refunds += t.refunds;
      f.refunded_amount += t.refundedAmount;
    }
  }
  const today = days[days.length - 1]!;
  return {
    time_zone: timeZone,
    today: { date: today, ...withConversion(byDay.get(today)!) },
    days: days.map((date) => ({ date, ...withConversion(byDay.get(date)!) })),
    by_channel: [...byChannel.values()]
      .map((f) => withConversion(f) as Figures & { channel_code: string; pay_method: string })
      .sort(
        (a, b) => a.channel_code.localeCompare(b.channel_code) || a.pay_method.localeCompare(b.pay_method),
      ),
    exceptions: (
      [
        ['needs_refund_review', needsReview],
        ['abnormal_refunds', abnormal],
        ['failed_notifications', failed],
        ['rejected_applications', rejected],
        ['open_mismatches', open],
        ['overdue_complaints', overdue],
      ] as const satisfies readonly (readonly [(typeof EXCEPTION_KINDS)[number], number])[]
    ).map(([kind, count]) => ({ kind, count })),
  };
}
