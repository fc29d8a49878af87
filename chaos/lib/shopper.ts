/**
 * The steady load of a chaos run: shoppers that create orders, pay some, refund some, and send
 * each request again, unchanged, until it gets an answer that decides it (200 or a 4xx) — as a
 * careful client of a gateway does when the gateway is restarting under it.
 */
import { randomUUID } from 'node:crypto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { signRequest } from '../../src/platform/crypto/http-signature';

export interface Answer {
  status: number;
  code: string;
  data: Record<string, unknown> | null;
}

/** What one shopper did to one order, for the invariants at the end. */
export interface OrderJourney {
  merchantOrderNo: string;
  amount: number;
  /** The create's deciding answer (`undefined`: none within the deadline). */
  created?: Answer;
  tradeNo?: string;
  /** The sandbox accepted the buyer's payment. */
  paid: boolean;
  refunds: { merchantRefundNo: string; amount: number; answer?: Answer }[];
}

export interface ShopperStats {
  requests: number;
  /** Sends that met no deciding answer (connection refused, 5xx, 429) and were sent again. */
  retries: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One of `weights`' values, drawn with its weight. */
export function pick<T>(random: () => number, weights: [T, number][]): T {
  let r = random() * weights.reduce((s, [, w]) => s + w, 0);
  for (const [value, w] of weights) {
    r -= w;
    if (r < 0) return value;
  }
  return weights[weights.length - 1]![0];
}

/**
 * Sends a signed request until it is decided: a 200 or a 4xx other than 429, or an answer
 * `decides` takes as final. Every resend is the same request (the same merchant_order_no or
 * merchant_refund_no), with a fresh signature.
 */
export async function decided(
  baseUrl: string,
  app: AppCredentials,
  method: string,
  target: string,
  json: unknown,
  stats: ShopperStats,
  deadline: number,
  decides?: (status: number, code: string) => boolean,
): Promise<Answer | undefined> {
  const body = json === undefined ? undefined : JSON.stringify(json);
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    stats.requests += 1;
    try {
      const signed = signRequest({ method, target, body, keyId: app.app_id, secret: app.secret });
      const res = await fetch(`${baseUrl}${target}`, {
        method,
        headers: { ...signed, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body,
        signal: AbortSignal.timeout(15_000),
      });
      const env = (await res.json()) as { code: string; data: Record<string, unknown> | null };
      if ((res.status < 500 && res.status !== 429) || decides?.(res.status, env.code))
        return { status: res.status, code: env.code, data: env.data };
    } catch {
      // Refused or cut off: the API is restarting.
    }
    stats.retries += 1;
    await sleep(Math.min(2_000, 100 * 2 ** attempt));
  }
  return undefined;
}

/** The buyer presses Pay: true when the sandbox took the payment, false when it refused it. */
export async function buyerPays(payUrl: string, stats: ShopperStats, deadline: number): Promise<boolean> {
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    stats.requests += 1;
    try {
      const res = await fetch(payUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"result":"success"}',
        signal: AbortSignal.timeout(15_000),
      });
      if (res.status < 500) return res.ok;
    } catch {
      // The sandbox lives in the API process, which is restarting.
    }
    stats.retries += 1;
    await sleep(Math.min(2_000, 100 * 2 ** attempt));
  }
  return false;
}

/** Waits until durapay shows the order paid (the payment may reach it only by polling). */
export async function paidInDurapay(
  o: Pick<ShopperOptions, 'baseUrl' | 'app' | 'stats'>,
  tradeNo: string,
  deadline: number,
): Promise<boolean> {
  while (Date.now() < deadline) {
    const a = await decided(
      o.baseUrl,
      o.app,
      'GET',
      `/api/v1/pay/query/${tradeNo}`,
      undefined,
      o.stats,
      deadline,
    );
    if (a?.data?.status === 'paid') return true;
    await sleep(250);
  }
  return false;
}

export interface ShopperOptions {
  baseUrl: string;
  app: AppCredentials;
  notifyUrl: string;
  /** Stop starting new orders at this time (ms since the epoch)… */
  until: number;
  /** …unless this says to go on (a run that must check a minimum number of orders). */
  goOn?: () => boolean;
  /** Give up resending a request after this long. */
  requestDeadlineMs: number;
  random: () => number;
  journeys: OrderJourney[];
  stats: ShopperStats;
  onOrder?: () => void;
}

/** One shopper: orders one after another until `until` (and `goOn` says no more). */
export async function shop(o: ShopperOptions): Promise<void> {
  while (Date.now() < o.until || o.goOn?.()) {
    const amount = 100 + Math.floor(o.random() * 900);
    const journey: OrderJourney = { merchantOrderNo: `CH-${randomUUID()}`, amount, paid: false, refunds: [] };
    o.journeys.push(journey);
    const modes = ['normal', 'normal', 'normal', 'drop', 'duplicate'];
    const order = {
      merchant_order_no: journey.merchantOrderNo,
      pay_method: 'qr_code',
      amount,
      subject: 'Chaos',
      notify_url: o.notifyUrl,
      // 5 to 20 minutes at the run's time scale: some are paid, the rest expire.
      expire_minutes: 5 + Math.floor(o.random() * 16),
      extra: { sandbox: { callback: modes[Math.floor(o.random() * modes.length)] } },
    };
    const deadline = () => Date.now() + o.requestDeadlineMs;
    journey.created = await decided(
      o.baseUrl,
      o.app,
      'POST',
      '/api/v1/pay/unified-order',
      order,
      o.stats,
      deadline(),
    );
    o.onOrder?.();
    if (journey.created?.status !== 200) continue;
    journey.tradeNo = String(journey.created.data!.trade_no);
    const payUrl = (journey.created.data!.pay_credential as { pay_url: string }).pay_url;
    if (o.random() < 0.6) journey.paid = await buyerPays(payUrl, o.stats, deadline());
    if (journey.paid && o.random() < 0.5 && (await paidInDurapay(o, journey.tradeNo, deadline()))) {
      // A partial refund, sometimes followed by the rest.
      const first = Math.max(1, Math.floor(amount * o.random()));
      for (const refundAmount of o.random() < 0.5 ? [first] : [first, amount - first]) {
        if (refundAmount < 1) continue;
        const refund: OrderJourney['refunds'][number] = {
          merchantRefundNo: `CR-${randomUUID()}`,
          amount: refundAmount,
        };
        journey.refunds.push(refund);
        refund.answer = await decided(
          o.baseUrl,
          o.app,
          'POST',
          '/api/v1/pay/refund',
          {
            trade_no: journey.tradeNo,
            refund_amount: refundAmount,
            merchant_refund_no: refund.merchantRefundNo,
          },
          o.stats,
          deadline(),
        );
      }
    }
  }
}
