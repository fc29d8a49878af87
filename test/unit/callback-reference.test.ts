/**
 * How a channel's callback names durapay's objects (src/channels/ports.ts): an event that echoes
 * durapay's numbers is about its order by trade number, and a refund event also names its refund;
 * the sandbox's reply for a callback naming nothing durapay has is its failure reply.
 */
import { referenceOf, type ChannelEvent } from '../../src/channels/ports';
import { SandboxChannel } from '../../src/channels/sandbox';

const paid: ChannelEvent = {
  kind: 'payment',
  eventId: 'E1',
  tradeNo: 'P1',
  status: 'paid',
  channelTradeNo: 'C1',
  amount: 100,
  currency: 'CNY',
  paidAt: null,
};

test("when a payment event echoes durapay's trade number, then it is about that order and no refund", () => {
  expect(referenceOf(paid)).toEqual({ eventId: 'E1', subject: { kind: 'trade_no', tradeNo: 'P1' } });
});

test('when a refund event echoes both numbers, then it is about its order by trade number and names its refund', () => {
  const refund: ChannelEvent = {
    kind: 'refund',
    eventId: 'E2',
    tradeNo: 'P1',
    refundNo: 'R1',
    status: 'success',
    channelRefundNo: null,
    amount: 40,
    refundedAt: null,
  };
  expect(referenceOf(refund)).toEqual({
    eventId: 'E2',
    subject: { kind: 'trade_no', tradeNo: 'P1' },
    refundNo: 'R1',
  });
});

test("when a sandbox callback names nothing durapay has, then the sandbox hears 'fail' as for any failure", () => {
  const channel = new SandboxChannel({
    baseUrl: 'http://127.0.0.1:1/sandbox',
    secret: 'a-secret-of-sixteen',
    timeoutMs: 1_000,
  });
  expect(channel.callbacks.reply({ ok: false, reason: 'no order P1', unknown: true })).toEqual({
    status: 200,
    contentType: 'text/plain',
    body: 'fail',
  });
});
