/**
 * A channel's callback names its object by whichever number its event carries (SPEC §4; the
 * reference union of src/channels/ports.ts): durapay's trade number, the channel's own trade
 * number, or durapay's refund number. The orders and refunds services find the order each way,
 * against a real read model; what they refuse names what was asked for.
 */
import type { ChannelEvent } from '../../src/channels/ports';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { OrderService } from '../../src/modules/orders';
import { RefundService } from '../../src/modules/refunds';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;
let orders: OrderService;
let refunds: RefundService;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 300 });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
  orders = new OrderService(stack.services);
  refunds = new RefundService(stack.services, orders);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

/** A paid sandbox order and the channel's trade number the read model has for it. */
async function paidOrder(): Promise<{ tradeNo: string; channelTradeNo: string }> {
  const created = await pay.paidOrder();
  const order = await orders.repository.findOrderByTradeNo(created.trade_no);
  expect(order?.channelTradeNo).toEqual(expect.any(String));
  return { tradeNo: created.trade_no, channelTradeNo: order!.channelTradeNo! };
}

const paymentEvent = (channelTradeNo: string): Extract<ChannelEvent, { kind: 'payment' }> => ({
  kind: 'payment',
  eventId: 'E-1',
  tradeNo: '',
  status: 'paid',
  channelTradeNo,
  amount: 100,
  currency: 'CNY',
  paidAt: null,
});

test("when a callback names its order by the channel's trade number, then the order is that one", async () => {
  const { tradeNo, channelTradeNo } = await paidOrder();
  const accepted = await orders.acceptCallback(
    'sandbox',
    { kind: 'channel_trade_no', channelTradeNo },
    paymentEvent(channelTradeNo),
    {},
  );
  expect(accepted.ok && accepted.order.tradeNo).toBe(tradeNo);
});

test("when no order of the channel has the channel's trade number, then unknown_order naming it", async () => {
  const { channelTradeNo } = await paidOrder();
  const unknown = await orders.acceptCallback(
    'sandbox',
    { kind: 'channel_trade_no', channelTradeNo: `${channelTradeNo}-X` },
    paymentEvent(`${channelTradeNo}-X`),
    {},
  );
  expect(unknown).toEqual({
    ok: false,
    refusal: { outcome: 'unknown_order', message: `no order with sandbox trade number ${channelTradeNo}-X` },
  });
  // Another channel's number for the same payment names no order of this one.
  const elsewhere = await orders.acceptCallback(
    'alipay',
    { kind: 'channel_trade_no', channelTradeNo },
    paymentEvent(channelTradeNo),
    {},
  );
  expect(elsewhere.ok ? 'accepted' : elsewhere.refusal.outcome).toBe('unknown_order');
});

test("when a refund callback names only durapay's refund number, then its order is the refund's", async () => {
  const { tradeNo } = await paidOrder();
  const refund = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
    trade_no: tradeNo,
    refund_amount: 40,
  });
  expect(refund.code).toBe('success');
  const refundNo = refund.data!.refund_no;
  expect(await refunds.orderOfCallback({ eventId: 'E-2', subject: { kind: 'refund_no', refundNo } })).toEqual(
    {
      ok: true,
      subject: { kind: 'trade_no', tradeNo },
      refundNo,
    },
  );
  expect(
    await refunds.orderOfCallback({ eventId: 'E-3', subject: { kind: 'refund_no', refundNo: 'R-none' } }),
  ).toEqual({ ok: false, refusal: { outcome: 'unknown_refund', message: 'no refund R-none' } });
  // A reference by trade number passes through as the channel gave it.
  expect(
    await refunds.orderOfCallback({ eventId: 'E-4', subject: { kind: 'trade_no', tradeNo }, refundNo }),
  ).toEqual({ ok: true, subject: { kind: 'trade_no', tradeNo }, refundNo });
});
