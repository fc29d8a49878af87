/**
 * The operator console's data routes (docs/console.md "Lists" and "Actions", SPEC §12) over HTTP
 * against the real stack: every list across apps with its filters and keyset pages; an order's
 * page with its timeline; the overview; and every action through the service the API calls, for
 * the target's own app — its success, its refusals (unknown target, bad body, a viewer, the
 * service's own codes) — each written to the audit log with the target before and after.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { billDateOf } from '../../src/modules/reconciliation/rules';
import { transferWorkflowId } from '../../src/modules/transfers/messages';
import { signIn, type ConsoleAnswer, type ConsoleClient } from '../support/console';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';
import { settledIn } from '../support/settled';

jest.setTimeout(180_000);

let stack: TestStack;
let appA: AppCredentials;
let appB: AppCredentials;
let receiver: Receiver;
let failing: Receiver;
let payA: PaymentsClient;
let payB: PaymentsClient;
let operator: ConsoleClient;
let viewer: ConsoleClient;
let admin: ConsoleClient;

beforeAll(async () => {
  // Notifications give up after three attempts, a few milliseconds apart.
  stack = await startTestStack({
    timeScale: 0.01,
    sandboxRefundDelayMs: 100,
    notifications: { retryScheduleMs: [50, 50], timeoutMs: 2_000 },
  });
  appA = await stack.createApp(['payments', 'merchants']);
  appB = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  failing = await new Receiver().answer(500).start();
  payA = paymentsClient(stack, appA, receiver);
  payB = paymentsClient(stack, appB, receiver);
  [operator, viewer, admin] = await Promise.all([
    signIn(stack, 'operator'),
    signIn(stack, 'viewer'),
    signIn(stack, 'admin'),
  ]);
});
afterAll(async () => {
  await receiver?.stop();
  await failing?.stop();
  await stack?.stop();
});

type Row = Record<string, unknown>;
interface Page<T = Row> {
  list: T[];
  next: string | null;
}

/** A list's page, which must succeed. */
async function page<T = Row>(client: ConsoleClient, path: string): Promise<Page<T>> {
  const a = await client.get<Page<T>>(path);
  if (a.status !== 200) throw new Error(`GET ${path} answered ${a.status} ${a.code}: ${a.message}`);
  return a.data!;
}

/** Every page of a list, `limit` rows at a time: the pages, each checked to be at most `limit`. */
async function allPages<T = Row>(client: ConsoleClient, path: string, limit: number): Promise<T[][]> {
  const pages: T[][] = [];
  let after: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const p: Page<T> = await page<T>(
      client,
      `${path}${sep}limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`,
    );
    expect(p.list.length).toBeLessThanOrEqual(limit);
    pages.push(p.list);
    after = p.next;
  } while (after && pages.length < 50);
  return pages;
}

const keys = (rows: Row[], key: string) => rows.map((r) => r[key] as string);

/** The audit log's rows about one target, oldest first. */
async function auditOf(targetId: string) {
  return stack.database.db.sequelize.query<{
    action: string;
    target_type: string;
    target_id: string;
    outcome: string;
    error_code: string | null;
    operator_username: string;
    before: Row | null;
    after: Row | null;
  }>('SELECT * FROM console_audit_log WHERE target_id = :targetId ORDER BY id', {
    replacements: { targetId },
    type: QueryTypes.SELECT,
  });
}

function expectRefused(a: ConsoleAnswer, status: number, code: string, field?: string) {
  expect({ status: a.status, code: a.code }).toEqual({ status, code });
  if (field) expect(a.message).toContain(`"${field}"`);
}

/** An order of app A, paid; its notifications go to `notifyUrl` (the answering receiver by default). */
const paidOrder = (pay: PaymentsClient, overrides: Row = {}) => pay.paidOrder(overrides);

const refundStatus = async (refundNo: string) =>
  (await payA.get<{ status: string }>(`/api/v1/pay/refund/query/${refundNo}`)).data?.status;

describe('orders', () => {
  let orders: { trade_no: string; amount: number; merchant_order_no: string; pay_url: string }[];
  let merchantId: string;

  beforeAll(async () => {
    merchantId = await payA.merchant();
    // App A: three orders, newest last; app B: one.
    orders = [];
    for (const [amount, extra] of [
      [111, {}],
      [222, { merchant_id: merchantId }],
      [333, {}],
    ] as const) {
      const merchantOrderNo = `M-${randomUUID()}`;
      const made = await payA.create({ amount, merchant_order_no: merchantOrderNo, ...extra });
      orders.push({
        trade_no: made.trade_no,
        amount,
        merchant_order_no: merchantOrderNo,
        pay_url: made.pay_credential.pay_url,
      });
    }
    await payA.buyerPays(orders[1]!.pay_url);
    await payB.create({ amount: 444 });
  });

  test('when orders are listed by app, then only that app’s, newest first, each with its app_id and review flag', async () => {
    const p = await page(operator, `/orders?app_id=${appA.app_id}`);
    expect(keys(p.list, 'trade_no')).toEqual(orders.map((o) => o.trade_no).reverse());
    expect(p.list[0]).toMatchObject({
      app_id: appA.app_id,
      needs_refund_review: false,
      amount: 333,
      status: 'pending',
      merchant_order_no: orders[2]!.merchant_order_no,
    });
    expect(p.next).toBeNull();
    // Every app's, without the filter: app B's order is there too.
    const every = await page(operator, '/orders?limit=100');
    expect(new Set(every.list.map((o) => o.app_id))).toEqual(new Set([appA.app_id, appB.app_id]));
  });

  test('when the orders are paged one at a time, then each page follows the last without repeating it, and the last says there is no next', async () => {
    const pages = await allPages(operator, `/orders?app_id=${appA.app_id}`, 1);
    expect(pages.map((p) => p.length)).toEqual([1, 1, 1]);
    expect(pages.flat().map((o) => o.trade_no)).toEqual(orders.map((o) => o.trade_no).reverse());
  });

  test('when orders are filtered by each field, then only the matching ones are listed', async () => {
    const [first, second, third] = orders as [(typeof orders)[0], (typeof orders)[0], (typeof orders)[0]];
    const only = async (query: string) =>
      keys((await page(operator, `/orders?app_id=${appA.app_id}&${query}`)).list, 'trade_no');
    expect(await only(`trade_no=${second.trade_no}`)).toEqual([second.trade_no]);
    expect(await only(`merchant_order_no=${third.merchant_order_no}`)).toEqual([third.trade_no]);
    expect(await only(`merchant_id=${merchantId}`)).toEqual([second.trade_no]);
    expect(await only('min_amount=200&max_amount=300')).toEqual([second.trade_no]);
    expect(await only('channel_code=sandbox')).toHaveLength(3);
    expect(await only('channel_code=wechatpay')).toEqual([]);
    await payA.statusIs(second.trade_no, 'paid');
    expect(await only('status=paid')).toEqual([second.trade_no]);
    expect(await only('status=pending')).toEqual([third.trade_no, first.trade_no]);
    // from inclusive, to exclusive, by when each was created.
    const created = async (tradeNo: string) =>
      (await page(operator, `/orders?trade_no=${tradeNo}`)).list[0]!.created_at as string;
    const at = await created(second.trade_no);
    expect(await only(`from=${encodeURIComponent(at)}`)).toEqual([third.trade_no, second.trade_no]);
    expect(await only(`to=${encodeURIComponent(at)}`)).toEqual([first.trade_no]);
  });

  test.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['after=not-a-cursor', 'after'],
    [`after=${Buffer.from('["yesterday","P1"]').toString('base64url')}`, 'after'],
    ['from=2026-01-31', 'from'],
    ['status=lost', 'status'],
    ['min_amount=-1', 'min_amount'],
    ['needs_refund_review=yes', 'needs_refund_review'],
    ['colour=red', 'colour'],
  ])('when the orders are asked with %s, then 400 invalid_param naming %s', async (query, field) => {
    expectRefused(await operator.get(`/orders?${query}`), 400, 'invalid_param', field);
  });

  test('when an order is asked for by its trade number, then its page holds the order, its refunds, notifications with attempts, a timeline and its workflow’s link', async () => {
    const order = await paidOrder(payA, { amount: 500 });
    const refunded = await operator.post(`/orders/${order.trade_no}/refund`, {
      merchant_refund_no: `console-${randomUUID()}`,
      amount: 50,
      reason: 'damaged',
    });
    expect(refunded).toMatchObject({ status: 200, code: 'success' });
    const refundNo = (refunded.data as { refund_no: string }).refund_no;
    await until('refund succeeded', async () =>
      (await refundStatus(refundNo)) === 'success' ? true : undefined,
    );
    await until('two notifications delivered', async () => {
      const d = (await operator.get<{ notifications: { status: string }[] }>(`/orders/${order.trade_no}`))
        .data!;
      return d.notifications.filter((n) => n.status === 'delivered').length === 2 ? true : undefined;
    });
    const detail = await operator.get<{
      order: Row;
      refunds: Row[];
      shares: Row[];
      notifications: (Row & { attempts: Row[] })[];
      timeline: { at: string; kind: string; summary: string }[];
      workflow_url: string;
    }>(`/orders/${order.trade_no}`);
    expect(detail.status).toBe(200);
    const d = detail.data!;
    expect(d.order).toMatchObject({
      trade_no: order.trade_no,
      app_id: appA.app_id,
      needs_refund_review: false,
      refunded_amount: 50,
      status: 'partially_refunded',
    });
    expect(d.refunds).toEqual([
      expect.objectContaining({
        refund_no: refundNo,
        refund_amount: 50,
        status: 'success',
        reason: 'damaged',
      }),
    ]);
    expect(d.shares).toEqual([]);
    expect(d.notifications.map((n) => n.type).sort()).toEqual(['payment.succeeded', 'refund.succeeded']);
    for (const n of d.notifications)
      expect(n.attempts).toEqual([expect.objectContaining({ http_status: 200 })]);
    const kinds = d.timeline.map((e) => e.kind);
    for (const kind of [
      'created',
      'callback',
      'paid',
      'refund_requested',
      'refund_settled',
      'notification',
      'notification_attempt',
    ]) {
      expect(kinds).toContain(kind);
    }
    expect(kinds[0]).toBe('created');
    const times = d.timeline.map((e) => e.at);
    expect([...times].sort()).toEqual(times);
    // The Temporal UI's page of the order's workflow (its address from the configuration).
    expect(d.workflow_url).toMatch(/^https?:\/\/[^/]+\/namespaces\/default\/workflows\//);
    expect(
      d.workflow_url.endsWith(
        `/workflows/${encodeURIComponent(
          orderWorkflowId(appA.app_id, (d.order as { merchant_order_no: string }).merchant_order_no),
        )}`,
      ),
    ).toBe(true);
  });

  test('when an unknown order is asked for, then 404 not_found', async () => {
    expectRefused(await operator.get('/orders/P000000000000000000000000'), 404, 'not_found');
  });
});

describe('closing an order', () => {
  test('when an operator closes a pending order, then it is closed through its workflow and the audit log keeps it before and after', async () => {
    const made = await payA.create();
    const a = await operator.post<{ order: Row }>(`/orders/${made.trade_no}/close`, {});
    expect(a).toMatchObject({ status: 200, code: 'success', data: { order: { status: 'closed' } } });
    expect((await payA.query(made.trade_no)).status).toBe('closed');
    const [row] = await auditOf(made.trade_no);
    expect(row).toMatchObject({
      action: 'order.close',
      target_type: 'order',
      outcome: 'succeeded',
      error_code: null,
      operator_username: operator.username,
      before: expect.objectContaining({ status: 'pending', app_id: appA.app_id }),
      after: expect.objectContaining({ status: 'closed' }),
    });
  });

  test('when the order is paid, then 422 order_already_paid, and the refusal is in the audit log', async () => {
    const order = await paidOrder(payA);
    expectRefused(await operator.post(`/orders/${order.trade_no}/close`, {}), 422, 'order_already_paid');
    expect(await auditOf(order.trade_no)).toEqual([
      expect.objectContaining({
        action: 'order.close',
        outcome: 'refused',
        error_code: 'order_already_paid',
        before: expect.objectContaining({ status: 'paid' }),
        after: expect.objectContaining({ status: 'paid' }),
      }),
    ]);
  });

  test('when the order is unknown, the body has a field, or a viewer asks, then 404, 400 naming the field, 403', async () => {
    const made = await payA.create();
    expectRefused(await operator.post('/orders/P000000000000000000000001/close', {}), 404, 'not_found');
    expectRefused(
      await operator.post(`/orders/${made.trade_no}/close`, { now: true }),
      400,
      'invalid_param',
      'now',
    );
    expectRefused(await viewer.post(`/orders/${made.trade_no}/close`, {}), 403, 'permission_denied');
    expect((await payA.query(made.trade_no)).status).toBe('pending');
  });
});

describe('refunding an order', () => {
  test('when an operator refunds a paid order, then it is the API’s refund: notified to the order’s notify_url, and the same merchant_refund_no answers the same refund', async () => {
    const order = await paidOrder(payA, { amount: 300 });
    const body = { merchant_refund_no: `console-${randomUUID()}`, amount: 120 };
    const first = await operator.post<{ refund_no: string; refund_amount: number }>(
      `/orders/${order.trade_no}/refund`,
      body,
    );
    expect(first).toMatchObject({ status: 200, code: 'success', data: { refund_amount: 120 } });
    const refundNo = first.data!.refund_no;
    const again = await operator.post<{ refund_no: string }>(`/orders/${order.trade_no}/refund`, body);
    expect(again.data?.refund_no).toBe(refundNo);
    await until('refund.succeeded at the order’s notify_url', async () =>
      payA.notificationsFor(order.trade_no, 'refund.succeeded').length > 0 ? true : undefined,
    );
    expect(
      await payA.count('SELECT count(*) AS n FROM refunds WHERE trade_no = :t', { t: order.trade_no }),
    ).toBe(1);
    // The API's own limit: 181 is more than is left.
    expectRefused(
      await operator.post(`/orders/${order.trade_no}/refund`, {
        merchant_refund_no: `console-${randomUUID()}`,
        amount: 181,
      }),
      422,
      'refund_amount_exceed',
    );
    const audit = await auditOf(order.trade_no);
    expect(audit.map((r) => [r.action, r.outcome, r.error_code])).toEqual([
      ['order.refund', 'succeeded', null],
      ['order.refund', 'succeeded', null],
      ['order.refund', 'refused', 'refund_amount_exceed'],
    ]);
    expect(audit[0]!.before).toMatchObject({ trade_no: order.trade_no, refunds: [] });
    expect(audit[0]!.after).toMatchObject({
      refunds: [expect.objectContaining({ refund_no: refundNo, refund_amount: 120 })],
    });
  });

  test.each([
    [{ amount: 10 }, 'merchant_refund_no'],
    // An app's kind of number: the console's refunds are numbered apart from the apps' own.
    [{ merchant_refund_no: 'R-1', amount: 10 }, 'merchant_refund_no'],
    [{ merchant_refund_no: 'console-1' }, 'amount'],
    [{ merchant_refund_no: 'console-1', amount: '10' }, 'amount'],
    [{ merchant_refund_no: 'console-1', amount: 0 }, 'amount'],
    [{ merchant_refund_no: 'console-1', amount: 10, notify_url: 'http://elsewhere' }, 'notify_url'],
  ])('when the refund body is %j, then 400 invalid_param naming %s', async (body, field) => {
    const made = await payA.create();
    expectRefused(await operator.post(`/orders/${made.trade_no}/refund`, body), 400, 'invalid_param', field);
  });

  test('when the order is unknown or not paid, or a viewer refunds, then 404, 422 order_not_paid, 403', async () => {
    const made = await payA.create();
    const body = { merchant_refund_no: `console-${randomUUID()}`, amount: 10 };
    expectRefused(await operator.post('/orders/P000000000000000000000002/refund', body), 404, 'not_found');
    expectRefused(await operator.post(`/orders/${made.trade_no}/refund`, body), 422, 'order_not_paid');
    expectRefused(await viewer.post(`/orders/${made.trade_no}/refund`, body), 403, 'permission_denied');
  });
});

describe('the refund review queue', () => {
  test('when an order is paid after it closed, then it is in the needs_refund_review queue until it is refunded in full', async () => {
    // Paid at the channel all the same (its close was lost there), and said so by a late callback.
    const created = await payA.paidAfterClose();
    const queue = async () =>
      keys((await page(operator, '/orders?needs_refund_review=true&limit=100')).list, 'trade_no');
    expect(await queue()).toContain(created.trade_no);
    expect((await page(operator, `/orders?trade_no=${created.trade_no}`)).list[0]).toMatchObject({
      needs_refund_review: true,
    });
    const refund = await operator.post<{ refund_no: string }>(`/orders/${created.trade_no}/refund`, {
      merchant_refund_no: `console-${randomUUID()}`,
      amount: 90,
    });
    expect(refund.status).toBe(200);
    await until('out of the queue', async () =>
      (await queue()).includes(created.trade_no) ? undefined : true,
    );
  });
});

describe('refunds', () => {
  let refundNos: string[];
  let tradeNo: string;

  beforeAll(async () => {
    const order = await paidOrder(payB, { amount: 100 });
    tradeNo = order.trade_no;
    refundNos = [];
    for (const amount of [10, 20, 30]) {
      const r = await payB.post<{ refund_no: string }>('/api/v1/pay/refund', {
        trade_no: order.trade_no,
        refund_amount: amount,
      });
      refundNos.push(r.data!.refund_no);
    }
    for (const no of refundNos) {
      await until(`refund ${no}`, async () =>
        (await payB.get<{ status: string }>(`/api/v1/pay/refund/query/${no}`)).data?.status === 'success'
          ? true
          : undefined,
      );
    }
  });

  test('when refunds are listed by order and paged, then each app’s refund is there once, newest first', async () => {
    const pages = await allPages(operator, `/refunds?trade_no=${tradeNo}`, 2);
    expect(pages.map((p) => p.length)).toEqual([2, 1]);
    expect(pages.flat().map((r) => r.refund_no)).toEqual([...refundNos].reverse());
    expect(pages[0]![0]).toMatchObject({ app_id: appB.app_id, trade_no: tradeNo, status: 'success' });
  });

  test('when refunds are filtered by refund number, app and status, then only the matching ones', async () => {
    expect(keys((await page(operator, `/refunds?refund_no=${refundNos[1]}`)).list, 'refund_no')).toEqual([
      refundNos[1],
    ]);
    const ofB = keys(
      (await page(operator, `/refunds?app_id=${appB.app_id}&status=success&limit=100`)).list,
      'refund_no',
    );
    expect(ofB).toEqual(expect.arrayContaining(refundNos));
    expect((await page(operator, `/refunds?trade_no=${tradeNo}&status=failed`)).list).toEqual([]);
    expect((await page(operator, `/refunds?trade_no=${tradeNo}&app_id=${appA.app_id}`)).list).toEqual([]);
    expectRefused(await operator.get('/refunds?status=gone'), 400, 'invalid_param', 'status');
  });
});

describe('abnormal refunds', () => {
  const card = {
    method: 'user_bank_card',
    bank_type: 'ICBC_DEBIT',
    bank_account: '6222020200012345678',
    real_name: 'Zhang San',
  };

  test('when an operator pays an abnormal refund out to a bank card, then it succeeds through the refund’s workflow, and the card is in no audit row', async () => {
    const order = await paidOrder(payA, { amount: 100 });
    const made = await operator.post<{ refund_no: string }>(`/orders/${order.trade_no}/refund`, {
      merchant_refund_no: `console-${randomUUID()}`,
      amount: 40,
      reason: 'no card [sandbox:abnormal]',
    });
    const refundNo = made.data!.refund_no;
    await until('abnormal', async () => ((await refundStatus(refundNo)) === 'abnormal' ? true : undefined));
    expect(keys((await page(operator, '/refunds?status=abnormal&limit=100')).list, 'refund_no')).toContain(
      refundNo,
    );
    const applied = await operator.post(`/refunds/${refundNo}/abnormal`, card);
    expect(applied).toMatchObject({ status: 200, code: 'success', data: { refund_no: refundNo } });
    await until('paid out', async () => ((await refundStatus(refundNo)) === 'success' ? true : undefined));
    // Not abnormal any more: the API's own refusal.
    expectRefused(await operator.post(`/refunds/${refundNo}/abnormal`, card), 400, 'invalid_param');
    const audit = await auditOf(refundNo);
    expect(audit.map((r) => [r.action, r.outcome])).toEqual([
      ['refund.abnormal', 'succeeded'],
      ['refund.abnormal', 'refused'],
    ]);
    expect(audit[0]!.before).toMatchObject({ status: 'abnormal' });
    const text = JSON.stringify(await auditOf(refundNo));
    expect(text).not.toContain(card.bank_account);
    expect(text).not.toContain(card.real_name);
  });

  test.each([
    [{ method: 'cash' }, 'method'],
    [{ ...card, bank_account: undefined }, 'bank_account'],
    [{ ...card, refund_no: 'R1' }, 'refund_no'],
  ])('when the abnormal body is %j, then 400 invalid_param naming %s', async (body, field) => {
    expectRefused(
      await operator.post('/refunds/R000000000000000000000001/abnormal', body),
      400,
      'invalid_param',
      field,
    );
  });

  test('when the refund is unknown or a viewer asks, then 404 not_found and 403', async () => {
    expectRefused(await operator.post('/refunds/R000000000000000000000001/abnormal', card), 404, 'not_found');
    expectRefused(
      await viewer.post('/refunds/R000000000000000000000001/abnormal', card),
      403,
      'permission_denied',
    );
  });
});

describe('transfers', () => {
  const transfer = (overrides: Row = {}) =>
    payA.post<{ transfer_no: string; status: string }>('/api/v1/transfer', {
      merchant_transfer_no: `W-${randomUUID()}`,
      channel_code: 'sandbox',
      amount: 100,
      payee: { type: 'alipay_user_id', account: '2088000000000001' },
      remark: 'Cashback',
      notify_url: receiver.url,
      ...overrides,
    });
  const ended = (transferNo: string) =>
    stack.client.workflow.getHandle(transferWorkflowId(transferNo)).result();

  test('when transfers are listed and filtered, then each filter narrows and pages do not repeat', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await transfer()).data!.transfer_no);
    await Promise.all(made.map(ended));
    const mine = `/transfers?app_id=${appA.app_id}&status=success&channel_code=sandbox`;
    const pages = await allPages(operator, mine, 2);
    const listed = pages.flat().map((t) => t.transfer_no as string);
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual(expect.arrayContaining(made));
    expect(listed.indexOf(made[2]!)).toBeLessThan(listed.indexOf(made[0]!));
    expect((await page(operator, `/transfers?transfer_no=${made[1]}`)).list).toEqual([
      expect.objectContaining({ transfer_no: made[1], app_id: appA.app_id, status: 'success' }),
    ]);
    expect((await page(operator, `/transfers?transfer_no=${made[1]}&app_id=${appB.app_id}`)).list).toEqual(
      [],
    );
    expect((await page(operator, `/transfers?transfer_no=${made[1]}&status=failed`)).list).toEqual([]);
    expectRefused(await operator.get('/transfers?status=done'), 400, 'invalid_param', 'status');
  });

  test('when an operator cancels a transfer waiting for its payee, then it is cancelled through its workflow and audited', async () => {
    const made = (await transfer({ payee: { type: 'openid', account: 'o-console-0001' } })).data!;
    expect(made.status).toBe('wait_user_confirm');
    const a = await operator.post<{ status: string; app_id: string }>(
      `/transfers/${made.transfer_no}/cancel`,
      {},
    );
    expect(a).toMatchObject({ status: 200, code: 'success', data: { app_id: appA.app_id } });
    await ended(made.transfer_no);
    expect((await page(operator, `/transfers?transfer_no=${made.transfer_no}`)).list[0]).toMatchObject({
      status: 'cancelled',
    });
    expect(await auditOf(made.transfer_no)).toEqual([
      expect.objectContaining({
        action: 'transfer.cancel',
        outcome: 'succeeded',
        before: expect.objectContaining({ status: 'wait_user_confirm' }),
      }),
    ]);
  });

  test('when the transfer has succeeded, is unknown, the body has a field, or a viewer asks, then 400, 404, 400 naming it, 403', async () => {
    const made = (await transfer()).data!;
    await ended(made.transfer_no);
    const refused = await operator.post(`/transfers/${made.transfer_no}/cancel`, {});
    expectRefused(refused, 400, 'invalid_param');
    expect(refused.message).toContain('success');
    expectRefused(await operator.post('/transfers/T000000000000000000000001/cancel', {}), 404, 'not_found');
    expectRefused(
      await operator.post(`/transfers/${made.transfer_no}/cancel`, { why: 'x' }),
      400,
      'invalid_param',
      'why',
    );
    expectRefused(await viewer.post(`/transfers/${made.transfer_no}/cancel`, {}), 403, 'permission_denied');
  });
});

describe('notifications', () => {
  let failedTrade: string;
  let failedId: string;

  beforeAll(async () => {
    // What the tests above set off for appB has finished (its orders with their refunds and
    // notifications, its transfers), so the lists below read a set that no longer grows.
    const rows = <T extends object>(sql: string) =>
      stack.database.db.sequelize.query<T>(sql, {
        replacements: { app: appB.app_id },
        type: QueryTypes.SELECT,
      });
    for (const o of await rows<{ trade_no: string }>('SELECT trade_no FROM orders WHERE app_id = :app'))
      await settledIn(stack)(o.trade_no);
    for (const t of await rows<{ transfer_no: string }>(
      'SELECT transfer_no FROM transfers WHERE app_id = :app',
    ))
      await stack.client.workflow
        .getHandle(transferWorkflowId(t.transfer_no))
        .result()
        .catch(() => undefined);
    // One order whose notification fails at its receiver, and one whose is delivered.
    const bad = await payB.paidOrder({ notify_url: failing.url });
    failedTrade = bad.trade_no;
    failedId = await until('a failed notification', async () => {
      const p = await page(operator, `/notifications?trade_no=${failedTrade}&status=failed`);
      return (p.list[0]?.notification_id as string | undefined) ?? undefined;
    });
    // And one delivered: its notification is written after the order reads paid, so it is
    // waited for, or the lists below would see it appear between two reads.
    const good = await payB.paidOrder();
    await until('a delivered notification', async () => {
      const p = await page(operator, `/notifications?trade_no=${good.trade_no}&status=delivered`);
      return p.list.length > 0 ? true : undefined;
    });
  });

  test('when notifications are listed with no status, then the failed ones come first, and pages of one repeat none', async () => {
    const first = await page(operator, `/notifications?app_id=${appB.app_id}&limit=100`);
    const statuses = first.list.map((n) => n.status);
    const firstOther = statuses.findIndex((s) => s !== 'failed');
    expect(statuses.slice(0, firstOther)).toEqual(statuses.slice(0, firstOther).map(() => 'failed'));
    expect(statuses.slice(firstOther)).not.toContain('failed');
    expect(first.list[0]).toMatchObject({ app_id: appB.app_id });
    const pages = await allPages(operator, `/notifications?app_id=${appB.app_id}`, 1);
    expect(pages.flat().map((n) => n.notification_id)).toEqual(first.list.map((n) => n.notification_id));
  });

  test('when notifications are filtered by status, order, event and app, then only the matching ones', async () => {
    expect(
      keys((await page(operator, `/notifications?trade_no=${failedTrade}`)).list, 'notification_id'),
    ).toEqual([failedId]);
    expect(
      (await page(operator, `/notifications?trade_no=${failedTrade}&event=refund.succeeded`)).list,
    ).toEqual([]);
    expect(
      (await page(operator, `/notifications?trade_no=${failedTrade}&app_id=${appA.app_id}`)).list,
    ).toEqual([]);
    expect(keys((await page(operator, '/notifications?status=failed&limit=100')).list, 'status')).toEqual(
      expect.not.arrayContaining(['delivered', 'pending']),
    );
    expectRefused(await operator.get('/notifications?event=order.lost'), 400, 'invalid_param', 'event');
  });

  test('when a notification is asked for, then it comes with its attempts; an unknown one is 404', async () => {
    const a = await operator.get<{ notification: Row; attempts: Row[] }>(`/notifications/${failedId}`);
    expect(a.data!.notification).toMatchObject({
      notification_id: failedId,
      status: 'failed',
      app_id: appB.app_id,
    });
    expect(a.data!.attempts.length).toBeGreaterThanOrEqual(2);
    expect(a.data!.attempts).toHaveLength(a.data!.notification.attempt_count as number);
    expect(a.data!.attempts[0]).toMatchObject({ series: 1, attempt: 1, http_status: 500 });
    expectRefused(await operator.get('/notifications/ntf_unknown'), 404, 'not_found');
  });

  test('when an operator resends a failed notification, then a new series of attempts is made and audited', async () => {
    const a = await operator.post(`/notifications/${failedId}/resend`, {});
    expect(a).toMatchObject({ status: 200, data: { notification_id: failedId, status: 'pending' } });
    await until('series 2 ended', async () => {
      const n = (
        await operator.get<{ notification: { series: number; status: string } }>(`/notifications/${failedId}`)
      ).data!.notification;
      return n.series === 2 && n.status === 'failed' ? true : undefined;
    });
    expect(await auditOf(failedId)).toEqual([
      expect.objectContaining({
        action: 'notification.resend',
        outcome: 'succeeded',
        before: expect.objectContaining({ series: 1 }),
      }),
    ]);
    expectRefused(await operator.post('/notifications/ntf_unknown/resend', {}), 404, 'not_found');
    expectRefused(
      await operator.post(`/notifications/${failedId}/resend`, { now: 1 }),
      400,
      'invalid_param',
      'now',
    );
    expectRefused(await viewer.post(`/notifications/${failedId}/resend`, {}), 403, 'permission_denied');
  });
});

describe('merchants', () => {
  let shared: string;

  beforeAll(async () => {
    // The same merchant id in both apps.
    shared = `m-${randomUUID().slice(0, 12)}`;
    for (const pay of [payA, payB]) {
      expect(
        (await pay.post('/api/v1/merchant', { merchant_id: shared, merchant_name: 'Twin Tea' })).code,
      ).toBe('success');
    }
    await payA.attach(shared, 'sandbox', { sub_merchant_no: `S-${shared}` });
  });

  test('when merchants are listed by id, app and status, then each filter narrows, and pages repeat none', async () => {
    const both = await page(operator, `/merchants?merchant_id=${shared}`);
    expect(both.list.map((m) => m.app_id).sort()).toEqual([appA.app_id, appB.app_id].sort());
    expect(both.list[0]).not.toHaveProperty('legal_person');
    expect((await page(operator, `/merchants?merchant_id=${shared}&app_id=${appB.app_id}`)).list).toEqual([
      expect.objectContaining({ merchant_id: shared, app_id: appB.app_id, status: 'created' }),
    ]);
    // Its account attached, app A's merchant is active; app B's is not.
    expect(
      keys((await page(operator, `/merchants?merchant_id=${shared}&status=active`)).list, 'app_id'),
    ).toEqual([appA.app_id]);
    expect((await page(operator, `/merchants?merchant_id=${shared}&status=rejected`)).list).toEqual([]);
    const pages = await allPages(operator, `/merchants?merchant_id=${shared}`, 1);
    expect(pages.map((p) => p.length)).toEqual([1, 1]);
    expect(pages.flat().map((m) => m.app_id)).toEqual(both.list.map((m) => m.app_id));
  });

  test('when a merchant id is in two apps, then its page needs app_id, and with it shows that app’s merchant and accounts', async () => {
    expectRefused(await operator.get(`/merchants/${shared}`), 400, 'invalid_param', 'app_id');
    const a = await operator.get<{ merchant: Row; channel_accounts: Row[]; applications: Row[] }>(
      `/merchants/${shared}?app_id=${appA.app_id}`,
    );
    expect(a.data).toMatchObject({
      merchant: { merchant_id: shared, app_id: appA.app_id, merchant_name: 'Twin Tea' },
      channel_accounts: [
        expect.objectContaining({ channel_code: 'sandbox', sub_merchant_no: `S-${shared}` }),
      ],
      applications: [],
    });
    expectRefused(await operator.get('/merchants/m-nobody'), 404, 'not_found');
  });

  test('when an operator attaches a channel account, then it is the API’s attach for the merchant’s app, audited', async () => {
    const a = await operator.post(`/merchants/${shared}/channel-accounts`, {
      app_id: appB.app_id,
      channel_code: 'sandbox',
      sub_merchant_no: `S-B-${shared}`,
    });
    expect(a).toMatchObject({
      status: 200,
      data: {
        channel_code: 'sandbox',
        sub_merchant_no: `S-B-${shared}`,
        app_id: appB.app_id,
        status: 'active',
      },
    });
    const listed = await payB.get<{ list: Row[] }>(`/api/v1/merchant/${shared}/channel-accounts`);
    expect(listed.data!.list).toEqual([expect.objectContaining({ sub_merchant_no: `S-B-${shared}` })]);
    const [row] = await auditOf(shared);
    expect(row).toMatchObject({
      action: 'merchant.attach_channel_account',
      outcome: 'succeeded',
      before: expect.objectContaining({ app_id: appB.app_id, channel_accounts: [] }),
      after: expect.objectContaining({
        channel_accounts: [expect.objectContaining({ sub_merchant_no: `S-B-${shared}` })],
      }),
    });
  });

  test.each([
    [{ app_id: 'A', channel_code: 'paypal', sub_merchant_no: 'S-1' }, 'channel_code'],
    [{ channel_code: 'sandbox' }, 'sub_merchant_no'],
    [{ channel_code: 'sandbox', sub_merchant_no: 'S 1' }, 'sub_merchant_no'],
    [{ channel_code: 'sandbox', sub_merchant_no: 'S-1', sub_mchid: '1' }, 'sub_mchid'],
  ])('when the attach body is %j, then 400 invalid_param naming %s', async (body, field) => {
    const a = await operator.post(`/merchants/${shared}/channel-accounts`, body);
    expectRefused(a, 400, 'invalid_param');
    expect(a.message).toContain(field);
  });

  test('when the merchant is unknown or a viewer attaches, then 404 not_found and 403', async () => {
    const body = { channel_code: 'sandbox', sub_merchant_no: 'S-x' };
    expectRefused(await operator.post('/merchants/m-nobody/channel-accounts', body), 404, 'not_found');
    expectRefused(
      await viewer.post(`/merchants/${shared}/channel-accounts`, { ...body, app_id: appA.app_id }),
      403,
      'permission_denied',
    );
  });
});

describe('reconciliation', () => {
  let runId: string;
  let mismatchId: string;

  beforeAll(async () => {
    const merchantId = await payA.merchant();
    const changed = await payA.paidOrder({
      merchant_id: merchantId,
      amount: 400,
      subject: 'Tea [statement:amount+1]',
    });
    const started = await payA.post<{ list: { run_id: string }[] }>('/api/v1/reconciliation/runs', {
      channel_code: 'sandbox',
      bill_date: billDateOf(new Date()),
      account: `S-${merchantId}`,
    });
    runId = started.data!.list[0]!.run_id;
    await stack.client.workflow.getHandle(`reconciliation:${runId}`).result();
    const found = await page(operator, `/reconciliation/runs/${encodeURIComponent(runId)}/mismatches`);
    expect(found.list).toEqual([
      expect.objectContaining({
        category: 'amount_mismatch',
        trade_no: changed.trade_no,
        state: 'open',
        app_id: appA.app_id,
      }),
    ]);
    mismatchId = found.list[0]!.mismatch_id as string;
  });

  test('when runs are listed by channel, day and status, then the run is there; a status it is not in finds nothing', async () => {
    const day = billDateOf(new Date());
    expect(
      keys(
        (await page(operator, `/reconciliation/runs?channel_code=sandbox&bill_date=${day}&status=completed`))
          .list,
        'run_id',
      ),
    ).toContain(runId);
    expect(
      keys((await page(operator, `/reconciliation/runs?bill_date=${day}&status=failed`)).list, 'run_id'),
    ).not.toContain(runId);
    expectRefused(
      await operator.get('/reconciliation/runs?bill_date=today'),
      400,
      'invalid_param',
      'bill_date',
    );
  });

  test('when a run’s mismatches are filtered by category and status, then only the matching ones; an unknown run is 404', async () => {
    const of = (q: string) =>
      page(operator, `/reconciliation/runs/${encodeURIComponent(runId)}/mismatches?${q}`);
    expect((await of('category=amount_mismatch&status=open')).list).toHaveLength(1);
    expect((await of('category=status_mismatch')).list).toEqual([]);
    expect((await of('status=resolved')).list).toEqual([]);
    expectRefused(
      await operator.get('/reconciliation/runs/sandbox:nothing:2020-01-01/mismatches'),
      404,
      'not_found',
    );
    expectRefused(
      await operator.get(`/reconciliation/runs/${encodeURIComponent(runId)}/mismatches?after=x`),
      400,
      'invalid_param',
      'after',
    );
  });

  test('when an operator resolves a mismatch with a note, then it is resolved by them, audited, and a second resolve is refused', async () => {
    expectRefused(
      await operator.post(`/reconciliation/mismatches/${mismatchId}/resolve`, {}),
      400,
      'invalid_param',
      'note',
    );
    expectRefused(
      await viewer.post(`/reconciliation/mismatches/${mismatchId}/resolve`, { note: 'x' }),
      403,
      'permission_denied',
    );
    const a = await operator.post(`/reconciliation/mismatches/${mismatchId}/resolve`, {
      note: 'the channel rounded; refunded the difference by hand',
      resolution: 'accepted_channel',
    });
    expect(a).toMatchObject({
      status: 200,
      data: {
        mismatch_id: mismatchId,
        state: 'resolved',
        resolution: 'accepted_channel',
        resolved_by: operator.username,
      },
    });
    expectRefused(
      await operator.post(`/reconciliation/mismatches/${mismatchId}/resolve`, { note: 'again' }),
      400,
      'invalid_param',
    );
    expect((await auditOf(mismatchId)).map((r) => [r.action, r.outcome, r.error_code])).toEqual([
      ['mismatch.resolve', 'refused', 'invalid_param'],
      ['mismatch.resolve', 'succeeded', null],
      ['mismatch.resolve', 'refused', 'invalid_param'],
    ]);
    expectRefused(
      await operator.post('/reconciliation/mismatches/999999999/resolve', { note: 'x' }),
      404,
      'not_found',
    );
    expectRefused(
      await operator.post('/reconciliation/mismatches/abc/resolve', { note: 'x' }),
      404,
      'not_found',
    );
  });
});

describe('apps', () => {
  test('when apps are listed, then they are shown without their secrets, newest first, and paged', async () => {
    const all = await page(operator, '/apps?limit=100');
    const a = all.list.find((x) => x.app_id === appA.app_id)!;
    expect(Object.keys(a).sort()).toEqual(['app_id', 'created_at', 'name', 'scopes', 'status', 'updated_at']);
    const text = JSON.stringify(all);
    for (const secret of [appA.secret, appA.webhook_secret, appB.secret, appB.webhook_secret]) {
      expect(text).not.toContain(secret);
    }
    const pages = await allPages(operator, '/apps', 1);
    expect(pages.flat().map((x) => x.app_id)).toEqual(all.list.map((x) => x.app_id));
  });

  test('when an admin disables an app, then its requests are refused at once; an operator may not, and an unknown app is 404', async () => {
    const victim = await stack.createApp(['payments']);
    const ask = () => signedFetch(stack.baseUrl, victim, 'GET', '/api/v1/pay/query/P1');
    expect((await ask()).status).toBe(422);
    expectRefused(await operator.post(`/apps/${victim.app_id}/disable`, {}), 403, 'permission_denied');
    const a = await admin.post(`/apps/${victim.app_id}/disable`, {});
    expect(a).toMatchObject({ status: 200, data: { app_id: victim.app_id, status: 'disabled' } });
    expect((await ask()).status).toBe(403);
    expect(await auditOf(victim.app_id)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'app.disable',
          outcome: 'succeeded',
          before: expect.objectContaining({ status: 'active' }),
          after: expect.objectContaining({ status: 'disabled' }),
        }),
      ]),
    );
    expect(JSON.stringify(await auditOf(victim.app_id))).not.toContain(victim.secret);
    expectRefused(await admin.post('/apps/app_aaaaaaaaaaaaaaaa/disable', {}), 404, 'not_found');
  });
});

describe('overview', () => {
  interface Figures {
    date: string;
    orders: number;
    paid_orders: number;
    paid_amount: number;
    refunds: number;
    refunded_amount: number;
    conversion: number | null;
  }
  interface Overview {
    time_zone: string;
    today: Figures;
    days: Figures[];
    by_channel: (Figures & { channel_code: string; pay_method: string })[];
    exceptions: { kind: string; count: number }[];
  }
  const read = async () => (await operator.get<Overview>('/overview')).data!;

  test('when orders are made, paid and refunded today, then today’s figures and the day’s place in the 30 days count them', async () => {
    const before = await read();
    const paid = await paidOrder(payA, { amount: 700 });
    await payA.create({ amount: 50 });
    const r = await operator.post<{ refund_no: string }>(`/orders/${paid.trade_no}/refund`, {
      merchant_refund_no: `console-${randomUUID()}`,
      amount: 70,
    });
    await until('refund succeeded', async () =>
      (await refundStatus(r.data!.refund_no)) === 'success' ? true : undefined,
    );
    const after = await read();
    expect(after.time_zone).toBe('Asia/Shanghai');
    expect(after.days).toHaveLength(30);
    expect(after.days[29]).toEqual(after.today);
    expect(after.today.date).toBe(billDateOf(new Date()));
    expect(after.today.orders - before.today.orders).toBe(2);
    expect(after.today.paid_orders - before.today.paid_orders).toBe(1);
    expect(after.today.paid_amount - before.today.paid_amount).toBe(700);
    expect(after.today.refunds - before.today.refunds).toBe(1);
    expect(after.today.refunded_amount - before.today.refunded_amount).toBe(70);
    expect(after.today.conversion).toBeCloseTo(after.today.paid_orders / after.today.orders, 4);
    expect(after.by_channel).toEqual(
      expect.arrayContaining([expect.objectContaining({ channel_code: 'sandbox', pay_method: 'qr_code' })]),
    );
    const sandbox = after.by_channel.find((c) => c.channel_code === 'sandbox' && c.pay_method === 'qr_code')!;
    expect(sandbox.orders).toBe(after.days.reduce((n, d) => n + d.orders, 0));
  });

  test('when there are exceptions, then each kind is counted: abnormal refunds, failed notifications, open mismatches, refund reviews', async () => {
    const { exceptions } = await read();
    expect(exceptions.map((e) => e.kind)).toEqual([
      'needs_refund_review',
      'abnormal_refunds',
      'failed_notifications',
      'rejected_applications',
      'open_mismatches',
      'overdue_complaints',
    ]);
    const count = (kind: string) => exceptions.find((e) => e.kind === kind)!.count;
    const [row] = await stack.database.db.sequelize.query<{ failed: string; abnormal: string; open: string }>(
      `SELECT (SELECT count(*) FROM notifications WHERE status = 'failed') AS failed,
              (SELECT count(*) FROM refunds WHERE status = 'abnormal') AS abnormal,
              (SELECT count(*) FROM reconciliation_mismatches WHERE state = 'open') AS open`,
      { type: QueryTypes.SELECT },
    );
    expect(count('failed_notifications')).toBe(Number(row!.failed));
    expect(count('failed_notifications')).toBeGreaterThan(0);
    expect(count('abnormal_refunds')).toBe(Number(row!.abnormal));
    expect(count('open_mismatches')).toBe(Number(row!.open));
    expect(count('rejected_applications')).toBe(0);
    // This stack has no channel with complaints (test/e2e/console-complaints.test.ts counts them).
    expect(count('overdue_complaints')).toBe(0);
    expectRefused(await operator.get('/overview?days=7'), 400, 'invalid_param', 'days');
  });
});
