import { ChannelError } from '../../src/channels/errors';
import {
  eventOf,
  paymentStateOf,
  parseTransaction,
  receiverType,
  refundStateOf,
  returnStateOf,
  sharingStateOf,
  toWireAbnormalRefund,
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

  test('when refund states are read, then PROCESSING goes on, SUCCESS succeeds, CLOSED fails and ABNORMAL is abnormal, each with a reason', () => {
    const r = (status: string) => refundStateOf({ refund_id: '50', out_refund_no: 'R1', status });
    expect(r('PROCESSING')).toEqual({ status: 'processing', channelRefundNo: '50' });
    expect(r('SUCCESS')).toMatchObject({ status: 'success', channelRefundNo: '50' });
    expect(r('CLOSED')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^CLOSED/) });
    expect(r('ABNORMAL')).toEqual({
      status: 'abnormal',
      channelRefundNo: '50',
      reason: expect.stringMatching(/^ABNORMAL: .*bank card/),
    });
  });

  const notification = (eventType: string) => ({
    id: 'EV-1',
    event_type: eventType,
    resource: { algorithm: 'AEAD_AES_256_GCM', ciphertext: '', nonce: '' },
  });
  const refundNotice = (refundStatus: string) => ({
    sp_mchid: '1900000100',
    sub_mchid: '1900000109',
    out_trade_no: 'P1',
    out_refund_no: 'R1',
    refund_id: '50',
    refund_status: refundStatus,
    amount: { refund: 100 },
  });

  test.each([
    ['REFUND.SUCCESS', 'SUCCESS', 'success'],
    ['REFUND.CLOSED', 'CLOSED', 'failed'],
    ['REFUND.ABNORMAL', 'ABNORMAL', 'abnormal'],
  ])('when a %s callback is read, then its event is %s → %s', (eventType, refundStatus, status) => {
    const { event } = eventOf(notification(eventType), refundNotice(refundStatus));
    expect(event).toMatchObject({
      kind: 'refund',
      refundNo: 'R1',
      status,
      channelRefundNo: '50',
      amount: 100,
    });
    if (status === 'abnormal') expect(event).toMatchObject({ reason: expect.stringMatching(/^ABNORMAL/) });
  });

  test('when a refund callback’s event type and refund_status disagree, then it is not taken', () => {
    expect(() => eventOf(notification('REFUND.SUCCESS'), refundNotice('ABNORMAL'))).toThrow(
      /REFUND.SUCCESS with refund_status ABNORMAL/,
    );
  });

  test('when return orders are read, then PROCESSING goes on, SUCCESS names return_id, FAILED names its fail_reason', () => {
    const r = (result: string, extra: Record<string, unknown> = {}) =>
      returnStateOf({ out_return_no: 'B1', result, ...extra });
    expect(r('PROCESSING')).toEqual({ status: 'processing' });
    expect(r('SUCCESS', { return_id: '3008450740201411110007820472' })).toEqual({
      status: 'success',
      channelReturnNo: '3008450740201411110007820472',
    });
    expect(r('FAILED', { fail_reason: 'ACCOUNT_ABNORMAL' })).toEqual({
      status: 'failed',
      reason: 'FAILED: ACCOUNT_ABNORMAL',
    });
    expect(() => r('LOST')).toThrow(ChannelError);
  });

  test('when an abnormal refund goes to a user’s card, then bank_account and real_name travel sealed, and a card without bank or name is refused', () => {
    const seal = (plain: string) => `sealed(${plain})`;
    const input = { tradeNo: 'P1', refundNo: 'R1', channelRefundNo: '50', method: 'user_bank_card' as const };
    expect(
      toWireAbnormalRefund(
        '1900000109',
        { ...input, bankType: 'ICBC_DEBIT', bankAccount: '6222', realName: '张三' },
        seal,
      ),
    ).toEqual({
      sub_mchid: '1900000109',
      out_refund_no: 'R1',
      type: 'USER_BANK_CARD',
      bank_type: 'ICBC_DEBIT',
      bank_account: 'sealed(6222)',
      real_name: 'sealed(张三)',
    });
    expect(() => toWireAbnormalRefund('1900000109', { ...input, bankType: 'ICBC_DEBIT' }, seal)).toThrow(
      /bank_type, bank_account and real_name/,
    );
    expect(() =>
      toWireAbnormalRefund(
        '1900000109',
        { ...input, bankType: 'HSBC', bankAccount: '1', realName: 'x' },
        seal,
      ),
    ).toThrow(/bank_type HSBC is not one/);
    expect(
      toWireAbnormalRefund(
        '1900000109',
        { ...input, method: 'merchant_bank_card', bankAccount: '6222' },
        seal,
      ),
    ).toEqual({ sub_mchid: '1900000109', out_refund_no: 'R1', type: 'MERCHANT_BANK_CARD' });
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
