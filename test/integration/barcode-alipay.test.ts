/**
 * Alipay barcode payments (当面付 条码支付, SPEC §14) over durapay's HTTP API on the real stack,
 * against the offline Alipay gateway (sandbox/alipay) and its test buyers (`28 99 <digit> …`,
 * sandbox/wallet-buyers.ts): one test per outcome a till meets, each counting, once nothing more
 * can happen, what Alipay holds at the gateway's ledger (its trade: paid and kept, or closed with
 * the money given back), how often it was asked, and what the merchant was told. Money Alipay
 * keeps ⇔ the order `paid`, in every case.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AppCredentials } from '../../src/modules/apps/repository';
import type { SandboxBuyer } from '../../src/channels/sandbox';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { BARCODE_IN_FLIGHT_MS } from '../../src/modules/orders/rules';
import { walletAuthCode } from '../../sandbox/wallet-buyers';
import { startTestStack, type TestStack } from '../support/harness';
import { activityCalls } from '../support/history';
import { envelope, type Envelope } from '../support/http';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { settledIn } from '../support/settled';
import { until } from '../support/wait';
import { signedFetch } from '../support/signing';

jest.setTimeout(120_000);

// 1/20 of real time, durapay and the gateway alike: a barcode payment is followed for 3 s
// (production's 60 s); the gateway's late buyer confirms after 20 s × 1/20 = 1 s, inside it.
const TIME_SCALE = 0.05;

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
/** Every buyer code the tests sent: none may appear in a log line. */
const codesSent: string[] = [];

beforeAll(async () => {
  stack = await startTestStack({
    timeScale: TIME_SCALE,
    alipay: { timeScale: TIME_SCALE, buyerConfirmMs: 20_000 },
  });
  app = await stack.createApp(['payments', 'merchants']);
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

const gateway = () => stack.alipay!.sandbox;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function code(buyer: SandboxBuyer): string {
  const authCode = walletAuthCode('alipay', buyer);
  codesSent.push(authCode);
  return authCode;
}

function order(buyer: SandboxBuyer, overrides: Record<string, unknown> = {}) {
  return {
    merchant_order_no: `BA-${randomUUID()}`,
    channel_code: 'alipay',
    pay_method: 'barcode',
    auth_code: code(buyer),
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
  const res = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/pay/unified-order', { json: body });
  return { status: res.status, body: await envelope<Created>(res) };
}

async function create(body: Record<string, unknown>): Promise<Created> {
  const answer = await createRaw(body);
  expect({ status: answer.status, code: answer.body.code, message: answer.body.message }).toMatchObject({
    status: 200,
    code: 'success',
  });
  return answer.body.data!;
}

const tradeNoOf = async (merchantOrderNo: string) => (await pay.tradeNoOf(merchantOrderNo))!;

/**
 * The gateway's ledger of the trade: whether Alipay keeps the buyer's money (paid, not closed
 * nor given back), whether it was ever paid, how the cancel undid it, and how often it was asked.
 */
function ledger(tradeNo: string) {
  const trade = gateway().trade(tradeNo);
  const requests = gateway().barcodeRequests(tradeNo);
  return {
    tradeStatus: trade?.status ?? null,
    keepsMoney: trade?.status === 'TRADE_SUCCESS' || trade?.status === 'TRADE_FINISHED',
    wasPaid: trade?.gmt_payment !== undefined,
    cancelAction: trade?.cancel_action ?? null,
    payRequests: requests.pay,
    cancelRequests: requests.cancel,
  };
}

/**
 * Once nothing more can come of the order (the gateway's notifications delivered, the order's
 * workflow at rest, the merchant's notifications delivered or given up), what Alipay holds, what
 * the order says and what was sent.
 */
async function outcome(tradeNo: string) {
  await gateway().idle(tradeNo);
  await settledIn(stack)(tradeNo);
  const order = await pay.query(tradeNo);
  return {
    status: order.status,
    closeReason: order.close_reason,
    ...ledger(tradeNo),
    succeeded: pay.notificationsFor(tradeNo, 'payment.succeeded').length,
    closed: pay.notificationsFor(tradeNo, 'payment.closed').length,
  };
}

const whenPaid = { status: 'paid', closeReason: null, keepsMoney: true, succeeded: 1, closed: 0 };
const whenReversed = {
  status: 'closed',
  closeReason: 'reversed',
  keepsMoney: false,
  succeeded: 0,
  closed: 1,
};

describe('POST /api/v1/pay/unified-order with pay_method barcode at Alipay', () => {
  test('when the buyer pays at once, then the till is answered paid and trade.pay carried the code, the till and the shop', async () => {
    const body = order('pays');
    const created = await create(body);
    expect(created).toMatchObject({ status: 'paid', is_idempotent: false, pay_credential: {} });
    const trade = gateway().trade(created.trade_no)!;
    expect(trade).toMatchObject({
      method: 'alipay.trade.pay',
      scene: 'bar_code',
      product_code: 'FACE_TO_FACE_PAYMENT',
      total_amount: '15.00',
      subject: 'Counter sale',
      terminal_id: 'till-07',
      store_id: 'store-0001',
      notify_url: expect.stringContaining('/api/v1/notify/payment/alipay'),
      auth_code_sha256: sha256(body.auth_code),
    });
    // The gateway keeps the code's hash only.
    expect(JSON.stringify(trade)).not.toContain(body.auth_code);
    expect(await pay.query(created.trade_no)).toMatchObject({
      pay_method: 'barcode',
      channel_code: 'alipay',
      channel_trade_no: trade.trade_no,
      device_id: 'till-07',
      store_id: 'store-0001',
    });
    expect(await outcome(created.trade_no)).toMatchObject({
      ...whenPaid,
      tradeStatus: 'TRADE_SUCCESS',
      payRequests: 1,
      cancelRequests: 0,
    });
  });

  test('when the buyer confirms in the wallet a moment later, then the till is answered paying, and the order follows to paid', async () => {
    const created = await create(order('confirms_later'));
    expect(created.status).toBe('paying');
    await pay.statusIs(created.trade_no, 'paid');
    expect(await outcome(created.trade_no)).toMatchObject({
      ...whenPaid,
      payRequests: 1,
      cancelRequests: 0,
    });
  });

  test('when Alipay refuses the code, then it is 422 order_not_paid with its reason, the order is closed as refused, and asked again Alipay is not', async () => {
    for (const [buyer, subCode] of [
      ['insufficient', 'ACQ.BUYER_BALANCE_NOT_ENOUGH'],
      ['expired', 'ACQ.PAYMENT_AUTH_CODE_INVALID'],
    ] as const) {
      const body = order(buyer);
      const answer = await createRaw(body);
      expect({ status: answer.status, code: answer.body.code }).toEqual({
        status: 422,
        code: 'order_not_paid',
      });
      expect(answer.body.message).toContain(subCode);
      const tradeNo = await tradeNoOf(body.merchant_order_no);
      expect(await outcome(tradeNo)).toMatchObject({
        status: 'closed',
        closeReason: 'refused',
        tradeStatus: null,
        keepsMoney: false,
        succeeded: 0,
        closed: 1,
        payRequests: 1,
      });
      // Asked again, the till hears the refusal again; Alipay is not asked again.
      const again = await createRaw(body);
      expect({ status: again.status, code: again.body.code }).toEqual({
        status: 422,
        code: 'order_not_paid',
      });
      expect(ledger(tradeNo).payRequests).toBe(1);
    }
  });

  test('when the buyer never confirms, then the trade is cancelled when the wait ends and the order closed as reversed, never announced paid', async () => {
    const created = await create(order('never_confirms'));
    expect(created.status).toBe('paying');
    expect(await outcome(created.trade_no)).toMatchObject({
      ...whenReversed,
      tradeStatus: 'TRADE_CLOSED',
      wasPaid: false,
      cancelAction: 'close',
      cancelRequests: 1,
    });
  });

  test('when Alipay takes the money and its answer is lost, then the till gets 502 channel_timeout, and the cancel gives the money back', async () => {
    const body = order('answer_lost');
    const answer = await createRaw(body);
    expect({ status: answer.status, code: answer.body.code }).toEqual({
      status: 502,
      code: 'channel_timeout',
    });
    const tradeNo = await tradeNoOf(body.merchant_order_no);
    // The cancel had been asked of Alipay when the till was answered.
    const { events } = await stack.client.workflow
      .getHandle(orderWorkflowId(app.app_id, body.merchant_order_no))
      .fetchHistory();
    expect(activityCalls(events)).toContain('reverseBarcodePayment');
    // The payment's TRADE_SUCCESS notification reaches durapay while it is being given back: it
    // is not a payment of the order.
    // Charged once: the second trade.pay is the SDK's HTTP client sending the request again
    // when its connection was cut (urllib's socketErrorRetry), lost the same way; durapay asked once.
    expect(await outcome(tradeNo)).toMatchObject({
      ...whenReversed,
      tradeStatus: 'TRADE_CLOSED',
      wasPaid: true,
      cancelAction: 'refund',
      payRequests: 2,
      cancelRequests: 1,
    });
    expect(gateway().notifications(tradeNo).sent).toBeGreaterThan(0);
  });

  test('when Alipay answers 20000 (ACQ.SYSTEM_ERROR), then the payment is unknown: it is cancelled and the till gets 502 channel_timeout', async () => {
    const body = order('pays', { subject: 'Counter sale [sandbox:unavailable]' });
    const answer = await createRaw(body);
    expect({ status: answer.status, code: answer.body.code }).toEqual({
      status: 502,
      code: 'channel_timeout',
    });
    const tradeNo = await tradeNoOf(body.merchant_order_no);
    // Alipay had no trade to cancel: the cancel answers retry_flag N with no action. A trade.pay
    // still on its way could yet arrive, so the cancel is asked again until BARCODE_IN_FLIGHT_MS
    // (30 s, real time) has passed since the payment was asked, and only then taken.
    await until(
      'the order reversed once the payment can no longer be on its way',
      async () => ((await pay.query(tradeNo)).status === 'closed' ? true : undefined),
      BARCODE_IN_FLIGHT_MS + 30_000,
    );
    const result = await outcome(tradeNo);
    expect(result).toMatchObject({ ...whenReversed, tradeStatus: null, cancelAction: null });
    expect(result.cancelRequests).toBeGreaterThan(1);
  });

  test('when the buyer confirms just as the cancel arrives, then the cancel gives the money back and the order is closed, never announced paid', async () => {
    const created = await create(order('confirms_at_reverse'));
    expect(created.status).toBe('paying');
    expect(await outcome(created.trade_no)).toMatchObject({
      ...whenReversed,
      tradeStatus: 'TRADE_CLOSED',
      wasPaid: true,
      cancelAction: 'refund',
    });
  });

  test('when Alipay refuses to cancel a payment it holds, then the order is paid with its trade_no, never closed with the buyer charged', async () => {
    const created = await create(order('reverse_refused'));
    expect(created.status).toBe('paying');
    expect(await outcome(created.trade_no)).toMatchObject({
      ...whenPaid,
      tradeStatus: 'TRADE_SUCCESS',
      cancelAction: null,
    });
    expect((await pay.query(created.trade_no)).channel_trade_no).toBe(
      gateway().trade(created.trade_no)!.trade_no,
    );
  });

  test('when the same order is sent again with the same code, then it joins the order: one trade.pay at Alipay', async () => {
    const body = order('pays');
    const first = await create(body);
    const again = await create(body);
    expect(again).toMatchObject({ trade_no: first.trade_no, status: 'paid', is_idempotent: true });
    const pending = order('never_confirms');
    const waiting = await create(pending);
    const repeat = await create(pending);
    expect(repeat).toMatchObject({ trade_no: waiting.trade_no, status: 'paying', is_idempotent: true });
    expect(await outcome(first.trade_no)).toMatchObject({ ...whenPaid, payRequests: 1 });
    expect(await outcome(waiting.trade_no)).toMatchObject({ ...whenReversed, payRequests: 1 });
  });

  test('when the same order is sent again with another code, then it is 400 invalid_param and the other code never reaches Alipay', async () => {
    for (const buyer of ['pays', 'never_confirms'] as const) {
      const body = order(buyer);
      const first = await create(body);
      const answer = await createRaw({ ...body, auth_code: code('pays') });
      expect({ status: answer.status, code: answer.body.code, message: answer.body.message }).toEqual({
        status: 400,
        code: 'invalid_param',
        message: 'merchant_order_no already used with another auth_code',
      });
      expect(ledger(first.trade_no).payRequests).toBe(1);
      expect(gateway().trade(first.trade_no)?.auth_code_sha256).toBe(sha256(body.auth_code));
      await outcome(first.trade_no);
    }
  });

  test('when channel_code is left out, then an Alipay code (25–30) picks Alipay', async () => {
    const { channel_code: _channel, ...body } = order('pays');
    const created = await create(body);
    expect(await pay.query(created.trade_no)).toMatchObject({ channel_code: 'alipay', status: 'paid' });
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenPaid, payRequests: 1 });
  });
});

describe("the adapter's alipay.trade.pay asked again", () => {
  // Its trades are no orders of durapay's: their notifications go to an address that takes them.
  const takesNotifications = http.createServer((_req, res) => res.end('success'));
  beforeAll(() => new Promise<void>((resolve) => takesNotifications.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => takesNotifications.close(() => resolve())));

  test('when a trade number Alipay already paid is asked again, then ACQ.TRADE_HAS_SUCCESS is read by query: the same payment, or unknown for another amount', async () => {
    const barcode = stack.services.channels.get('alipay')!.barcode!;
    const { port } = takesNotifications.address() as AddressInfo;
    const ctx = { currency: 'CNY' };
    const input = {
      tradeNo: `PT${Date.now()}${randomUUID().slice(0, 8).replace(/-/g, '')}`,
      amount: 1_234,
      subject: 'Counter sale',
      authCode: code('pays'),
      callbackUrl: `http://127.0.0.1:${port}/notify`,
      profitSharing: false,
    };
    const first = await barcode.pay(ctx, input);
    expect(first).toMatchObject({ status: 'paid', amount: 1_234 });
    const again = await barcode.pay(ctx, input);
    expect(again).toEqual(first);
    await expect(barcode.pay(ctx, { ...input, amount: 1_235 })).rejects.toMatchObject({
      name: 'ChannelError',
      kind: 'invalid_response',
    });
    expect(ledger(input.tradeNo)).toMatchObject({ tradeStatus: 'TRADE_SUCCESS', payRequests: 3 });
    await gateway().idle(input.tradeNo);
    expect(gateway().notifications(input.tradeNo)).toMatchObject({ sent: 1, acknowledged: true });
  });
});

describe('merchants at Alipay', () => {
  async function merchantWith(account: Record<string, string>, fields: Record<string, unknown> = {}) {
    const merchantId = `MBA-${randomUUID().slice(0, 8)}`;
    const made = await pay.post('/api/v1/merchant', {
      merchant_id: merchantId,
      merchant_name: 'Tea House',
      ...fields,
    });
    expect(made.code).toBe('success');
    await pay.attach(merchantId, 'alipay', account);
    return merchantId;
  }

  test('when a merchant authorised the app, then trade.pay and its cancel carry its app_auth_token, and the cancel closes its trade', async () => {
    const token = gateway().mintAppAuthToken().appAuthToken;
    const merchantId = await merchantWith({ app_auth_token: token });
    const created = await create(order('never_confirms', { merchant_id: merchantId }));
    expect(created.status).toBe('paying');
    expect(gateway().trade(created.trade_no)).toMatchObject({ app_auth_token: token });
    expect(gateway().trade(created.trade_no)).not.toHaveProperty('sub_merchant');
    // A cancel without the token would not find the merchant's trade, which would stay open.
    expect(await outcome(created.trade_no)).toMatchObject({
      ...whenReversed,
      tradeStatus: 'TRADE_CLOSED',
      cancelAction: 'close',
    });
  });

  test('when a secondary merchant (smid) sells with profit sharing, then trade.pay names it in sub_merchant and freezes the funds for settle', async () => {
    const merchantId = await merchantWith(
      { smid: '2088000000000779' },
      {
        profit_sharing: {
          receivers: [{ type: 'merchant', account: '2088000000000202', name: 'Partner Tea Co', weight: 1 }],
          max_ratio: 0.3,
        },
      },
    );
    const created = await create(
      order('pays', { merchant_id: merchantId, amount: 300, profit_sharing_amount: 90 }),
    );
    expect(created.status).toBe('paid');
    expect(gateway().trade(created.trade_no)).toMatchObject({
      sub_merchant: { merchant_id: '2088000000000779' },
      extend_params: { royalty_freeze: 'true' },
    });
    expect(gateway().trade(created.trade_no)).not.toHaveProperty('app_auth_token');
    expect(await outcome(created.trade_no)).toMatchObject(whenPaid);
  });
});

describe('POST /api/v1/pay/close of an Alipay barcode order', () => {
  test('when a merchant closes an order the buyer is confirming, then its trade is cancelled at once and the order closed as reversed', async () => {
    // This buyer would confirm a second later, within the wait: only a cancel made by the close
    // itself comes before the payment.
    const created = await create(order('confirms_later'));
    expect(created.status).toBe('paying');
    const closed = await pay.post('/api/v1/pay/close', { trade_no: created.trade_no });
    expect({ status: closed.status, code: closed.code }).toEqual({ status: 200, code: 'success' });
    expect(await pay.query(created.trade_no)).toMatchObject({ status: 'closed', close_reason: 'reversed' });
    expect(ledger(created.trade_no)).toMatchObject({ tradeStatus: 'TRADE_CLOSED' });
    // Whether the buyer had confirmed by the time the cancel arrived (close or refund), nothing is kept.
    expect(await outcome(created.trade_no)).toMatchObject({ ...whenReversed, cancelRequests: 1 });
  });
});

describe("the day's Alipay statement of barcode payments", () => {
  test('when a barcode payment is kept and another is given back by its cancel, then the statement states the kept one and not the other', async () => {
    const paid = await create(order('pays'));
    const reversed = await create(order('confirms_at_reverse'));
    expect(await outcome(reversed.trade_no)).toMatchObject({ ...whenReversed, cancelAction: 'refund' });
    const statements = stack.services.channels.get('alipay')!.statements!;
    // The day of the payment, Beijing time, as the statement names its days.
    const day = gateway().trade(paid.trade_no)!.gmt_payment!.slice(0, 10);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-alipay-barcode-bill-')), 'bill');
    const got = await statements.fetch({ currency: 'CNY', channelTradeNo: null }, day, file);
    if (got.status !== 'ready') throw new Error(`the statement is ${got.status}`);
    const lines: Record<string, string[]> = { [paid.trade_no]: [], [reversed.trade_no]: [] };
    for await (const line of statements.parse(file, got)) lines[line.tradeNo]?.push(line.kind);
    expect(lines).toEqual({ [paid.trade_no]: ['payment'], [reversed.trade_no]: [] });
  });
});

describe("the buyer's code", () => {
  test('when every case above has run, then no log line holds a buyer code', () => {
    expect(codesSent.length).toBeGreaterThan(10);
    const logs = stack.logs().join('\n');
    expect(codesSent.filter((c) => logs.includes(c))).toEqual([]);
  });
});
