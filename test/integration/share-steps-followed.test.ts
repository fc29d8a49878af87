/**
 * A share, an unfreeze or a return the channel settles later than the order waits for it
 * (WeChat Pay answers PROCESSING) is followed by the order on the refund backoff until the
 * channel says how it ended, and the order's money is settled then (SPEC §3.7). The offline
 * WeChat Pay keeps each of them PROCESSING for 10 s here, longer than the order's own window.
 * Each group has a stack of its own.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { startTestStack, type TestStack } from '../support/harness';
import { activityCalls } from '../support/history';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(300_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
const SUB_MCHID = '1900000109';
/** How long the offline WeChat Pay keeps what it settles late PROCESSING. */
const LATE_MS = 10_000;

/** A stack at 1/100 of real time: the share is due 3 s after payment, a refund asks for a
 * return for 6 s (10 minutes, scaled) and the share's own activity gives up within about 4 s. */
function stackWhereWechatpaySettles(after: { shares: number; returns: number }) {
  beforeAll(async () => {
    stack = await startTestStack({
      timeScale: 0.01,
      profitShareDelayMs: 300_000,
      wechatpay: { timeScale: 1, refundDelayMs: after.shares, returnDelayMs: after.returns },
    });
    app = await stack.createApp(['payments', 'merchants']);
    receiver = await new Receiver().answer(200).start();
    pay = paymentsClient(stack, app, receiver);
  });
  afterAll(async () => {
    await receiver?.stop();
    await stack?.stop();
  });
}

/** A WeChat Pay merchant sharing with one merchant receiver, which WeChat Pay can take shares back from. */
async function sharingMerchant(): Promise<string> {
  const id = `MWXF-${randomUUID().slice(0, 8)}`;
  const created = await pay.post('/api/v1/merchant', {
    merchant_id: id,
    merchant_name: 'Tea House Group',
    profit_sharing: {
      receivers: [{ type: 'merchant', account: '1900000300', name: 'Partner Tea Co', weight: 1 }],
      max_ratio: 1,
    },
  });
  expect(created.code).toBe('success');
  await pay.attach(id, 'wechatpay', { sub_mchid: SUB_MCHID });
  return id;
}

/** A shared order of 100, paid at the offline WeChat Pay's checkout. */
async function paidSharedOrder(share: number) {
  const body = pay.orderBody({
    channel_code: 'wechatpay',
    merchant_id: await sharingMerchant(),
    amount: 100,
    profit_sharing_amount: share,
    expire_minutes: 1440,
  });
  const created = await pay.post<{ trade_no: string; pay_credential: { code_url: string } }>(
    '/api/v1/pay/unified-order',
    body,
  );
  expect(created.code).toBe('success');
  const res = await fetch(created.data!.pay_credential.code_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  expect(res.status).toBe(200);
  await pay.statusIs(created.data!.trade_no, 'paid');
  return { tradeNo: created.data!.trade_no, merchantOrderNo: body.merchant_order_no as string };
}

const steps = (tradeNo: string) =>
  stack.database.db.sequelize.query<{ kind: string; status: string; amount: string }>(
    'SELECT kind, status, amount FROM profit_share_steps WHERE trade_no = :t ORDER BY created_at',
    { replacements: { t: tradeNo }, type: QueryTypes.SELECT },
  );

/** The order's activities, to tell the order's own follow-up from the share's own attempts. */
async function followedByTheOrder(merchantOrderNo: string): Promise<number> {
  const history = await stack.client.workflow
    .getHandle(orderWorkflowId(app.app_id, merchantOrderNo))
    .fetchHistory();
  return activityCalls(history.events).filter((a) => a === 'queryShareStep').length;
}

const channelTradeNo = async (tradeNo: string) => String((await pay.query(tradeNo)).channel_trade_no);

describe('a share and an unfreeze WeChat Pay settles late', () => {
  stackWhereWechatpaySettles({ shares: LATE_MS, returns: LATE_MS });

  test('when WeChat Pay is still sharing after the share stopped asking, then the order follows it and records it finished', async () => {
    const order = await paidSharedOrder(40);
    const finished = await until(
      'the share finished',
      async () => {
        const q = await pay.query(order.tradeNo);
        return q.profit_sharing_status === 'finished' ? q : undefined;
      },
      60_000,
    );
    expect(finished).toMatchObject({ profit_shared_amount: 40, profit_returned_amount: 0 });
    expect(await steps(order.tradeNo)).toEqual([{ kind: 'share', status: 'success', amount: '40' }]);
    expect(await followedByTheOrder(order.merchantOrderNo)).toBeGreaterThan(0);
    expect(stack.wechatpay!.sandbox.sharing(await channelTradeNo(order.tradeNo))!.orders).toHaveLength(1);
  });

  test('when an order refunded in full before its share is unfrozen and WeChat Pay finishes the unfreeze later, then the order follows it to the end', async () => {
    const order = await paidSharedOrder(40);
    const refund = await pay.post('/api/v1/pay/refund', { trade_no: order.tradeNo, refund_amount: 100 });
    expect(refund.code).toBe('success');
    await until(
      'the unfreeze recorded finished',
      async () => {
        const [step] = await steps(order.tradeNo);
        return step?.kind === 'unfreeze' && step.status === 'success' ? true : undefined;
      },
      60_000,
    );
    expect((await pay.query(order.tradeNo)).profit_sharing_status).toBe('cancelled');
    expect(await followedByTheOrder(order.merchantOrderNo)).toBeGreaterThan(0);
    const unfreezes = stack.wechatpay!.sandbox.unfreezes(await channelTradeNo(order.tradeNo));
    expect(unfreezes.map((u) => u.state)).toEqual(['FINISHED']);
  });
});

describe('a return WeChat Pay settles late, the share made at once', () => {
  // The order's loop sleeps until something wakes it: the return is added to what it follows by
  // the refund's handler meanwhile.
  stackWhereWechatpaySettles({ shares: 200, returns: LATE_MS });

  test('when a return gets no final answer while its refund waits, then the refund is refused, the part is followed, and once back it is refunded without asking the receiver again', async () => {
    const order = await paidSharedOrder(40);
    await until(
      'the share finished',
      async () => ((await pay.query(order.tradeNo)).profit_sharing_status === 'finished' ? true : undefined),
      60_000,
    );
    // The return this refund needs stays PROCESSING longer than the refund asks for it.
    const body = {
      trade_no: order.tradeNo,
      refund_amount: 100,
      reason: '[sandbox:return-processing]',
      merchant_refund_no: `MR-${randomUUID()}`,
    };
    const pending = pay.post('/api/v1/pay/refund', body);
    // The same request again while the order still decides it gets the same decision, not the
    // row's `processing` of a refund that will be refused.
    await until('the refund recorded', async () =>
      (await pay.count('SELECT count(*) AS n FROM refunds WHERE merchant_refund_no = :m', {
        m: body.merchant_refund_no,
      })) === 1
        ? true
        : undefined,
    );
    const again = await pay.post('/api/v1/pay/refund', body);
    const first = await pending;
    expect({ status: first.status, code: first.code }).toEqual({ status: 422, code: 'refund_amount_exceed' });
    expect({ status: again.status, code: again.code }).toEqual({ status: 422, code: 'refund_amount_exceed' });
    // Meanwhile the part counts as the receiver's: only the unshared 60 can be refunded.
    expect(
      await pay.post('/api/v1/pay/refund', { trade_no: order.tradeNo, refund_amount: 61 }),
    ).toMatchObject({
      status: 422,
      code: 'refund_amount_exceed',
    });
    const returned = await until(
      'the part came back',
      async () => {
        const q = await pay.query(order.tradeNo);
        return q.profit_sharing_status === 'returned' ? q : undefined;
      },
      60_000,
    );
    expect(returned).toMatchObject({ profit_shared_amount: 40, profit_returned_amount: 40 });
    expect(await followedByTheOrder(order.merchantOrderNo)).toBeGreaterThan(0);

    const second = await pay.post('/api/v1/pay/refund', { trade_no: order.tradeNo, refund_amount: 100 });
    expect({ status: second.status, code: second.code }).toEqual({ status: 200, code: 'success' });
    await until(
      'refunded',
      async () => ((await pay.query(order.tradeNo)).status === 'refunded' ? true : undefined),
      60_000,
    );
    // At the channel: one return, of 40, and 100 refunded for 100 paid.
    const returns = stack.wechatpay!.sandbox.returns(await channelTradeNo(order.tradeNo));
    expect(returns.map((r) => ({ amount: r.amount, result: r.result }))).toEqual([
      { amount: 40, result: 'SUCCESS' },
    ]);
  });
});
