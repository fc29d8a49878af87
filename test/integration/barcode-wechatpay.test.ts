/**
 * Barcode payments (SPEC §14) on WeChat Pay over durapay's HTTP API, against the offline WeChat
 * Pay v3 upstream (sandbox/wechatpay/codepay.ts) with real Temporal and Postgres: one test per
 * outcome a till meets, each counting what WeChat Pay holds at the upstream (the code payment's
 * state, and the codepay and reverse requests it got) once nothing more can happen. Money
 * WeChat Pay keeps ⇔ the order `paid`, in every case.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { billDateOf } from '../../src/modules/reconciliation/rules';
import type { SandboxBuyer } from '../../src/channels/sandbox';
import { walletAuthCode } from '../../sandbox/wallet-buyers';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { settledIn } from '../support/settled';
import { until } from '../support/wait';

jest.setTimeout(120_000);

// 1/20 of real time: a barcode payment is followed for 3 s (production's 60 s); WeChat Pay's
// late buyer confirms after 1 s, inside that wait.
const TIME_SCALE = 0.05;
const SUB_MCHID = '1900000109';

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let merchantId: string;

beforeAll(async () => {
  stack = await startTestStack({
    timeScale: TIME_SCALE,
    wechatpay: { timeScale: 1, refundDelayMs: 200, buyerConfirmMs: 1_000 },
  });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  merchantId = `MWXB-${randomUUID().slice(0, 8)}`;
  const created = await pay.post('/api/v1/merchant', {
    merchant_id: merchantId,
    merchant_name: 'Corner Shop',
  });
  expect(created.code).toBe('success');
  await pay.attach(merchantId, 'wechatpay', { sub_mchid: SUB_MCHID });
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

interface Created {
  trade_no: string;
  is_idempotent: boolean;
  status?: 'paid' | 'paying';
}

function order(buyer: SandboxBuyer, overrides: Record<string, unknown> = {}) {
  return {
    merchant_order_no: `WB-${randomUUID()}`,
    merchant_id: merchantId,
    pay_method: 'barcode',
    auth_code: walletAuthCode('wechatpay', buyer),
    amount: 2_300,
    subject: 'Counter sale',
    notify_url: receiver.url,
    device_id: 'till-03',
    store_id: 'store-0042',
    ...overrides,
  };
}

async function create(body: Record<string, unknown>): Promise<Created> {
  const a = await pay.post<Created>('/api/v1/pay/unified-order', body);
  expect({ status: a.status, code: a.code, message: a.message }).toMatchObject({
    status: 200,
    code: 'success',
  });
  return a.data!;
}

const query = (tradeNo: string) => pay.query(tradeNo);
const tradeNoOf = async (merchantOrderNo: string) => (await pay.tradeNoOf(merchantOrderNo))!;

const held = (tradeNo: string) => stack.wechatpay!.sandbox.codepay(tradeNo);

/**
 * Once nothing more can come of the order (the upstream's timers, the order's workflow, the
 * merchant's notifications), what WeChat Pay holds, what the order says and what was sent.
 */
async function outcome(tradeNo: string) {
  await stack.wechatpay!.sandbox.idle(tradeNo);
  await settledIn(stack)(tradeNo);
  const order = await query(tradeNo);
  const atChannel = held(tradeNo);
  return {
    status: order.status,
    closeReason: order.close_reason,
    channelKeepsMoney: atChannel?.kept ?? false,
    givenBack: atChannel?.givenBack ?? false,
    channelCalls: atChannel?.requests ?? 0,
    succeeded: pay.notificationsFor(tradeNo, 'payment.succeeded').length,
    closed: pay.notificationsFor(tradeNo, 'payment.closed').length,
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

describe('barcode payments on WeChat Pay (codepay)', () => {
  test('when the buyer pays at once, then the till is answered paid with WeChat Pay’s transaction_id, and the code’s prefix alone picks WeChat Pay', async () => {
    const created = await create(order('pays'));
    expect(created).toMatchObject({ status: 'paid', is_idempotent: false });
    expect(await query(created.trade_no)).toMatchObject({
      pay_method: 'barcode',
      channel_code: 'wechatpay',
      channel_trade_no: expect.stringMatching(/^4200\d+$/),
      device_id: 'till-03',
      store_id: 'store-0042',
    });
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenPaid, channelCalls: 1 });
  });

  test('when the buyer confirms a moment later (202 USERPAYING), then the till is answered paying and the order follows to paid by query', async () => {
    const created = await create(order('confirms_later'));
    expect(created.status).toBe('paying');
    await until('the order paid', async () =>
      (await query(created.trade_no)).status === 'paid' ? true : undefined,
    );
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenPaid, channelCalls: 1 });
  });

  test('when WeChat Pay refuses the code (NOT_ENOUGH, an expired code), then it is 422 order_not_paid with WeChat Pay’s words, and the order is closed as refused', async () => {
    for (const [buyer, words] of [
      ['insufficient', 'NOT_ENOUGH'],
      ['expired', 'TRADE_ERROR'],
    ] as const) {
      const body = order(buyer);
      const answer = await pay.post('/api/v1/pay/unified-order', body);
      expect({ status: answer.status, code: answer.code }).toEqual({ status: 422, code: 'order_not_paid' });
      expect(answer.message).toContain(words);
      const tradeNo = await tradeNoOf(body.merchant_order_no);
      expect(await outcome(tradeNo)).toMatchObject({
        status: 'closed',
        closeReason: 'refused',
        channelKeepsMoney: false,
        succeeded: 0,
        closed: 1,
        channelCalls: 1,
      });
    }
  });

  test('when the buyer never confirms, then the payment is reversed at WeChat Pay when the wait ends and the order closed as reversed', async () => {
    const created = await create(order('never_confirms'));
    expect(created.status).toBe('paying');
    expect(await outcome(created.trade_no)).toMatchObject({
      ...whenReversed,
      givenBack: false,
      channelCalls: 1,
    });
    expect(held(created.trade_no)).toMatchObject({ state: 'REVOKED', reverses: 1 });
  });

  test('when WeChat Pay takes the money and the answer is lost, then the till gets 502 channel_timeout and the reverse gives the money back', async () => {
    const body = order('answer_lost');
    const answer = await pay.post('/api/v1/pay/unified-order', body);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 502, code: 'channel_timeout' });
    const tradeNo = await tradeNoOf(body.merchant_order_no);
    expect(await outcome(tradeNo)).toMatchObject({ ...whenReversed, givenBack: true, channelCalls: 1 });
  });

  test('when the payment request reaches WeChat Pay only after its reverse found nothing, then the reverse is asked again and gives the money back', async () => {
    const body = order('pays', { subject: 'Counter sale [sandbox:codepay-late]' });
    const answer = await pay.post('/api/v1/pay/unified-order', body);
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 502, code: 'channel_timeout' });
    const tradeNo = await tradeNoOf(body.merchant_order_no);
    await until('WeChat Pay takes the late payment', async () =>
      held(tradeNo)?.requests ? true : undefined,
    );
    expect(await outcome(tradeNo)).toMatchObject({ ...whenReversed, givenBack: true });
    // The first reverse found no such payment; a later one found it and gave it back.
    expect(held(tradeNo)!.reverses).toBeGreaterThanOrEqual(1);
  });

  test('when the buyer confirms just as the reverse arrives, then the reverse gives the money back and the order is never announced paid', async () => {
    const created = await create(order('confirms_at_reverse'));
    expect(created.status).toBe('paying');
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenReversed, givenBack: true });
  });

  test('when WeChat Pay refuses to reverse a payment it holds, then the order is paid with its transaction_id, never closed with the buyer charged', async () => {
    const created = await create(order('reverse_refused'));
    expect(created.status).toBe('paying');
    expect(await outcome(created.trade_no)).toMatchObject(whenPaid);
    expect(await query(created.trade_no)).toMatchObject({
      channel_trade_no: expect.stringMatching(/^4200\d+$/),
    });
  });

  test('when the same order is sent again with the same code, then it joins the order: WeChat Pay is asked once', async () => {
    const body = order('pays');
    const first = await create(body);
    const again = await create(body);
    expect(again).toMatchObject({ trade_no: first.trade_no, status: 'paid', is_idempotent: true });
    expect(await outcome(first.trade_no)).toMatchObject({ ...whenPaid, channelCalls: 1 });
  });

  test('when the same order is sent again with another code, then it is 400 invalid_param and WeChat Pay never sees the other code', async () => {
    const body = order('never_confirms');
    const first = await create(body);
    const answer = await pay.post('/api/v1/pay/unified-order', {
      ...body,
      auth_code: walletAuthCode('wechatpay'),
    });
    expect({ status: answer.status, code: answer.code, message: answer.message }).toEqual({
      status: 400,
      code: 'invalid_param',
      message: 'merchant_order_no already used with another auth_code',
    });
    expect(await outcome(first.trade_no)).toMatchObject({ ...whenReversed, channelCalls: 1 });
  });

  test('when a merchant closes an order the buyer is confirming, then it is reversed at WeChat Pay and closed as reversed', async () => {
    // A buyer who confirms a second later: a close that did not reverse would leave the order
    // to be paid (and answer 422), not to wait for BARCODE_WAIT and be reversed anyway.
    const created = await create(order('confirms_later'));
    const closed = await pay.post('/api/v1/pay/close', { trade_no: created.trade_no });
    expect({ status: closed.status, code: closed.code }).toEqual({ status: 200, code: 'success' });
    expect(await query(created.trade_no)).toMatchObject({ status: 'closed', close_reason: 'reversed' });
    // Whether the buyer had confirmed by the time the reverse arrived, nothing is kept.
    expect(await outcome(created.trade_no)).toMatchObject(whenReversed);
  });

  test('when a paid barcode order is refunded, then WeChat Pay refunds it like any other order', async () => {
    const created = await create(order('pays'));
    await outcome(created.trade_no);
    const refund = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
      trade_no: created.trade_no,
      merchant_refund_no: `R-${randomUUID()}`,
      refund_amount: 2_300,
      notify_url: receiver.url,
    });
    expect({ status: refund.status, code: refund.code }).toEqual({ status: 200, code: 'success' });
    await until('the order refunded', async () =>
      (await query(created.trade_no)).status === 'refunded' ? true : undefined,
    );
    expect(held(created.trade_no)?.state).toBe('REFUND');
  });

  test('when the code has WeChat Pay’s prefix but not its shape, then it is 400 invalid_param naming auth_code, and sent to WeChat Pay by name it is refused there', async () => {
    const short = await pay.post('/api/v1/pay/unified-order', order('pays', { auth_code: '1312345678' }));
    expect({ status: short.status, code: short.code }).toEqual({ status: 400, code: 'invalid_param' });
    expect(short.message).toContain('auth_code');
    const named = order('pays', { auth_code: '1312345678', channel_code: 'wechatpay' });
    const refused = await pay.post('/api/v1/pay/unified-order', named);
    expect({ status: refused.status, code: refused.code }).toEqual({ status: 422, code: 'order_not_paid' });
    expect(refused.message).toContain('PARAM_ERROR');
  });
});

describe("WeChat Pay's statement of barcode payments", () => {
  test('when one barcode order is paid and another given back by its reverse, then the statement states the paid one, and the REVOKED line is not a payment', async () => {
    const paid = await create(order('pays'));
    const reversed = await create(order('confirms_at_reverse'));
    expect(await outcome(paid.trade_no)).toMatchObject(whenPaid);
    expect(await outcome(reversed.trade_no)).toMatchObject({ ...whenReversed, givenBack: true });
    const statements = stack.services.channels.get('wechatpay')!.statements!;
    const [row] = await stack.database.db.sequelize.query<{ pay_time: Date }>(
      'SELECT pay_time FROM orders WHERE trade_no = :tradeNo',
      { replacements: { tradeNo: paid.trade_no }, type: QueryTypes.SELECT },
    );
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-wechat-barcode-bill-')), 'bill');
    const ctx = { currency: 'CNY', channelTradeNo: null, subMerchantNo: SUB_MCHID };
    const got = await statements.fetch(ctx, billDateOf(new Date(row!.pay_time)), file);
    if (got.status !== 'ready') throw new Error(`the statement is ${got.status}`);
    const lines: Record<string, string[]> = { [paid.trade_no]: [], [reversed.trade_no]: [] };
    for await (const line of statements.parse(file, got)) lines[line.tradeNo]?.push(line.kind);
    expect(lines).toEqual({ [paid.trade_no]: ['payment'], [reversed.trade_no]: [] });
    // WeChat Pay lists the reversed one, as REVOKED: the parser is what leaves it out.
    const text = gunzipSync(fs.readFileSync(file)).toString('utf8');
    const revoked = text.split('\r\n').filter((l) => l.includes(`\`${reversed.trade_no},`));
    expect(revoked.map((l) => l.split(',')[9])).toEqual(['`REVOKED']);
  });
});
