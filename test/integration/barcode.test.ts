/**
 * Barcode payments over HTTP (SPEC §14) on the real stack, against the sandbox: one test per
 * outcome a till meets, each counting what the channel holds at the simulator's ledger (its row
 * of the payment: paid, or closed with the money given back) and what the merchant was told,
 * once nothing more can happen. Money the channel keeps ⇔ the order `paid`, in every case.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { sandboxAuthCode, type SandboxBuyer } from '../../src/channels/sandbox';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { billDateOf } from '../../src/modules/reconciliation/rules';
import { startTestStack, type TestStack } from '../support/harness';
import { envelope, type Envelope } from '../support/http';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';
import { settledIn } from '../support/settled';
import { activityCalls } from '../support/history';

jest.setTimeout(120_000);

// 1/20 of real time: a barcode payment is followed for 3 s (production's 60 s), queried at
// 50 ms, 100 ms, …; the sandbox's late buyer confirms after 1 s, inside that wait.
const TIME_SCALE = 0.05;

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: TIME_SCALE, sandboxBuyerConfirmMs: 1_000 });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Created {
  trade_no: string;
  pay_credential: Record<string, unknown>;
  is_idempotent: boolean;
  status?: 'paid' | 'paying';
}

const post = (path: string, json: unknown) => signedFetch(stack.baseUrl, app, 'POST', path, { json });

function order(buyer: SandboxBuyer, overrides: Record<string, unknown> = {}) {
  return {
    merchant_order_no: `B-${randomUUID()}`,
    pay_method: 'barcode',
    auth_code: sandboxAuthCode(buyer),
    amount: 1_500,
    subject: 'Counter sale',
    notify_url: receiver.url,
    device_id: 'till-07',
    store_id: 'store-0001',
    ...overrides,
  };
}

async function createRaw(
  body: Record<string, unknown>,
): Promise<{ status: number; body: Envelope<Created> }> {
  const res = await post('/api/v1/pay/unified-order', body);
  return { status: res.status, body: await envelope<Created>(res) };
}

async function create(body: Record<string, unknown>): Promise<Created> {
  const answer = await createRaw(body);
  expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 200, code: 'success' });
  return answer.body.data!;
}

const query = (tradeNo: string) => pay.query(tradeNo);
const tradeNoOf = async (merchantOrderNo: string) => (await pay.tradeNoOf(merchantOrderNo))!;

/** The simulator's row of the payment: what the channel holds, and how often it was asked. */
async function ledger(tradeNo: string) {
  const [row] = await stack.database.db.sequelize.query<{
    status: string;
    reverse_refunded: boolean | null;
    reverse_requests: number;
    create_requests: number;
  }>(
    `SELECT status, reverse_refunded, reverse_requests, create_requests
       FROM sandbox_orders WHERE trade_no = :tradeNo`,
    { replacements: { tradeNo }, type: QueryTypes.SELECT },
  );
  return row;
}

/** Whether the channel keeps the buyer's money: its payment is paid, not closed or given back. */
const channelKeepsMoney = (row: Awaited<ReturnType<typeof ledger>>) => row?.status === 'paid';

const notified = (tradeNo: string, type: string) => pay.notificationsFor(tradeNo, type).length;

/**
 * Once nothing more can come of the order (the simulator's callbacks, its workflow, the
 * merchant's notifications: settled waits for each to be delivered or given up), what the
 * channel holds, what the order says and what was sent.
 */
async function outcome(tradeNo: string) {
  await stack.sandboxIdle(tradeNo);
  await settledIn(stack)(tradeNo);
  const order = await query(tradeNo);
  const held = await ledger(tradeNo);
  return {
    status: order.status,
    closeReason: order.close_reason,
    channelKeepsMoney: channelKeepsMoney(held),
    reverseRefunded: held?.reverse_refunded ?? null,
    channelCalls: held?.create_requests ?? 0,
    succeeded: notified(tradeNo, 'payment.succeeded'),
    closed: notified(tradeNo, 'payment.closed'),
  };
}

const whenPaid = { status: 'paid', closeReason: null, channelKeepsMoney: true, succeeded: 1, closed: 0 };
const whenReversed = {
  status: 'closed',
  closeReason: 'reversed',
  channelKeepsMoney: false,
  succeeded: 0,
  closed: 1,
};

describe('POST /api/v1/pay/unified-order with pay_method barcode', () => {
  test('when the buyer pays at once, then the till is answered paid, with the till and shop on the order, and payment.succeeded is sent once', async () => {
    const created = await create(order('pays'));
    expect(created).toMatchObject({ status: 'paid', is_idempotent: false, pay_credential: {} });
    expect(await query(created.trade_no)).toMatchObject({
      pay_method: 'barcode',
      channel_code: 'sandbox',
      device_id: 'till-07',
      store_id: 'store-0001',
    });
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenPaid, channelCalls: 1 });
  });

  test('when the buyer confirms a moment later, then the till is answered paying, and the order follows to paid', async () => {
    const created = await create(order('confirms_later'));
    expect(created.status).toBe('paying');
    await until('the order paid', async () =>
      (await query(created.trade_no)).status === 'paid' ? true : undefined,
    );
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenPaid, channelCalls: 1 });
  });

  test('when the channel refuses the code, then it is 422 order_not_paid with the channel reason, and the order is closed as refused', async () => {
    for (const [buyer, words] of [
      ['insufficient', 'balance'],
      ['expired', 'expired'],
    ] as const) {
      const body = order(buyer);
      const answer = await createRaw(body);
      expect({ status: answer.status, code: answer.body.code }).toEqual({
        status: 422,
        code: 'order_not_paid',
      });
      expect(answer.body.message).toContain(words);
      const tradeNo = await tradeNoOf(body.merchant_order_no);
      expect(await outcome(tradeNo)).toMatchObject({
        status: 'closed',
        closeReason: 'refused',
        channelKeepsMoney: false,
        succeeded: 0,
        closed: 1,
      });
      // Asked again, the till hears the same refusal; the channel is not asked again.
      const again = await createRaw(body);
      expect({ status: again.status, code: again.body.code }).toEqual({
        status: 422,
        code: 'order_not_paid',
      });
    }
  });

  test('when the buyer never confirms, then the order is reversed when the wait ends and closed as reversed, never announced paid', async () => {
    const created = await create(order('never_confirms'));
    expect(created.status).toBe('paying');
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenReversed, reverseRefunded: false });
    expect((await ledger(created.trade_no))?.reverse_requests).toBe(1);
  });

  test('when the channel takes the money and the answer is lost, then the till gets 502 channel_timeout, and the reverse gives the money back', async () => {
    const body = order('answer_lost');
    const answer = await createRaw(body);
    expect({ status: answer.status, code: answer.body.code }).toEqual({
      status: 502,
      code: 'channel_timeout',
    });
    const tradeNo = await tradeNoOf(body.merchant_order_no);
    // The reverse had been asked of the channel when the till was answered.
    const { events } = await stack.client.workflow
      .getHandle(orderWorkflowId(app.app_id, body.merchant_order_no))
      .fetchHistory();
    expect(activityCalls(events)).toContain('reverseBarcodePayment');
    // The simulator's callback of the payment it took arrives after the reverse: it is not a payment.
    expect(await outcome(tradeNo)).toMatchObject({ ...whenReversed, reverseRefunded: true, channelCalls: 1 });
  });

  test('when the buyer confirms just as the reverse arrives, then the reverse gives the money back and the order is closed, never announced paid', async () => {
    const created = await create(order('confirms_at_reverse'));
    expect(created.status).toBe('paying');
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenReversed, reverseRefunded: true });
  });

  test('when the channel refuses to reverse a payment it holds, then the order is paid, never closed with the buyer charged', async () => {
    const created = await create(order('reverse_refused'));
    expect(created.status).toBe('paying');
    const result = await outcome(created.trade_no);
    expect(result).toMatchObject(whenPaid);
    expect(await query(created.trade_no)).toMatchObject({ channel_trade_no: expect.any(String) });
  });

  test('when the same order is sent again with the same code, then it joins the order: one channel call', async () => {
    const body = order('pays');
    const first = await create(body);
    const again = await create(body);
    expect(again).toMatchObject({ trade_no: first.trade_no, status: 'paid', is_idempotent: true });
    const pending = order('never_confirms');
    const waiting = await create(pending);
    const repeat = await create(pending);
    expect(repeat).toMatchObject({ trade_no: waiting.trade_no, status: 'paying', is_idempotent: true });
    expect(await outcome(first.trade_no)).toMatchObject({ ...whenPaid, channelCalls: 1 });
    expect(await outcome(waiting.trade_no)).toMatchObject({ ...whenReversed, channelCalls: 1 });
  });

  test('when the same order is sent again with another code, then it is 400 invalid_param and the other code never reaches the channel', async () => {
    for (const buyer of ['pays', 'never_confirms'] as const) {
      const body = order(buyer);
      const first = await create(body);
      const other = sandboxAuthCode('pays');
      const answer = await createRaw({ ...body, auth_code: other });
      expect({ status: answer.status, code: answer.body.code, message: answer.body.message }).toEqual({
        status: 400,
        code: 'invalid_param',
        message: 'merchant_order_no already used with another auth_code',
      });
      const otherHash = createHash('sha256').update(other).digest('hex');
      const [seen] = await stack.database.db.sequelize.query<{ n: string }>(
        'SELECT count(*) AS n FROM sandbox_orders WHERE auth_code_sha256 = :otherHash',
        { replacements: { otherHash }, type: QueryTypes.SELECT },
      );
      expect(Number(seen!.n)).toBe(0);
      expect((await outcome(first.trade_no)).channelCalls).toBe(1);
    }
  });

  test('when the code is malformed, missing, claimed by no channel, or sent with another pay method, then it is 400 invalid_param naming auth_code', async () => {
    const cases: Record<string, unknown>[] = [
      order('pays', { auth_code: 'short' }),
      order('pays', { auth_code: '99012345678901234-' }),
      order('pays', { auth_code: undefined }),
      order('pays', { auth_code: 'ABCDEFGHIJKLMNOP' }),
      { ...order('pays'), pay_method: 'qr_code', device_id: undefined, store_id: undefined },
    ];
    for (const body of cases) {
      const answer = await createRaw(body);
      expect({
        status: answer.status,
        code: answer.body.code,
        names: answer.body.message.includes('auth_code'),
      }).toEqual({
        status: 400,
        code: 'invalid_param',
        names: true,
      });
    }
    const [made] = await stack.database.db.sequelize.query<{ n: string }>(
      'SELECT count(*) AS n FROM orders WHERE merchant_order_no IN (:nos)',
      { replacements: { nos: cases.map((c) => c.merchant_order_no) }, type: QueryTypes.SELECT },
    );
    expect(Number(made!.n)).toBe(0);
  });
});

describe("the day's statement of barcode payments", () => {
  test('when a barcode order is paid and another is given back by its reverse, then the statement states the paid one and not the other', async () => {
    const paid = await create(order('pays'));
    const reversed = await create(order('confirms_at_reverse'));
    expect(await outcome(reversed.trade_no)).toMatchObject({ ...whenReversed, reverseRefunded: true });
    const statements = stack.services.channels.get('sandbox')!.statements!;
    const stated = async (tradeNo: string) => {
      const [row] = await stack.database.db.sequelize.query<{ paid_at: Date }>(
        'SELECT paid_at FROM sandbox_orders WHERE trade_no = :tradeNo',
        { replacements: { tradeNo }, type: QueryTypes.SELECT },
      );
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-barcode-bill-')), 'bill');
      const ctx = { currency: 'CNY', channelTradeNo: null };
      const got = await statements.fetch(ctx, billDateOf(new Date(row!.paid_at)), file);
      if (got.status !== 'ready') throw new Error(`the statement is ${got.status}`);
      const lines = [];
      for await (const line of statements.parse(file, got))
        if (line.tradeNo === tradeNo) lines.push(line.kind);
      return lines;
    };
    expect({ paid: await stated(paid.trade_no), reversed: await stated(reversed.trade_no) }).toEqual({
      paid: ['payment'],
      reversed: [],
    });
  });
});

describe('POST /api/v1/pay/close of a barcode order', () => {
  test('when a merchant closes an order the buyer is confirming, then it is reversed and closed as reversed', async () => {
    // A buyer who confirms a second later: a close that did not reverse would leave the order
    // to be paid (and answer 422), not to wait for BARCODE_WAIT and be reversed anyway.
    const created = await create(order('confirms_later'));
    const res = await post('/api/v1/pay/close', { trade_no: created.trade_no });
    expect({ status: res.status, code: (await envelope(res)).code }).toEqual({
      status: 200,
      code: 'success',
    });
    expect(await query(created.trade_no)).toMatchObject({ status: 'closed', close_reason: 'reversed' });
    // Whether the buyer had confirmed by the time the reverse arrived, nothing is kept.
    expect(await outcome(created.trade_no)).toMatchObject(whenReversed);
  });

  test('when a merchant closes an order whose payment the channel will not give back, then it is 422 order_already_paid and the order is paid', async () => {
    const created = await create(order('reverse_refused'));
    const res = await post('/api/v1/pay/close', { trade_no: created.trade_no });
    expect({ status: res.status, code: (await envelope(res)).code }).toEqual({
      status: 422,
      code: 'order_already_paid',
    });
    expect(await outcome(created.trade_no)).toMatchObject(whenPaid);
  });
});
