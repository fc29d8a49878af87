/**
 * What must hold after any chaos, read from the stack's database (the read model and the
 * sandbox channel's own tables) and from what the merchant's receiver got: no money moved twice,
 * nothing lost, every party agreeing on every order.
 */
import { Client } from 'pg';
import type { OrderJourney } from './shopper';

export interface Delivery {
  id: string;
  type: string;
  tradeNo?: string;
  refundNo?: string;
  transferNo?: string;
}

interface OrderRow {
  trade_no: string;
  merchant_order_no: string;
  status: string;
  amount: string;
  refunded_amount: string;
  expire_time: Date;
  channel_status: string | null;
  channel_refunded: string;
}

interface RefundRow {
  refund_no: string;
  trade_no: string;
  merchant_refund_no: string | null;
  status: string;
  refund_amount: string;
  channel_status: string | null;
}

export interface Census {
  orders: number;
  paid: number;
  closed: number;
  refunds: number;
  pendingOrders: number;
  processingRefunds: number;
}

/** Reads what the invariants need, for the orders of this app. */
export async function readState(databaseUrl: string, appId: string) {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const orders = (
      await pg.query<OrderRow>(
        `SELECT o.trade_no, o.merchant_order_no, o.status, o.amount, o.refunded_amount, o.expire_time,
                s.status AS channel_status,
                (SELECT COALESCE(SUM(r.amount), 0) FROM sandbox_refunds r
                  WHERE r.trade_no = o.trade_no AND r.status = 'success') AS channel_refunded
           FROM orders o LEFT JOIN sandbox_orders s ON s.trade_no = o.trade_no
          WHERE o.app_id = $1`,
        [appId],
      )
    ).rows;
    const refunds = (
      await pg.query<RefundRow>(
        `SELECT r.refund_no, r.trade_no, r.merchant_refund_no, r.status, r.refund_amount,
                s.status AS channel_status
           FROM refunds r LEFT JOIN sandbox_refunds s ON s.refund_no = r.refund_no
          WHERE r.app_id = $1`,
        [appId],
      )
    ).rows;
    // Channel orders durapay never recorded: money a buyer could pay that durapay would not know of.
    const orphans = (
      await pg.query<{ trade_no: string; status: string }>(
        `SELECT s.trade_no, s.status FROM sandbox_orders s
          WHERE s.subject = 'Chaos' AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_no = s.trade_no)`,
      )
    ).rows;
    return { orders, refunds, orphans };
  } finally {
    await pg.end();
  }
}

export type State = Awaited<ReturnType<typeof readState>>;

export function census(state: State): Census {
  const is = (s: string) => state.orders.filter((o) => o.status === s).length;
  return {
    orders: state.orders.length,
    paid: state.orders.filter((o) => ['paid', 'partially_refunded', 'refunded'].includes(o.status)).length,
    closed: is('closed'),
    refunds: state.refunds.length,
    pendingOrders: is('pending'),
    processingRefunds: state.refunds.filter((r) => r.status === 'processing').length,
  };
}

const PAID = ['paid', 'partially_refunded', 'refunded'];

/** Every violation of the chaos invariants, each in a sentence naming the order or refund. */
export function violations(journeys: OrderJourney[], state: State, deliveries: Delivery[]): string[] {
  const out: string[] = [];
  const byMerchantNo = new Map(state.orders.map((o) => [o.merchant_order_no, o]));
  const refundsByNo = new Map(state.refunds.map((r) => [r.refund_no, r]));
  const distinct = (type: string, key: (d: Delivery) => string | undefined, value: string) =>
    new Set(deliveries.filter((d) => d.type === type && key(d) === value).map((d) => d.id)).size;

  for (const j of journeys) {
    if (j.created?.status !== 200) continue;
    const o = byMerchantNo.get(j.merchantOrderNo);
    // Nothing lost: every create answered 200 is an order that reached a final state.
    if (!o) {
      out.push(`order ${j.merchantOrderNo} was answered 200 but is not in the read model`);
      continue;
    }
    if (o.trade_no !== j.tradeNo)
      out.push(`order ${j.merchantOrderNo} answered ${j.tradeNo}, recorded ${o.trade_no}`);
    if (o.status === 'pending') out.push(`order ${o.trade_no} is still pending after its expiry`);
    // Read model and channel agree.
    const channel = o.channel_status;
    if (channel === null) out.push(`order ${o.trade_no} is not at the channel`);
    else if ((channel === 'paid') !== PAID.includes(o.status)) {
      out.push(`order ${o.trade_no} is ${o.status} in durapay but ${channel} at the channel`);
    }
    // A payment the channel took is recorded.
    if (j.paid && !PAID.includes(o.status))
      out.push(`order ${o.trade_no} was paid by the buyer but is ${o.status}`);
    // Refunds: never more than the order, and exactly what the channel refunded.
    const amount = Number(o.amount);
    const refunded = Number(o.refunded_amount);
    if (refunded > amount) out.push(`order ${o.trade_no} refunded ${refunded} of ${amount}`);
    if (refunded !== Number(o.channel_refunded)) {
      out.push(`order ${o.trade_no} shows ${refunded} refunded, the channel ${o.channel_refunded}`);
    }
    // Exactly one announcement of the final state.
    if (PAID.includes(o.status)) {
      const n = distinct('payment.succeeded', (d) => d.tradeNo, o.trade_no);
      if (n !== 1) out.push(`order ${o.trade_no} was announced paid ${n} times`);
    } else if (o.status === 'closed') {
      const n = distinct('payment.closed', (d) => d.tradeNo, o.trade_no);
      if (n !== 1) out.push(`order ${o.trade_no} was announced closed ${n} times`);
    }
    for (const r of j.refunds) {
      if (r.answer?.status !== 200) continue;
      const refundNo = String(r.answer.data!.refund_no);
      const row = refundsByNo.get(refundNo);
      if (!row) {
        out.push(`refund ${r.merchantRefundNo} was answered 200 (${refundNo}) but is not in the read model`);
        continue;
      }
      if (row.status === 'processing') out.push(`refund ${refundNo} is still processing`);
      else if (row.status === 'failed' && row.channel_status === null) {
        // Never accepted by the channel (refused or unreachable): no money moved, and the client
        // was told at once; there is no refund workflow to announce it.
      } else if (row.channel_status !== row.status) {
        out.push(`refund ${refundNo} is ${row.status} in durapay but ${row.channel_status} at the channel`);
      } else {
        const n = distinct(
          `refund.${row.status === 'success' ? 'succeeded' : 'failed'}`,
          (d) => d.refundNo,
          refundNo,
        );
        if (n !== 1) out.push(`refund ${refundNo} was announced ${n} times`);
      }
    }
  }
  const sameMerchantRefundNo = new Map<string, number>();
  for (const r of state.refunds) {
    if (r.merchant_refund_no)
      sameMerchantRefundNo.set(
        r.merchant_refund_no,
        (sameMerchantRefundNo.get(r.merchant_refund_no) ?? 0) + 1,
      );
  }
  for (const [no, n] of sameMerchantRefundNo)
    if (n > 1) out.push(`merchant_refund_no ${no} made ${n} refunds`);
  // A create that timed out may leave its channel order behind unpaid (nobody got its pay_url);
  // one that was paid would be money durapay does not know of.
  for (const o of state.orphans) {
    if (o.status === 'paid') out.push(`channel order ${o.trade_no} was paid but is unknown to durapay`);
  }
  return out;
}
