/**
 * Consumer complaints (SPEC §16) on the real stack against the offline Alipay gateway's trade
 * complaints (alipay.merchant.tradecomplain.*): a complaint arriving by the signed
 * `alipay.merchant.tradecomplain.changed` message and one found only by the safety net both
 * reach the app once; reply, complete and refund each reach Alipay once however often they are
 * sent at once (counted at the gateway); a refund beyond what the order can refund is the book's
 * refusal; another app's complaint is 404; a forged message changes nothing.
 */
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
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

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let stranger: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.001, alipay: { timeScale: 0.001, refundDelayMs: 200 } });
  app = await stack.createApp(['payments']);
  const other = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  stranger = paymentsClient(stack, other, receiver);
  // What an operator does once in Alipay's console: the app's gateway URL, where its messages go.
  stack.alipay!.sandbox.setGatewayUrl(`${stack.baseUrl}/api/v1/notify/complaint/alipay`);
  await startComplaintSweep(stack);
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
  channel_code: string;
  trade_no: string | null;
  state: string;
  problem_type: string;
  detail: string;
  payer_phone: string | null;
  awaits_reply: boolean;
  refund_no: string | null;
  refund_amount: number | null;
  history: { type: string; details: string }[];
  replied_at: string | null;
  refund?: { refund_no: string; refund_amount: number };
}

async function paidOrder(amount = 2_000): Promise<Created> {
  const a = await pay.post<Created>(
    '/api/v1/pay/unified-order',
    pay.orderBody({ channel_code: 'alipay', subject: 'Green tea', amount, expire_minutes: 1440 }),
  );
  if (a.code !== 'success') throw new Error(`create failed: ${a.status} ${a.code} ${a.message}`);
  // The QR code is the gateway's cashier: the buyer scans it and pays.
  const res = await fetch(a.data!.pay_credential.qr_code!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'success' }),
  });
  expect(res.status).toBe(200);
  await pay.statusIs(a.data!.trade_no, 'paid');
  return a.data!;
}

const received = (type: string, complaintId: string) => complaintEvents(receiver, type, complaintId);
const arrived = (type: string, complaintId: string) => complaintEventArrived(receiver, type, complaintId);

const sweepOnce = () => sweepOnceAt(stack);

const get = (id: string) => pay.get<ComplaintData>(`/api/v1/complaints/${id}`);

async function complaintOf(order: Created) {
  const c = stack.alipay!.sandbox.openComplaint(order.trade_no);
  await arrived('complaint.created', c.complainEventId);
  return c;
}

describe('intake', () => {
  test("when a payer complains, then Alipay's message brings the complaint to the app once, with its order, words and phone", async () => {
    const order = await paidOrder();
    const c = stack.alipay!.sandbox.openComplaint(order.trade_no, {
      reason: '商品质量问题',
      content: '茶叶受潮了',
      phoneNo: '13800138000',
    });
    await arrived('complaint.created', c.complainEventId);
    const data = (await get(c.complainEventId)).data!;
    expect(data).toEqual(
      expect.objectContaining({
        complaint_id: c.complainEventId,
        channel_code: 'alipay',
        trade_no: order.trade_no,
        state: 'pending',
        problem_type: 'refund',
        detail: '商品质量问题: 茶叶受潮了',
        payer_phone: '13800138000',
        awaits_reply: false,
      }),
    );
    expect(data.history.map((s) => s.type)).toEqual(['USER_CREATE_COMPLAINT']);
    const logged = await stack.database.db.sequelize.query<{ n: string }>(
      "SELECT count(*) AS n FROM channel_callbacks WHERE channel_code = 'alipay' AND outcome = 'complaint' AND verified",
      { type: QueryTypes.SELECT },
    );
    expect(Number(logged[0]!.n)).toBeGreaterThan(0);
    // The message was answered `success`: Alipay does not send it again.
    await stack.alipay!.sandbox.idle(`complaint:${c.complainEventId}`);
    expect(stack.alipay!.sandbox.notifications(`complaint:${c.complainEventId}`).acknowledged).toBe(true);
    await sweepOnce();
    expect(received('complaint.created', c.complainEventId)).toHaveLength(1);
  });

  test('when the message is lost, then the Schedule finds the complaint and the app hears of it once', async () => {
    const order = await paidOrder();
    const c = stack.alipay!.sandbox.openComplaint(order.trade_no, { lostMessage: true });
    expect((await get(c.complainEventId)).status).toBe(404);
    await sweepOnce();
    await arrived('complaint.created', c.complainEventId);
    expect((await get(c.complainEventId)).data!.state).toBe('pending');
    await sweepOnce();
    expect(received('complaint.created', c.complainEventId)).toHaveLength(1);
  });

  test('when a message does not verify, then Alipay hears `fail`, it is logged, and no complaint starts', async () => {
    const order = await paidOrder();
    const c = stack.alipay!.sandbox.openComplaint(order.trade_no, { lostMessage: true });
    const forged = new URLSearchParams({
      msg_method: 'alipay.merchant.tradecomplain.changed',
      app_id: stack.alipay!.keys.appId,
      notify_id: 'forged-1',
      biz_content: JSON.stringify({ complain_event_id: c.complainEventId }),
      sign_type: 'RSA2',
      sign: Buffer.from('forged').toString('base64'),
    });
    const res = await fetch(`${stack.baseUrl}/api/v1/notify/complaint/alipay`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: forged.toString(),
    });
    expect(await res.text()).toBe('fail');
    const logged = await stack.database.db.sequelize.query<{ verified: boolean; outcome: string }>(
      "SELECT verified, outcome FROM channel_callbacks WHERE channel_code = 'alipay' AND raw_body LIKE '%forged-1%'",
      { type: QueryTypes.SELECT },
    );
    expect(logged).toEqual([{ verified: false, outcome: 'rejected' }]);
    expect((await get(c.complainEventId)).status).toBe(404);
  });

  test('when another app asks for a complaint, then it is 404 and its actions reach nothing at Alipay', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    for (const answer of [
      await stranger.get(`/api/v1/complaints/${c.complainEventId}`),
      await stranger.post(`/api/v1/complaints/${c.complainEventId}/reply`, { content: '你好' }),
      await stranger.post(`/api/v1/complaints/${c.complainEventId}/refund`, { refund_amount: 100 }),
      await stranger.post(`/api/v1/complaints/${c.complainEventId}/complete`, {}),
    ]) {
      expect([answer.status, answer.code]).toEqual([404, 'complaint_not_found']);
    }
    expect(c.calls).toEqual({ reply: 0, supplement: 0, feedback: 0 });
    expect(stack.alipay!.sandbox.trade(order.trade_no)!.refunds).toHaveLength(0);
  });
});

describe('actions', () => {
  test('when the same reply is sent ten times at once, then Alipay gets it once, with its image, and the payer’s answer awaits a reply', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const body = {
      content: '您好，我们已安排退款。',
      images: [{ filename: 'receipt.png', data: PNG.toString('base64') }],
    };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        pay.post<ComplaintData>(`/api/v1/complaints/${c.complainEventId}/reply`, body),
      ),
    );
    for (const a of answers) expect([a.status, a.code]).toEqual([200, 'success']);
    expect(c.calls.reply).toBe(1);
    const merchant = c.replies.filter((r) => r.replier_role === 'MERCHANT');
    expect(merchant).toHaveLength(1);
    expect(merchant[0]!.content).toBe(body.content);
    expect(merchant[0]!.images).toHaveLength(1);
    // The image Alipay keeps is the one sent.
    const image = await fetch(merchant[0]!.images[0]!);
    expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true);
    const now = (await get(c.complainEventId)).data!;
    expect([now.state, now.replied_at === null]).toEqual(['processing', false]);

    stack.alipay!.sandbox.payerReplies(c.complainEventId, '什么时候到账？');
    await until('the payer’s words await a reply', async () =>
      (await get(c.complainEventId)).data!.awaits_reply ? true : undefined,
    );
    expect((await get(c.complainEventId)).data!.history.map((s) => s.type)).toEqual([
      'USER_CREATE_COMPLAINT',
      'MERCHANT_RESPONSE',
      'USER_RESPONSE',
    ]);
  });

  test('when complete is sent five times at once, then Alipay gets one feedback; a reply after it is 422 complaint_processed', async () => {
    const order = await paidOrder();
    const c = await complaintOf(order);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        pay.post<ComplaintData>(`/api/v1/complaints/${c.complainEventId}/complete`, {}),
      ),
    );
    for (const a of answers) expect([a.status, a.data?.state]).toEqual([200, 'processed']);
    expect(c.calls.feedback).toBe(1);
    expect(c.status).toBe('MERCHANT_FEEDBACKED');
    expect(c.feedback).toEqual({ code: '05', content: expect.any(String) });
    const late = await pay.post(`/api/v1/complaints/${c.complainEventId}/reply`, { content: '补充说明' });
    expect([late.status, late.code]).toEqual([422, 'complaint_processed']);
    expect(c.calls.reply).toBe(0);
  });

  test("when a complaint's refund is sent eight times at once, then Alipay refunds the order once through its book, and a refund beyond the order is the book's refusal", async () => {
    const order = await paidOrder(2_000);
    const c = await complaintOf(order);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        pay.post<ComplaintData>(`/api/v1/complaints/${c.complainEventId}/refund`, { refund_amount: 500 }),
      ),
    );
    for (const a of answers) expect([a.status, a.code]).toEqual([200, 'success']);
    expect(new Set(answers.map((a) => a.data!.refund!.refund_no)).size).toBe(1);
    await until('the refund settled', async () =>
      (await pay.query(order.trade_no)).refunded_amount === 500 ? true : undefined,
    );
    expect(stack.alipay!.sandbox.trade(order.trade_no)!.refunds).toHaveLength(1);

    // A second complaint about the same order asks for more than is left: the book refuses it.
    const again = await complaintOf(order);
    const over = await pay.post(`/api/v1/complaints/${again.complainEventId}/refund`, {
      refund_amount: 1_600,
    });
    expect([over.status, over.code]).toEqual([422, 'refund_amount_exceed']);
    expect(stack.alipay!.sandbox.trade(order.trade_no)!.refunds).toHaveLength(1);
  });
});
