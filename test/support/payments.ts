/**
 * An app's view of the payment endpoints for tests, and counts of what each request left at
 * the channel (the sandbox's rows and request counts), in the read model and at the receiver.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { signSandboxPayload } from '../../src/channels/sandbox/signature';
import type { AppCredentials } from '../../src/modules/apps/repository';
import type { TestStack } from './harness';
import { envelope, type Envelope } from './http';
import type { Receiver } from './receiver';
import { settledIn } from './settled';
import { signedFetch } from './signing';
import { until } from './wait';

export interface Created {
  trade_no: string;
  pay_credential: { pay_url: string; qr_code: string };
  is_idempotent: boolean;
}

export interface Answer<T = Record<string, unknown>> extends Envelope<T> {
  status: number;
}

export function paymentsClient(stack: TestStack, app: AppCredentials, receiver: Receiver) {
  const post = async <T = Record<string, unknown>>(path: string, json: unknown): Promise<Answer<T>> => {
    const res = await signedFetch(stack.baseUrl, app, 'POST', path, { json });
    return { status: res.status, ...(await envelope<T>(res)) };
  };
  const get = async <T = Record<string, unknown>>(path: string): Promise<Answer<T>> => {
    const res = await signedFetch(stack.baseUrl, app, 'GET', path);
    return { status: res.status, ...(await envelope<T>(res)) };
  };
  const put = async <T = Record<string, unknown>>(path: string, json: unknown): Promise<Answer<T>> => {
    const res = await signedFetch(stack.baseUrl, app, 'PUT', path, { json });
    return { status: res.status, ...(await envelope<T>(res)) };
  };
  const del = async <T = Record<string, unknown>>(path: string): Promise<Answer<T>> => {
    const res = await signedFetch(stack.baseUrl, app, 'DELETE', path);
    return { status: res.status, ...(await envelope<T>(res)) };
  };

  /** Attaches the merchant's account at a channel (SPEC §5.8); throws unless it succeeded. */
  const attach = async (merchantId: string, channelCode: string, fields: Record<string, string>) => {
    const a = await put(`/api/v1/merchant/${merchantId}/channel-accounts/${channelCode}`, fields);
    if (a.code !== 'success') throw new Error(`attach failed: ${a.code} ${a.message}`);
    return a.data!;
  };

  /** A new merchant of this app with an account at the sandbox channel, for its orders. */
  const merchant = async (fields: Record<string, unknown> = {}): Promise<string> => {
    const merchantId = `m-${randomUUID().slice(0, 12)}`;
    const made = await post('/api/v1/merchant', {
      merchant_id: merchantId,
      merchant_name: 'Tea House',
      ...fields,
    });
    if (made.code !== 'success') throw new Error(`merchant failed: ${made.code} ${made.message}`);
    await attach(merchantId, 'sandbox', { sub_merchant_no: `S-${merchantId}` });
    return merchantId;
  };

  const orderBody = (overrides: Record<string, unknown> = {}) => ({
    merchant_order_no: `M-${randomUUID()}`,
    pay_method: 'qr_code',
    amount: 100,
    subject: 'Coffee',
    notify_url: receiver.url,
    ...overrides,
  });

  const count = async (sql: string, replacements: Record<string, unknown> = {}): Promise<number> => {
    const rows = await stack.database.db.sequelize.query<{ n: string | null }>(sql, {
      replacements,
      type: QueryTypes.SELECT,
    });
    return Number(rows[0]?.n ?? 0);
  };

  const query = async (tradeNo: string) => (await get(`/api/v1/pay/query/${tradeNo}`)).data!;

  /** The trade_no of this app's order, for a create whose answer did not carry it; undefined: none. */
  const tradeNoOf = async (merchantOrderNo: string): Promise<string | undefined> => {
    const [row] = await stack.database.db.sequelize.query<{ trade_no: string }>(
      'SELECT trade_no FROM orders WHERE app_id = :app AND merchant_order_no = :merchantOrderNo',
      { replacements: { app: app.app_id, merchantOrderNo }, type: QueryTypes.SELECT },
    );
    return row?.trade_no;
  };

  const statusIs = (tradeNo: string, status: string, timeoutMs?: number) =>
    until(
      `order ${tradeNo} ${status}`,
      async () => ((await query(tradeNo)).status === status ? true : undefined),
      timeoutMs,
    );

  const buyerPays = (payUrl: string, result: 'success' | 'fail' = 'success') =>
    fetch(payUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result }),
    });

  const create = async (overrides: Record<string, unknown> = {}): Promise<Created> => {
    const a = await post<Created>('/api/v1/pay/unified-order', orderBody(overrides));
    if (a.code !== 'success') throw new Error(`create failed: ${a.code} ${a.message}`);
    return a.data!;
  };

  const paidOrder = async (overrides: Record<string, unknown> = {}): Promise<Created> => {
    const created = await create(overrides);
    await buyerPays(created.pay_credential.pay_url);
    await statusIs(created.trade_no, 'paid');
    return created;
  };

  /**
   * An order the buyer paid after durapay closed it: the close was lost at the channel, which
   * says paid, and its signed callback comes late. The order ends `paid`, flagged
   * needs_refund_review.
   */
  const paidAfterClose = async (overrides: Record<string, unknown> = {}): Promise<Created> => {
    const created = await create({ amount: 90, extra: { sandbox: { callback: 'drop' } }, ...overrides });
    const closed = await post('/api/v1/pay/close', { trade_no: created.trade_no });
    if (closed.code !== 'success') throw new Error(`close failed: ${closed.code} ${closed.message}`);
    await statusIs(created.trade_no, 'closed');
    await stack.database.db.sequelize.query(
      "UPDATE sandbox_orders SET status = 'paid', paid_at = now(), closed_at = NULL WHERE trade_no = :t",
      { replacements: { t: created.trade_no } },
    );
    const [paid] = await stack.database.db.sequelize.query<{ amount: string }>(
      'SELECT amount FROM sandbox_orders WHERE trade_no = :t',
      { replacements: { t: created.trade_no }, type: QueryTypes.SELECT },
    );
    const late = JSON.stringify({
      event_id: randomUUID(),
      type: 'payment.paid',
      trade_no: created.trade_no,
      channel_trade_no: `SBX-late-${randomUUID().slice(0, 8)}`,
      amount: Number(paid!.amount),
      currency: 'CNY',
      paid_at: new Date().toISOString(),
    });
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, {
      method: 'POST',
      body: late,
      headers: { 'sandbox-signature': signSandboxPayload(stack.sandboxSecret, late) },
    });
    const answer = await res.text();
    if (answer !== 'success') throw new Error(`the late callback was answered ${res.status} ${answer}`);
    await statusIs(created.trade_no, 'paid');
    return created;
  };

  /** The notifications of one type the receiver got for an order (or a refund's order). */
  const notificationsFor = (tradeNo: string, type: string) =>
    receiver.received.filter((r) => {
      const body = JSON.parse(r.body) as { type: string; data: { trade_no?: string } };
      return body.type === type && body.data.trade_no === tradeNo;
    });

  /** Requests the channel received to create this order (1 when durapay asked once). */
  const channelCreates = (tradeNo: string) =>
    count('SELECT COALESCE(SUM(create_requests), 0) AS n FROM sandbox_orders WHERE trade_no = :tradeNo', {
      tradeNo,
    });

  /** Waits until nothing more can come of the order (./settled.ts): then counts are final. */
  const settled = settledIn(stack);

  return {
    post,
    get,
    put,
    del,
    attach,
    merchant,
    settled,
    orderBody,
    count,
    query,
    tradeNoOf,
    statusIs,
    buyerPays,
    create,
    paidOrder,
    paidAfterClose,
    notificationsFor,
    channelCreates,
  };
}

export type PaymentsClient = ReturnType<typeof paymentsClient>;

/** Runs `round` `rounds` times, `parallel` at a time, and returns every result in order. */
export async function inRounds<T>(
  rounds: number,
  parallel: number,
  round: (i: number) => Promise<T>,
): Promise<T[]> {
  const out: T[] = new Array<T>(rounds);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, rounds) }, async () => {
      while (next < rounds) {
        const i = next++;
        out[i] = await round(i);
      }
    }),
  );
  return out;
}
