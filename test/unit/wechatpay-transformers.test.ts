import { ChannelError } from '../../src/channels/errors';
import {
  paymentStateOf,
  parseTransaction,
  receiverType,
  refundStateOf,
  sharingStateOf,
  toWechatTime,
} from '../../src/channels/wechatpay/transformers';

describe('WeChat Pay transformers', () => {
  test('when a time is sent, then it is RFC 3339 in China Standard Time', () => {
    expect(toWechatTime(new Date('2026-11-23T15:04:05.678Z'))).toBe('2026-11-23T23:04:05+08:00');
  });

  test.each([
    ['merchant', 'MERCHANT_ID'],
    ['Personal', 'PERSONAL_OPENID'],
    ['personal_sub', 'PERSONAL_SUB_OPENID'],
  ])('when a receiver type is %s, then WeChat Pay is sent %s', (type, wire) => {
    expect(receiverType(type)).toBe(wire);
  });

  test.each(['constructor', 'toString', '__proto__', 'bank'])(
    'when a receiver type is %s, then it is refused, not taken from what every object has',
    (type) => {
      expect(() => receiverType(type)).toThrow(ChannelError);
      expect(() => receiverType(type)).toThrow(/is not one WeChat Pay shares to/);
    },
  );

  const transaction = (trade_state: string, extra: Record<string, unknown> = {}) =>
    parseTransaction({ sp_mchid: '1', out_trade_no: 'P1', trade_state, amount: { total: 100 }, ...extra });

  test('when trade states are read, then SUCCESS and REFUND are paid, the waiting ones pending, CLOSED and REVOKED closed', () => {
    const paid = { transaction_id: '42', success_time: '2026-11-23T10:00:00+08:00' };
    expect(paymentStateOf(transaction('SUCCESS', paid))).toMatchObject({
      status: 'paid',
      channelTradeNo: '42',
    });
    expect(paymentStateOf(transaction('REFUND', paid))).toMatchObject({ status: 'paid', amount: 100 });
    for (const s of ['NOTPAY', 'USERPAYING', 'PAYERROR'])
      expect(paymentStateOf(transaction(s))).toEqual({ status: 'pending' });
    for (const s of ['CLOSED', 'REVOKED'])
      expect(paymentStateOf(transaction(s))).toEqual({ status: 'closed' });
    expect(() => transaction('SUCCESS')).toThrow(/without transaction_id/);
    expect(() => transaction('LOST')).toThrow(ChannelError);
  });

  test('when refund states are read, then PROCESSING goes on, SUCCESS succeeds, CLOSED and ABNORMAL fail with a reason', () => {
    const r = (status: string) => refundStateOf({ refund_id: '50', out_refund_no: 'R1', status });
    expect(r('PROCESSING')).toEqual({ status: 'processing', channelRefundNo: '50' });
    expect(r('SUCCESS')).toMatchObject({ status: 'success', channelRefundNo: '50' });
    expect(r('CLOSED')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^CLOSED/) });
    expect(r('ABNORMAL')).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^ABNORMAL: .*merchant platform/),
    });
  });

  test('when a sharing order is read, then FINISHED with a closed receiver is failed and names it', () => {
    expect(sharingStateOf({ state: 'PROCESSING' })).toEqual({ status: 'processing' });
    expect(sharingStateOf({ state: 'FINISHED', receivers: [{ account: 'a', result: 'SUCCESS' }] })).toEqual({
      status: 'finished',
    });
    expect(
      sharingStateOf({
        state: 'FINISHED',
        receivers: [
          { account: 'a', result: 'SUCCESS' },
          { account: 'b', result: 'CLOSED', fail_reason: 'ACCOUNT_ABNORMAL' },
        ],
      }),
    ).toEqual({ status: 'failed', reason: 'WeChat Pay closed the share of b (ACCOUNT_ABNORMAL)' });
  });
});
