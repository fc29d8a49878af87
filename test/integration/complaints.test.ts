/**
 * Consumer complaints (SPEC §16) on the real stack, against the offline WeChat Pay upstream's
 * 消费者投诉2.0: a complaint arriving by notification and one found only by the safety net's
 * Schedule both reach the app once; reply, refund and complete each reach the channel once
 * however often they are sent at once (counted at the upstream); a complaint's refund is an
 * ordinary refund of the order, refused by its book beyond what the order can refund; another
 * app's complaint is 404; the 12-hour reminder and the deadline fire on a time-scaled stack.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { QueryTypes } from 'sequelize';
import type { OpenComplaint } from '../../sandbox/wechatpay/complaints';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { ComplaintRepository, complaintsSealedWith, resealComplaints } from '../../src/modules/complaints';
import { newPayloadKeyEntry, parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { globalState } from '../support/state';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import {
  complaintEventArrived,
  complaintEvents,
  startComplaintSweep,
  stopComplaintSweep,
  sweepOnce as sweepOnceAt,
} from '../support/complaints';
import { until } from '../support/wait';

jest.setTimeout(180_000);

/**
 * 1/5 000 of real time: the 12-hour reminder comes 8.6 s after a complaint, the 24-hour reply
 * deadline at 17 s, the 72-hour one at 52 s.
 */
const TIME_SCALE = 0.0002;
const SUB_MCHID = '1900000109';
/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let stack: TestStack;
let app: AppCredentials;
let other: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let stranger: PaymentsClient;
let merchantId: string;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE, wechatpay: {} });
  app = await stack.createApp(['payments', 'merchants']);
  other = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  stranger = paymentsClient(stack, other, receiver);
  merchantId = `MC-${randomUUID().slice(0, 8)}`;
  expect(
    (await pay.post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' })).code,
  ).toBe('success');
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: SUB_MCHID });
  // As every worker with complaints does at start: the safety net, run once at once, which
  // registers durapay's notification URL with the channel.
  await startComplaintSweep(stack);
  await until('the complaint notification URL registered', async () =>
    stack.wechatpay!.sandbox.complaintNotifyUrl() === `${stack.baseUrl}/api/v1/notify/complaint/wechatpay`
      ? true
      : undefined,
  );
});
afterAll(async () => {
  if (stack) await stopComplaintSweep(stack);
  await receiver?.stop();
  await stack?.stop();
});

interface Created {
  trade_no: string;
  pay_credential: Record<string, string>;
}

interface ComplaintData {
  complaint_id: string;
  trade_no: string | null;
  state: string;
  detail: string;
  payer_phone: string | null;
  overdue: boolean;
  refund_no: string | null;
  refund_amount: number | null;
  history: { type: string }[];
  replied_at: string | null;
  reply_due_at: string;
  complete_due_at: string;
  refund?: { refund_no: string; refund_amount: number };
}

async function paidOrder(amount = 2_000): Promise<Created> {
  const a = await pay.post<Created>(
    '/api/v1/pay/unified-order',
    pay.orderBody({
      channel_code: 'wechatpay',
      merchant_id: merchantId,
      subject: 'Green tea',
      amount,
      expire_minutes: 1440,
    }),
  );
  if (a.code !== 'success') throw new Error(`create failed: ${a.status} ${a.code} ${a.message}`);
  const res = await fetch(a.data!.pay_credential.code_url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  expect(res.status).toBe(200);
  await pay.statusIs(a.data!.trade_no, 'paid');
  return a.data!;
}

const received = (type: string, complaintId: string) => complaintEvents(receiver, type, complaintId);
const arrived = (type: string, complaintId: string, timeoutMs?: number) =>
  complaintEventArrived(receiver, type, complaintId, timeoutMs);

/** A complaint durapay holds, opened by the payer at the upstream. */
async function complaintOf(order: Created, opts: OpenComplaint = {}) {
  const c = stack.wechatpay!.sandbox.openComplaint(order.trade_no, opts);
  await arrived('complaint.created', c.complaintId);
  return c;
}

const sweepOnce = () => sweepOnceAt(stack);

const get = (id: string) => pay.get<ComplaintData>(`/api/v1/complaints/${id}`);

describe('intake', () => {
  test('when a payer complains, then the notification brings the complaint to the app once, with its order, words and deadlines, sealed at rest', async () => {
    const order = await paidOrder();
    const c = stack.wechatpay!.sandbox.openComplaint(order.trade_no, {
      detail: '茶叶受潮了，要求退款',
      payerPhone: '13800138000',
    });
    await arrived('complaint.created', c.complaintId);
    const answer = await get(c.complaintId);
    expect(answer.status).toBe(200);
    const data = answer.data!;
    expect(data).toEqual(
      expect.objectContaining({
        complaint_id: c.complaintId,
        trade_no: order.trade_no,
        order_unknown: false,
        merchant_id: merchantId,
        state: 'pending',
        problem_type: 'refund',
        detail: '茶叶受潮了，要求退款',
        payer_phone: '13800138000',
        overdue: false,
        refund_no: null,
      }),
    );
    expect(data.history.map((s) => s.type)).toEqual(['USER_CREATE_COMPLAINT']);
    const day = 24 * 3_600_000 * TIME_SCALE;
    const due =
      Date.parse(data.reply_due_at) -
      Date.parse((data as unknown as { complained_at: string }).complained_at);
    expect(Date.parse(data.complete_due_at) - Date.parse(data.reply_due_at)).toBeGreaterThan(1.9 * day);
    expect(due).toBeGreaterThan(0);
    // The payer's words and phone are not in the row as text.
    const [row] = await stack.database.db.sequelize.query<Record<string, string>>(
      'SELECT * FROM complaints WHERE complaint_id = :id',
      { replacements: { id: c.complaintId }, type: QueryTypes.SELECT },
    );
    expect(JSON.stringify(row)).not.toContain('13800138000');
    expect(JSON.stringify(row)).not.toContain('茶叶受潮');
    // Its notification is in the callback log, verified.
    const [notified] = await stack.database.db.sequelize.query<{ n: string }>(
      "SELECT count(*) AS n FROM channel_callbacks WHERE channel_code = 'wechatpay' AND outcome = 'complaint' AND verified",
      { type: QueryTypes.SELECT },
    );
    expect(Number(notified!.n)).toBeGreaterThan(0);
    // Nor in what the app was posted, nor in the notification durapay keeps: the app reads them with GET.
    const [posted] = received('complaint.created', c.complaintId);
    const event = JSON.parse(posted!.body) as { data: Record<string, unknown> };
    expect(event.data).toEqual(
      expect.objectContaining({ complaint_id: c.complaintId, trade_no: order.trade_no, state: 'pending' }),
    );
    expect(event.data).not.toHaveProperty('detail');
    expect(event.data).not.toHaveProperty('payer_phone');
    const kept = await stack.database.db.sequelize.query<Record<string, string>>(
      'SELECT body FROM notifications WHERE trade_no = :tradeNo',
      { replacements: { tradeNo: order.trade_no }, type: QueryTypes.SELECT },
    );
    expect(kept.length).toBeGreaterThan(0);
    expect(JSON.stringify(kept)).not.toContain('13800138000');
    expect(JSON.stringify(kept)).not.toContain('茶叶受潮');
    // The safety net running again finds nothing new: still one complaint.created.
    await sweepOnce();
    const list = await pay.get<{ list: ComplaintData[] }>(`/api/v1/complaints?trade_no=${order.trade_no}`);
    expect(list.data!.list.map((x) => x.complaint_id)).toEqual([c.complaintId]);
    expect(received('complaint.created', c.complaintId)).toHaveLength(1);
  });

  test('when a complaint notification is lost, then the Schedule finds the complaint and the app hears of it once', async () => {
    const order = await paidOrder();
    const c = stack.wechatpay!.sandbox.openComplaint(order.trade_no, { lostNotification: true });
    expect((await get(c.complaintId)).status).toBe(404);
    await sweepOnce();
    await arrived('complaint.created', c.complaintId);
    expect((await get(c.complaintId)).data!.state).toBe('pending');
    await sweepOnce();
    const handle = stack.client.workflow.getHandle(`complaint:wechatpay:${c.complaintId}`);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect(received('complaint.created', c.complaintId)).toHaveLength(1);
  });

  test('when publishing complaint.created fails after the complaint was recorded, then a retry still publishes it, once', async () => {
    const order = await paidOrder();
    // Failure injection in the real database: storing this order's complaint notifications fails
    // until the trigger goes. Each refusal draws from a sequence, which no rollback returns.
    const sql = (q: string) => stack.database.db.sequelize.query(q);
    const tag = `f${randomUUID().slice(0, 8)}`;
    await sql(`CREATE SEQUENCE ${tag}_refused`);
    await sql(`CREATE FUNCTION ${tag}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.trade_no = '${order.trade_no}' AND NEW.event_type LIKE 'complaint.%' THEN
          PERFORM nextval('${tag}_refused');
          RAISE EXCEPTION 'injected: notifications unavailable';
        END IF;
        RETURN NEW;
      END $$`);
    await sql(`CREATE TRIGGER ${tag} BEFORE INSERT ON notifications FOR EACH ROW EXECUTE FUNCTION ${tag}()`);
    try {
      const c = stack.wechatpay!.sandbox.openComplaint(order.trade_no);
      await until('the complaint recorded and its publication refused', async () => {
        const [row] = await stack.database.db.sequelize.query<{ recorded: boolean; refused: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM complaints WHERE complaint_id = :id) AS recorded,
                  (SELECT is_called FROM ${tag}_refused) AS refused`,
          { replacements: { id: c.complaintId }, type: QueryTypes.SELECT },
        );
        return row!.recorded && row!.refused ? true : undefined;
      });
      expect(received('complaint.created', c.complaintId)).toHaveLength(0);
      await sql(`DROP TRIGGER ${tag} ON notifications`);
      await arrived('complaint.created', c.complaintId);
      await sweepOnce();
      expect(received('complaint.created', c.complaintId)).toHaveLength(1);
    } finally {
      await sql(`DROP TRIGGER IF EXISTS ${tag} ON notifications`);
      await sql(`DROP FUNCTION IF EXISTS ${tag}()`);
      await sql(`DROP SEQUENCE IF EXISTS ${tag}_refused`);
    }
  });

  test('when a complaint names an order number durapay has but another transaction, then it is kept for operators and no app hears of it', async () => {
    const order = await paidOrder();
    // As if another merchant of the provider had used the same out_trade_no: the channel's
    // transaction the complaint names is not the one durapay's order was paid by.
    await stack.database.db.sequelize.query(
      "UPDATE orders SET channel_trade_no = '4200000000000000000000000000' WHERE trade_no = :tradeNo",
      { replacements: { tradeNo: order.trade_no } },
    );
    const c = stack.wechatpay!.sandbox.openComplaint(order.trade_no);
    const row = await until('the complaint kept', async () => {
      const [r] = await stack.database.db.sequelize.query<{ app_id: string | null; out_trade_no: string }>(
        'SELECT app_id, out_trade_no FROM complaints WHERE complaint_id = :id',
        { replacements: { id: c.complaintId }, type: QueryTypes.SELECT },
      );
      return r;
    });
    expect(row).toEqual({ app_id: null, out_trade_no: order.trade_no });
    expect((await get(c.complaintId)).status).toBe(404);
    await sweepOnce();
    expect(receiver.received.filter((r) => r.body.includes(c.complaintId))).toHaveLength(0);
  });

  test('when a complaint notification does not verify, then the channel hears its failure reply, it is logged, and nothing starts', async () => {
    const forgedId = `forged-${randomUUID()}`;
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/complaint/wechatpay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'wechatpay-signature': 'forged' },
      body: JSON.stringify({ id: forgedId, event_type: 'COMPLAINT.CREATE', resource: {} }),
    });
    expect(await res.text()).not.toContain('SUCCESS');
    // Kept in the callback log as evidence, refused.
    const logged = await stack.database.db.sequelize.query<{ verified: boolean; outcome: string }>(
      "SELECT verified, outcome FROM channel_callbacks WHERE channel_code = 'wechatpay' AND raw_body LIKE :like",
      { replacements: { like: `%${forgedId}%` }, type: QueryTypes.SELECT },
    );
    expect(logged).toEqual([{ verified: false, outcome: 'rejected' }]);
    const unknown = await fetch(`${stack.baseUrl}/api/v1/notify/complaint/nochannel`, {
      method: 'POST',
      body: '{}',
    });
    expect(await unknown.text()).toBe('fail');
  });

  test('when another app asks for a complaint, then it is 404 complaint_not_found and its actions reach nothing', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    for (const answer of [
      await stranger.get(`/api/v1/complaints/${c.complaintId}`),
      await stranger.post(`/api/v1/complaints/${c.complaintId}/reply`, { content: '你好' }),
      await stranger.post(`/api/v1/complaints/${c.complaintId}/refund`, { refund_amount: 100 }),
      await stranger.post(`/api/v1/complaints/${c.complaintId}/complete`, {}),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.code).toBe('complaint_not_found');
    }
    expect((await stranger.get<{ list: unknown[] }>('/api/v1/complaints')).data!.list).toEqual([]);
    expect(c.calls).toEqual({ response: 0, complete: 0, refundProgress: 0 });
  });
});

describe('actions', () => {
  test('when the same reply is sent ten times at once, then the channel gets it once, with its image, and the complaint is processing', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const body = {
      content: '您好，我们已安排退款。',
      images: [{ filename: 'receipt.png', data: PNG.toString('base64') }],
    };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        pay.post<ComplaintData>(`/api/v1/complaints/${c.complaintId}/reply`, body),
      ),
    );
    for (const a of answers) expect([a.status, a.code]).toEqual([200, 'success']);
    expect(c.calls.response).toBe(1);
    expect(c.state).toBe('PROCESSING');
    const reply = c.history.find((h) => h.operate_type === 'MERCHANT_RESPONSE')!;
    expect(reply.operate_details).toBe(body.content);
    expect(reply.image_list).toHaveLength(1);
    const now = (await get(c.complaintId)).data!;
    expect(now.state).toBe('processing');
    expect(now.replied_at).not.toBeNull();
    await arrived('complaint.updated', c.complaintId);
    // Another reply is another reply.
    expect(
      (await pay.post(`/api/v1/complaints/${c.complaintId}/reply`, { content: '已退款，请查收。' })).status,
    ).toBe(200);
    expect(c.calls.response).toBe(2);
  });

  test('when the channel takes a reply and its answer is lost, then the retry finds it there and the payer reads it once', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const content = '您好，已为您处理。[sandbox:answer-lost]';
    const answer = await pay.post<ComplaintData>(`/api/v1/complaints/${c.complaintId}/reply`, { content });
    expect([answer.status, answer.code, answer.data?.state]).toEqual([200, 'success', 'processing']);
    // The first call reached the channel and failed in its answer; nothing was sent again.
    expect(c.calls.response).toBe(1);
    expect(c.history.filter((h) => h.operate_type === 'MERCHANT_RESPONSE')).toHaveLength(1);
    // The app sending it again after all is a repeat: still one reply at the channel.
    expect((await pay.post(`/api/v1/complaints/${c.complaintId}/reply`, { content })).status).toBe(200);
    expect(c.history.filter((h) => h.operate_type === 'MERCHANT_RESPONSE')).toHaveLength(1);
  });

  test('when the channel refuses what a reply says, then it is 400 invalid_param with its reason, and the complaint still takes a reply', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const refused = await pay.post(`/api/v1/complaints/${c.complaintId}/reply`, {
      content: '加微信领红包 [sandbox:sensitive]',
    });
    expect([refused.status, refused.code]).toEqual([400, 'invalid_param']);
    expect(refused.message).toContain('敏感词');
    expect(c.state).toBe('PENDING');
    const ok = await pay.post<ComplaintData>(`/api/v1/complaints/${c.complaintId}/reply`, {
      content: '您好',
    });
    expect([ok.status, ok.data?.state]).toEqual([200, 'processing']);
  });

  test('when complete is sent five times at once, then the channel gets it once; a reply after it is 422 complaint_processed', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        pay.post<ComplaintData>(`/api/v1/complaints/${c.complaintId}/complete`, {}),
      ),
    );
    for (const a of answers) expect(a.data?.state).toBe('processed');
    expect(c.calls.complete).toBe(1);
    expect(c.state).toBe('PROCESSED');
    // Its workflow waiting out the quiet time after processing still takes a repeat at once.
    await until('the processed complaint notified', async () =>
      received('complaint.updated', c.complaintId).some(
        (r) => (JSON.parse(r.body) as { data: { state: string } }).data.state === 'processed',
      )
        ? true
        : undefined,
    );
    for (let i = 0; i < 3; i++) {
      const again = await pay.post<ComplaintData>(`/api/v1/complaints/${c.complaintId}/complete`, {});
      expect([again.status, again.data?.state]).toEqual([200, 'processed']);
    }
    expect(c.calls.complete).toBe(1);
    const late = await pay.post(`/api/v1/complaints/${c.complaintId}/reply`, { content: '补充说明' });
    expect([late.status, late.code]).toEqual([422, 'complaint_processed']);
    expect(c.calls.response).toBe(0);
    const actions = await stack.database.db.sequelize.query<{
      action: string;
      outcome: string;
      actor: string;
    }>('SELECT action, outcome, actor FROM complaint_actions WHERE complaint_id = :id ORDER BY id', {
      replacements: { id: c.complaintId },
      type: QueryTypes.SELECT,
    });
    expect(actions.filter((a) => a.outcome === 'done')).toEqual([
      { action: 'complete', outcome: 'done', actor: `app:${app.app_id}` },
    ]);
    expect(actions.filter((a) => a.outcome === 'repeated')).toHaveLength(7);
  });

  test("when a complaint's refund is sent eight times at once, then the order is refunded once through its book, and the complaint names the refund", async () => {
    const order = await paidOrder(2_000);
    const c = await complaintOf(order);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        pay.post<ComplaintData>(`/api/v1/complaints/${c.complaintId}/refund`, {
          refund_amount: 500,
          reason: '受潮',
        }),
      ),
    );
    for (const a of answers) expect([a.status, a.code]).toEqual([200, 'success']);
    const refundNos = new Set(answers.map((a) => a.data!.refund!.refund_no));
    expect(refundNos.size).toBe(1);
    const [refundNo] = [...refundNos];
    expect(c.order.refundKeys).toHaveLength(1);
    // The payer asked for a refund: the channel hears it approved, once.
    expect(c.calls.refundProgress).toBe(1);
    expect(c.history.filter((h) => h.operate_type === 'MERCHANT_APPROVE_REFUND')).toHaveLength(1);
    const now = (await get(c.complaintId)).data!;
    expect([now.refund_no, now.refund_amount]).toEqual([refundNo, 500]);
    // The book counts it like any refund of the order.
    const refund = await pay.get<{ trade_no: string; refund_amount: number }>(
      `/api/v1/pay/refund/query/${refundNo}`,
    );
    expect(refund.data).toEqual(expect.objectContaining({ trade_no: order.trade_no, refund_amount: 500 }));
    await until('the refund settled', async () =>
      (await pay.query(order.trade_no)).refunded_amount === 500 ? true : undefined,
    );
    // One refund per complaint: another amount is refused, and nothing more reaches the channel.
    const more = await pay.post(`/api/v1/complaints/${c.complaintId}/refund`, { refund_amount: 700 });
    expect([more.status, more.code]).toEqual([400, 'invalid_param']);
    expect(c.order.refundKeys).toHaveLength(1);
    expect(c.calls.refundProgress).toBe(1);
  });

  test("when an app numbers its own refund like a complaint's, then 400 invalid_param names merchant_refund_no", async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const taken = await pay.post('/api/v1/pay/refund', {
      trade_no: order.trade_no,
      refund_amount: 100,
      merchant_refund_no: `complaint:wechatpay:${c.complaintId}`,
    });
    expect([taken.status, taken.code]).toEqual([400, 'invalid_param']);
    expect(taken.message).toContain('"merchant_refund_no"');
    // The complaint's own refund still has its number.
    const refund = await pay.post(`/api/v1/complaints/${c.complaintId}/refund`, { refund_amount: 100 });
    expect(refund.status).toBe(200);
  });

  test("when a complaint's refund is more than the order can still refund, then it is refused with the book's answer, and a smaller one is made", async () => {
    const order = await paidOrder(1_000);
    const c = await complaintOf(order);
    const first = await pay.post('/api/v1/pay/refund', { trade_no: order.trade_no, refund_amount: 800 });
    expect(first.code).toBe('success');
    const beyond = await pay.post(`/api/v1/complaints/${c.complaintId}/refund`, { refund_amount: 500 });
    expect([beyond.status, beyond.code]).toEqual([422, 'refund_amount_exceed']);
    expect(c.order.refundKeys).toHaveLength(1);
    expect((await get(c.complaintId)).data!.refund_no).toBeNull();
    const within = await pay.post<ComplaintData>(`/api/v1/complaints/${c.complaintId}/refund`, {
      refund_amount: 200,
    });
    expect([within.status, within.code]).toEqual([200, 'success']);
    expect(c.order.refundKeys).toHaveLength(2);
    expect(within.data!.refund_amount).toBe(200);
  });

  test.each([
    ['reply', { content: '' }, /"content" is not allowed to be empty/],
    ['reply', { content: 'x'.repeat(201) }, /"content" length must be less than or equal to 200/],
    [
      'reply',
      { content: 'ok', images: [{ filename: 'a.gif', data: PNG.toString('base64') }] },
      /"images\[0\]\.filename"/,
    ],
    ['reply', { content: 'ok', images: [{ filename: 'a.png', data: '***' }] }, /"images\[0\]\.data"/],
    ['refund', { refund_amount: 0 }, /"refund_amount" must be greater than or equal to 1/],
    ['refund', {}, /"refund_amount" is required/],
    ['complete', { extra: 1 }, /"extra" is not allowed/],
  ])('when %s is sent %j, then 400 invalid_param names the field', async (action, body, message) => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const answer = await pay.post(`/api/v1/complaints/${c.complaintId}/${action}`, body);
    expect([answer.status, answer.code]).toEqual([400, 'invalid_param']);
    expect(answer.message).toMatch(message);
    expect(c.calls).toEqual({ response: 0, complete: 0, refundProgress: 0 });
  });

  test('when a complaint id is unknown, then 404 complaint_not_found', async () => {
    const answer = await pay.get('/api/v1/complaints/200201820990101000000000000');
    expect([answer.status, answer.code]).toEqual([404, 'complaint_not_found']);
  });
});

describe('deadlines', () => {
  test('when nobody replies, then complaint.reply_due comes at 12 hours and complaint.overdue at 24, each once, and the list shows it overdue', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const started = Date.now();
    await arrived('complaint.reply_due', c.complaintId, 60_000);
    const remindedAfter = Date.now() - started;
    await arrived('complaint.overdue', c.complaintId, 60_000);
    expect(remindedAfter).toBeLessThan(24 * 3_600_000 * TIME_SCALE);
    expect((await get(c.complaintId)).data!.overdue).toBe(true);
    const overdue = await pay.get<{ list: ComplaintData[] }>('/api/v1/complaints?overdue=true&limit=100');
    expect(overdue.data!.list.map((x) => x.complaint_id)).toContain(c.complaintId);
    expect(received('complaint.reply_due', c.complaintId)).toHaveLength(1);
    expect(received('complaint.overdue', c.complaintId)).toHaveLength(1);
  });

  test('when the merchant replies in time, then no reminder comes; the completion deadline still does', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    expect(
      (await pay.post(`/api/v1/complaints/${c.complaintId}/reply`, { content: '马上处理' })).status,
    ).toBe(200);
    await arrived('complaint.overdue', c.complaintId, 90_000);
    expect(received('complaint.reply_due', c.complaintId)).toHaveLength(0);
    const now = (await get(c.complaintId)).data!;
    expect(Date.now()).toBeGreaterThan(Date.parse(now.complete_due_at));
  });
});

/** What a merchant does to a complained order at one moment: the complaint's refund, or a refund of its own. */
type BookAction =
  { kind: 'complaint'; amount: number } | { kind: 'app'; amount: number; merchantRefundNo: string | null };

const bookAction: fc.Arbitrary<BookAction> = fc.oneof(
  fc.integer({ min: 1, max: 1_500 }).map((amount): BookAction => ({ kind: 'complaint', amount })),
  fc
    .record({
      amount: fc.integer({ min: 1, max: 1_500 }),
      merchantRefundNo: fc.option(fc.constantFrom('MR-a', 'MR-b'), { nil: null }),
    })
    .map((r): BookAction => ({ kind: 'app', ...r })),
);

describe('the refund book', () => {
  test('when complaint refunds and the app’s own refunds of the order interleave, then money out ≤ money in at the channel, and the book and the complaint agree with it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(bookAction, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 3 }),
        async (batches) => {
          const order = await paidOrder(2_000);
          const c = await complaintOf(order);
          const run = `R${randomUUID().slice(0, 6)}`;
          /** The refunds durapay answered success for, by number, with their amounts. */
          const answered = new Map<string, number>();
          for (const batch of batches) {
            const answers = await Promise.all(
              batch.map((a) =>
                a.kind === 'complaint'
                  ? pay.post<{ refund: { refund_no: string; refund_amount: number } }>(
                      `/api/v1/complaints/${c.complaintId}/refund`,
                      { refund_amount: a.amount },
                    )
                  : pay.post<{ refund_no: string; refund_amount: number }>('/api/v1/pay/refund', {
                      trade_no: order.trade_no,
                      refund_amount: a.amount,
                      ...(a.merchantRefundNo ? { merchant_refund_no: `${run}-${a.merchantRefundNo}` } : {}),
                    }),
              ),
            );
            for (const a of answers) {
              // Each is decided: made, or the book's refusal (or a repeat's).
              expect(['200 success', '422 refund_amount_exceed', '400 invalid_param']).toContain(
                `${a.status} ${a.code}`,
              );
              const made = a.data && ('refund' in a.data ? a.data.refund : a.data);
              if (a.status === 200 && made) answered.set(made.refund_no, made.refund_amount);
            }
          }
          await stack.wechatpay!.sandbox.idle(order.trade_no);
          const book = await until('the refunds settled', async () => {
            const rows = await stack.database.db.sequelize.query<{
              refund_no: string;
              merchant_refund_no: string | null;
              refund_amount: string;
              status: string;
            }>(
              'SELECT refund_no, merchant_refund_no, refund_amount, status FROM refunds WHERE trade_no = :tradeNo',
              { replacements: { tradeNo: order.trade_no }, type: QueryTypes.SELECT },
            );
            return rows.every((r) => r.status !== 'processing') ? rows : undefined;
          });
          const atChannel = stack.wechatpay!.sandbox.refundsOf(order.trade_no);
          // Money out ≤ money in, at the channel.
          expect(atChannel.reduce((sum, r) => sum + r.amount, 0)).toBeLessThanOrEqual(2_000);
          // The book holds what the channel holds, each refund once, for the same amount.
          const made = book.filter((r) => r.status !== 'failed');
          expect(new Map(made.map((r) => [r.refund_no, Number(r.refund_amount)]))).toEqual(
            new Map(atChannel.map((r) => [r.outRefundNo, r.amount])),
          );
          // Every refund an answer named is one of them, for the amount it said.
          for (const [refundNo, amount] of answered) {
            expect(atChannel.find((r) => r.outRefundNo === refundNo)?.amount).toBe(amount);
          }
          // The complaint names its own refund, and made at most one.
          const ofComplaint = made.filter((r) => r.merchant_refund_no?.startsWith('complaint:'));
          expect(ofComplaint.length).toBeLessThanOrEqual(1);
          const named = (await get(c.complaintId)).data!.refund_no;
          expect(named).toBe(ofComplaint[0]?.refund_no ?? null);
        },
      ),
      { numRuns: Number(process.env.MODEL_RUNS ?? 6), endOnFailure: true },
    );
  });
});

describe('payload keys', () => {
  test("when the payload keys rotate, then `keys reseal --rotate` seals a complaint's payer data again and the old key opens none of it", async () => {
    const order = await paidOrder();
    const c = await complaintOf(order, { detail: '换钥匙前的投诉', payerPhone: '13700137000' });
    // Processed: its workflow writes nothing more while the keys change.
    expect(
      (await pay.post<ComplaintData>(`/api/v1/complaints/${c.complaintId}/complete`, {})).data!.state,
    ).toBe('processed');
    const db = stack.database.db;
    const old = parsePayloadKeys(globalState().payloadKeys, 'the tests');
    const rotated = parsePayloadKeys(
      `${newPayloadKeyEntry('rotated')},${globalState().payloadKeys}`,
      'rotated',
    );
    expect(await complaintsSealedWith(db, old.current.id)).toBeGreaterThan(0);
    expect((await resealComplaints(db, rotated)).resealed).toBeGreaterThan(0);
    const reread = await new ComplaintRepository(db, rotated).find('wechatpay', c.complaintId);
    expect([reread!.detail, reread!.payerPhone]).toEqual(['换钥匙前的投诉', '13700137000']);
    await expect(new ComplaintRepository(db, old).find('wechatpay', c.complaintId)).rejects.toThrow(
      'rotated',
    );
  });
});
