import { violations, type State } from '../../chaos/lib/invariants';
import type { OrderJourney } from '../../chaos/lib/shopper';

const ok = (data: Record<string, unknown>) => ({ status: 200, code: 'success', data });

function world() {
  const journeys: OrderJourney[] = [
    {
      merchantOrderNo: 'M1',
      amount: 100,
      created: ok({ trade_no: 'P1' }),
      tradeNo: 'P1',
      paid: true,
      refunds: [{ merchantRefundNo: 'MR1', amount: 30, answer: ok({ refund_no: 'R1' }) }],
    },
    {
      merchantOrderNo: 'M2',
      amount: 50,
      created: ok({ trade_no: 'P2' }),
      tradeNo: 'P2',
      paid: false,
      refunds: [],
    },
  ];
  const order = (
    trade: string,
    mon: string,
    status: string,
    amount: number,
    refunded: number,
    channel: string,
    channelRefunded: number,
  ) => ({
    trade_no: trade,
    merchant_order_no: mon,
    status,
    amount: String(amount),
    refunded_amount: String(refunded),
    expire_time: new Date(),
    channel_status: channel,
    channel_refunded: String(channelRefunded),
  });
  const state: State = {
    orders: [
      order('P1', 'M1', 'partially_refunded', 100, 30, 'paid', 30),
      order('P2', 'M2', 'closed', 50, 0, 'closed', 0),
    ],
    refunds: [
      {
        refund_no: 'R1',
        trade_no: 'P1',
        merchant_refund_no: 'MR1',
        status: 'success',
        refund_amount: '30',
        channel_status: 'success',
      },
    ],
    orphans: [],
  };
  const deliveries = [
    { id: 'n1', type: 'payment.succeeded', tradeNo: 'P1' },
    { id: 'n1', type: 'payment.succeeded', tradeNo: 'P1' }, // a repeat of the same delivery
    { id: 'n2', type: 'payment.closed', tradeNo: 'P2' },
    { id: 'n3', type: 'refund.succeeded', tradeNo: 'P1', refundNo: 'R1' },
  ];
  return { journeys, state, deliveries };
}

describe('the chaos invariants', () => {
  test('when every party agrees and each result was announced once, then there is no violation', () => {
    const { journeys, state, deliveries } = world();
    expect(violations(journeys, state, deliveries)).toEqual([]);
  });

  test.each<[string, (w: ReturnType<typeof world>) => void, RegExp]>([
    [
      'an answered create missing from the read model',
      (w) => w.state.orders.splice(1, 1),
      /M2 was answered 200 but is not in the read model/,
    ],
    ['an order still pending', (w) => (w.state.orders[1]!.status = 'pending'), /P2 is still pending/],
    [
      'the channel paid but durapay closed',
      (w) => (w.state.orders[1]!.channel_status = 'paid'),
      /P2 is closed in durapay but paid at the channel/,
    ],
    [
      'a payment the buyer made and durapay lost',
      (w) => (w.journeys[1]!.paid = true),
      /P2 was paid by the buyer but is closed/,
    ],
    [
      'more refunded than the order',
      (w) => (w.state.orders[0]!.refunded_amount = '130'),
      /refunded 130 of 100/,
    ],
    [
      'a refund total the channel does not have',
      (w) => (w.state.orders[0]!.channel_refunded = '60'),
      /shows 30 refunded, the channel 60/,
    ],
    [
      'a payment announced twice',
      (w) => w.deliveries.push({ id: 'n9', type: 'payment.succeeded', tradeNo: 'P1' }),
      /P1 was announced paid 2 times/,
    ],
    ['a close never announced', (w) => w.deliveries.splice(2, 1), /P2 was announced closed 0 times/],
    [
      'a refund still processing',
      (w) => (w.state.refunds[0]!.status = 'processing'),
      /R1 is still processing/,
    ],
    [
      'a refund durapay and the channel disagree on',
      (w) => (w.state.refunds[0]!.channel_status = 'failed'),
      /R1 is success in durapay but failed at the channel/,
    ],
    [
      'one merchant_refund_no refunded twice',
      (w) => w.state.refunds.push({ ...w.state.refunds[0]!, refund_no: 'R2' }),
      /merchant_refund_no MR1 made 2 refunds/,
    ],
    [
      'a paid channel order durapay does not know',
      (w) => w.state.orphans.push({ trade_no: 'P9', status: 'paid' }),
      /P9 was paid but is unknown to durapay/,
    ],
  ])('when there is %s, then it is a violation', (_what, breakIt, problem) => {
    const w = world();
    breakIt(w);
    expect(violations(w.journeys, w.state, w.deliveries).join('\n')).toMatch(problem);
  });
});
