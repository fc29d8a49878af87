/**
 * The `sharing` scenario of `npm run chaos`: orders with a profit share, paid, then refunded by
 * several refunds at once, some before the share is due, some while it is made, some after it
 * (returns from the receivers first) — while the worker is killed exactly between a share and a
 * refund, and between a refund's reservation and its row (./holds.ts). Its invariants are
 * counted at the channel (the sandbox's refunds, shares and returns), not in the answers.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { buyerPays, decided, paidInDurapay, type Answer, type ShopperStats } from './shopper';
import type { Delivery } from './invariants';

/** Receivers a merchant of the run shares with: the sandbox takes a MERCHANT_ID part back, never a person's. */
export const RECEIVER_SETS = {
  merchant: [{ type: 'MERCHANT_ID', account: '1900000101', name: 'Tea Partner', weight: 1 }],
  person: [{ type: 'PERSONAL_OPENID', account: 'o-chaos-person', weight: 1 }],
  both: [
    { type: 'MERCHANT_ID', account: '1900000102', name: 'Leaf Partner', weight: 2 },
    { type: 'PERSONAL_OPENID', account: 'o-chaos-person', weight: 1 },
  ],
} as const;

export interface SharingJourney {
  merchantOrderNo: string;
  merchantId: string;
  amount: number;
  share: number;
  created?: Answer;
  tradeNo?: string;
  paid: boolean;
  refunds: { merchantRefundNo: string; amount: number; afterMs: number; answer?: Answer }[];
}

export interface SharingShopperOptions {
  baseUrl: string;
  app: AppCredentials;
  notifyUrl: string;
  /** A merchant id per receiver set, made by `makeMerchants`. */
  merchants: string[];
  /** No new order after this (epoch ms)… */
  until: number;
  /** …nor once this says the run has what it came for (the planned kills happened). */
  done?: () => boolean;
  requestDeadlineMs: number;
  random: () => number;
  journeys: SharingJourney[];
  stats: ShopperStats;
}

/** One merchant per receiver set, each allowed to share the whole order. */
export async function makeMerchants(
  baseUrl: string,
  app: AppCredentials,
  stats: ShopperStats,
): Promise<string[]> {
  const ids: string[] = [];
  for (const [name, receivers] of Object.entries(RECEIVER_SETS)) {
    const merchantId = `chaos-${name}-${randomUUID().slice(0, 8)}`;
    const a = await decided(
      baseUrl,
      app,
      'POST',
      '/api/v1/merchant',
      {
        merchant_id: merchantId,
        merchant_name: `Chaos ${name}`,
        profit_sharing: { receivers, max_ratio: 1 },
      },
      stats,
      Date.now() + 60_000,
    );
    if (a?.status !== 200) throw new Error(`merchant ${merchantId} not created: ${JSON.stringify(a)}`);
    // Its account at the sandbox channel (SPEC §5.8), which its orders are made with.
    const attached = await decided(
      baseUrl,
      app,
      'PUT',
      `/api/v1/merchant/${merchantId}/channel-accounts/sandbox`,
      { sub_merchant_no: `S-${merchantId}` },
      stats,
      Date.now() + 60_000,
    );
    if (attached?.status !== 200) {
      throw new Error(`merchant ${merchantId} account not attached: ${JSON.stringify(attached)}`);
    }
    ids.push(merchantId);
  }
  return ids;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One shopper: an order with a share of up to the whole amount, paid, then one to three refunds
 * of random amounts sent at once, each after its own delay of up to 1.5 s (the share is due
 * 0.6 s after payment at the run's time scale), each sent again unchanged until decided.
 */
export async function shopWithSharing(o: SharingShopperOptions): Promise<void> {
  while (Date.now() < o.until && !o.done?.()) {
    const amount = 100 + Math.floor(o.random() * 900);
    const journey: SharingJourney = {
      merchantOrderNo: `CS-${randomUUID()}`,
      merchantId: o.merchants[Math.floor(o.random() * o.merchants.length)]!,
      amount,
      share: 1 + Math.floor(o.random() * amount),
      paid: false,
      refunds: [],
    };
    o.journeys.push(journey);
    const deadline = () => Date.now() + o.requestDeadlineMs;
    journey.created = await decided(
      o.baseUrl,
      o.app,
      'POST',
      '/api/v1/pay/unified-order',
      {
        merchant_order_no: journey.merchantOrderNo,
        pay_method: 'qr_code',
        amount,
        subject: 'Chaos sharing',
        notify_url: o.notifyUrl,
        merchant_id: journey.merchantId,
        profit_sharing_amount: journey.share,
      },
      o.stats,
      deadline(),
    );
    if (journey.created?.status !== 200) continue;
    journey.tradeNo = String(journey.created.data!.trade_no);
    const payUrl = (journey.created.data!.pay_credential as { pay_url: string }).pay_url;
    journey.paid = await buyerPays(payUrl, o.stats, deadline());
    if (!journey.paid || !(await paidInDurapay(o, journey.tradeNo, deadline()))) continue;
    const count = 1 + Math.floor(o.random() * 3);
    for (let i = 0; i < count; i++) {
      journey.refunds.push({
        merchantRefundNo: `CSR-${randomUUID()}`,
        amount: 1 + Math.floor(o.random() * amount),
        afterMs: Math.floor(o.random() * 1_500),
      });
    }
    await Promise.all(
      journey.refunds.map(async (r) => {
        await sleep(r.afterMs);
        r.answer = await decided(
          o.baseUrl,
          o.app,
          'POST',
          '/api/v1/pay/refund',
          { trade_no: journey.tradeNo, refund_amount: r.amount, merchant_refund_no: r.merchantRefundNo },
          o.stats,
          deadline(),
        );
      }),
    );
  }
}

interface SharingRow {
  trade_no: string;
  merchant_order_no: string;
  status: string;
  amount: string;
  refunded_amount: string;
  profit_sharing_status: string;
  profit_shared_amount: string;
  profit_returned_amount: string;
  channel_refunded: string;
  channel_refunding: string;
  channel_shared: string;
  channel_returned: string;
  channel_person_held: string;
  channel_refund_rows: string;
  refunds_processing: string;
  refunds_counted: string;
}

/** The orders of the run, with what the channel paid out for each. */
export async function readSharingState(databaseUrl: string, appId: string): Promise<SharingRow[]> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    return (
      await pg.query<SharingRow>(
        `SELECT o.trade_no, o.merchant_order_no, o.status, o.amount, o.refunded_amount,
                o.profit_sharing_status, o.profit_shared_amount, o.profit_returned_amount,
                (SELECT COALESCE(SUM(r.amount), 0) FROM sandbox_refunds r
                  WHERE r.trade_no = o.trade_no AND r.status IN ('success', 'abnormal')) AS channel_refunded,
                (SELECT COALESCE(SUM(r.amount), 0) FROM sandbox_refunds r
                  WHERE r.trade_no = o.trade_no AND r.status <> 'failed') AS channel_refunding,
                (SELECT COALESCE(SUM(s.amount), 0) FROM sandbox_profit_shares s
                  WHERE s.trade_no = o.trade_no) AS channel_shared,
                (SELECT COALESCE(SUM(x.amount), 0) FROM sandbox_share_returns x
                  WHERE x.trade_no = o.trade_no) AS channel_returned,
                (SELECT COALESCE(SUM((p->>'amount')::bigint), 0)
                   FROM sandbox_profit_shares s, jsonb_array_elements(s.receivers) p
                  WHERE s.trade_no = o.trade_no AND p->>'type' = 'PERSONAL_OPENID') AS channel_person_held,
                (SELECT count(*) FROM sandbox_refunds r WHERE r.trade_no = o.trade_no) AS channel_refund_rows,
                (SELECT count(*) FROM refunds r
                  WHERE r.trade_no = o.trade_no AND r.status = 'processing') AS refunds_processing,
                (SELECT COALESCE(SUM(r.refund_amount), 0) FROM refunds r
                  WHERE r.trade_no = o.trade_no AND r.status IN ('success', 'abnormal')) AS refunds_counted
           FROM orders o
          WHERE o.app_id = $1 AND o.profit_sharing_amount > 0`,
        [appId],
      )
    ).rows;
  } finally {
    await pg.end();
  }
}

const PAID = ['paid', 'partially_refunded', 'refunded'];

/**
 * Every broken rule of money, each in a sentence naming its order: the channel never paid out
 * more than the buyer paid (refunds, plus shares, less what came back), durapay's books say
 * what the channel did, nothing is left processing, and each refund answered 200 was made once
 * and announced once.
 */
export function sharingViolations(
  journeys: SharingJourney[],
  rows: SharingRow[],
  deliveries: Delivery[],
): string[] {
  const out: string[] = [];
  const byNo = new Map(rows.map((r) => [r.merchant_order_no, r]));
  for (const j of journeys) {
    if (j.created?.status !== 200) continue;
    const o = byNo.get(j.merchantOrderNo);
    if (!o) {
      out.push(`order ${j.merchantOrderNo} was answered 200 but is not in the read model`);
      continue;
    }
    const n = (x: string) => Number(x);
    const paidOut = n(o.channel_refunding) + n(o.channel_shared) - n(o.channel_returned);
    if (paidOut > n(o.amount))
      out.push(
        `order ${o.trade_no}: the channel paid out ${paidOut} of ${o.amount} (refunds ${o.channel_refunding}, shared ${o.channel_shared}, returned ${o.channel_returned})`,
      );
    if (n(o.channel_returned) > n(o.channel_shared))
      out.push(`order ${o.trade_no}: ${o.channel_returned} returned of ${o.channel_shared} shared`);
    if (j.paid && !PAID.includes(o.status)) out.push(`order ${o.trade_no} was paid but is ${o.status}`);
    if (n(o.refunds_processing) > 0) out.push(`order ${o.trade_no} has refunds still processing`);
    if (['pending', 'processing'].includes(o.profit_sharing_status))
      out.push(`order ${o.trade_no}: profit sharing still ${o.profit_sharing_status}`);
    const books = {
      refunded: [o.refunded_amount, o.channel_refunded, o.refunds_counted],
      shared: [o.profit_shared_amount, o.channel_shared],
      returned: [o.profit_returned_amount, o.channel_returned],
    };
    for (const [what, [ours, ...theirs]] of Object.entries(books)) {
      if (theirs.some((t) => n(t) !== n(ours!)))
        out.push(`order ${o.trade_no}: ${what} ${ours} in durapay, ${theirs.join(' / ')} elsewhere`);
    }
    for (const r of j.refunds) {
      const decidedAs = r.answer ? `${r.answer.status} ${r.answer.code}` : 'undecided';
      if (!['200 success', '422 refund_amount_exceed'].includes(decidedAs))
        out.push(`refund ${r.merchantRefundNo} of ${o.trade_no} was answered ${decidedAs}`);
      if (r.answer?.status !== 200) continue;
      // A repeat answered with a refund its order had already refused (status failed, never at
      // the channel) told the client its end itself: there is no refund workflow to announce it.
      if (r.answer.data!.status === 'failed') continue;
      const refundNo = String(r.answer.data!.refund_no);
      const announced = new Set(
        deliveries.filter((d) => d.refundNo === refundNo && d.type.startsWith('refund.')).map((d) => d.id),
      ).size;
      if (announced !== 1) out.push(`refund ${refundNo} of ${o.trade_no} was announced ${announced} times`);
    }
  }
  return out;
}

/**
 * Nothing stays reserved: for each paid order, one fen more than what can still be refunded
 * (all but what persons hold) is refused, and exactly that much is then refunded. The refunds
 * join their orders' journeys, so that the invariants check them too.
 */
export async function lastFen(
  o: { baseUrl: string; app: AppCredentials; stats: ShopperStats },
  journeys: SharingJourney[],
  rows: SharingRow[],
): Promise<string[]> {
  const out: string[] = [];
  const byNo = new Map(rows.map((r) => [r.merchant_order_no, r]));
  for (const j of journeys) {
    const row = byNo.get(j.merchantOrderNo);
    if (!j.tradeNo || !row || !PAID.includes(row.status)) continue;
    const rest = Number(row.amount) - Number(row.channel_refunded) - Number(row.channel_person_held);
    const send = async (amount: number) => {
      const r: SharingJourney['refunds'][number] = {
        merchantRefundNo: `CSL-${randomUUID()}`,
        amount,
        afterMs: 0,
      };
      r.answer = await decided(
        o.baseUrl,
        o.app,
        'POST',
        '/api/v1/pay/refund',
        { trade_no: j.tradeNo, refund_amount: amount, merchant_refund_no: r.merchantRefundNo },
        o.stats,
        Date.now() + 60_000,
      );
      j.refunds.push(r);
      return r;
    };
    const over = await send(rest + 1);
    if (`${over.answer?.status} ${over.answer?.code}` !== '422 refund_amount_exceed')
      out.push(
        `order ${j.tradeNo}: a refund of ${rest + 1} (one fen more than is left) was answered ${over.answer?.status} ${over.answer?.code}`,
      );
    if (rest > 0) {
      const exact = await send(rest);
      if (exact.answer?.status !== 200)
        out.push(
          `order ${j.tradeNo}: the last ${rest} could not be refunded: ${exact.answer?.status} ${exact.answer?.code} ${JSON.stringify(exact.answer?.data ?? '')}`,
        );
    }
  }
  return out;
}

/** After the last fen: every paid order gave back all that persons do not hold. */
export function leftReserved(journeys: SharingJourney[], rows: SharingRow[]): string[] {
  const byNo = new Map(rows.map((r) => [r.merchant_order_no, r]));
  const out: string[] = [];
  for (const j of journeys) {
    const row = byNo.get(j.merchantOrderNo);
    if (!j.tradeNo || !row || !PAID.includes(row.status)) continue;
    const expected = Number(row.amount) - Number(row.channel_person_held);
    if (Number(row.channel_refunded) !== expected)
      out.push(
        `order ${row.trade_no}: ${row.channel_refunded} refunded at the channel, ${expected} expected after the last fen`,
      );
  }
  return out;
}
