/**
 * The orders' rules (src/modules/orders/rules.ts), which the orders service and the order
 * workflow both apply: a create's repeat, channel and sharing checks (SPEC §3.1), a refund's
 * (SPEC §3.5), a callback's acceptance (SPEC §4), and the share's split (SPEC §3.7).
 */
import {
  callbackEventRefusal,
  callbackOrderRefusal,
  channelRefusal,
  merchantAccountRefusal,
  refundRefusal,
  repeatCreateRefusal,
  sharingAmountRefusal,
  sharingRefusal,
  type CreateIdentity,
  type OrderStatus,
} from '../../src/modules/orders/rules';
import { splitByWeight } from '../../src/modules/orders/refund-book';

const identity: CreateIdentity = {
  amount: 100,
  payMethod: 'qr_code',
  channelCode: 'sandbox',
  merchantId: null,
  profitSharingAmount: 0,
};

describe('repeatCreateRefusal', () => {
  test('when a pending order is asked for again with the same parameters, then it is answered as created', () => {
    expect(repeatCreateRefusal({ identity, status: 'pending' }, { ...identity })).toBeNull();
  });

  test.each([
    ['amount', { amount: 101 }],
    ['pay method', { payMethod: 'h5' }],
    ['channel', { channelCode: 'other' }],
    ['merchant', { merchantId: 'm1' }],
    ['profit-sharing amount', { profitSharingAmount: 1 }],
  ])('when a repeat changes its %s, then invalid_param', (_what, change) => {
    expect(repeatCreateRefusal({ identity, status: 'pending' }, { ...identity, ...change })).toEqual({
      code: 'invalid_param',
      message: 'merchant_order_no already used with different parameters',
    });
  });

  test.each<[OrderStatus, string]>([
    ['paid', 'order_already_paid'],
    ['partially_refunded', 'order_already_paid'],
    ['refunded', 'order_already_paid'],
    ['closed', 'order_closed'],
  ])('when the order repeated is %s, then %s', (status, code) => {
    expect(repeatCreateRefusal({ identity, status }, { ...identity })?.code).toBe(code);
  });

  test('when a repeat both changes its parameters and finds the order ended, then the change is what it hears', () => {
    expect(repeatCreateRefusal({ identity, status: 'paid' }, { ...identity, amount: 1 })?.code).toBe(
      'invalid_param',
    );
  });
});

describe('refundRefusal', () => {
  test.each<[OrderStatus, string | null]>([
    ['pending', 'order_not_paid'],
    ['closed', 'order_closed'],
    ['refunded', 'refund_amount_exceed'],
    ['paid', null],
    ['partially_refunded', null],
  ])('when the order is %s, then a refund is refused with %s', (status, code) => {
    expect(refundRefusal(status)?.code ?? null).toBe(code);
  });
});

describe('splitByWeight', () => {
  test('when weights divide the amount evenly, then each receiver gets its part', () => {
    expect(splitByWeight(100, [{ weight: 3 }, { weight: 1 }]).map((r) => r.amount)).toEqual([75, 25]);
  });

  test('when weights leave a remainder, then it all goes to the first receiver and nothing is lost', () => {
    const shares = splitByWeight(101, [{ weight: 1 }, { weight: 1 }, { weight: 1 }]);
    expect(shares.map((r) => r.amount)).toEqual([35, 33, 33]);
    expect(shares.reduce((s, r) => s + r.amount, 0)).toBe(101);
  });

  test('when receivers are split, then each keeps its own fields beside its amount', () => {
    expect(splitByWeight(10, [{ weight: 1, account: 'a' }])).toEqual([
      { weight: 1, account: 'a', amount: 10 },
    ]);
  });

  test('when there are no receivers, then there is nothing to split', () => {
    expect(splitByWeight(10, [])).toEqual([]);
  });
});

describe('channelRefusal', () => {
  const limits = { payMethods: ['qr_code', 'h5'], maxAmount: 1_000 };

  test('when the channel is not one durapay has, then channel_not_support', () => {
    expect(channelRefusal('nowhere', undefined, { payMethod: 'qr_code', amount: 1 })).toEqual({
      code: 'channel_not_support',
      message: 'channel nowhere is not supported',
    });
  });

  test('when the channel does not offer the pay method, then invalid_pay_method', () => {
    expect(channelRefusal('sandbox', limits, { payMethod: 'app', amount: 1 })).toEqual({
      code: 'invalid_pay_method',
      message: 'pay_method app is not supported by channel sandbox',
    });
  });

  test("when the amount is over the channel's limit, then invalid_amount", () => {
    expect(channelRefusal('sandbox', limits, { payMethod: 'h5', amount: 1_001 })).toEqual({
      code: 'invalid_amount',
      message: "amount exceeds the channel's limit of 1000",
    });
  });

  test("when the amount is the channel's limit and the pay method its own, then nothing is refused", () => {
    expect(channelRefusal('sandbox', limits, { payMethod: 'h5', amount: 1_000 })).toBeNull();
  });

  test('when both the pay method and the amount are wrong, then the pay method is what it hears', () => {
    expect(channelRefusal('sandbox', limits, { payMethod: 'app', amount: 5_000 })?.code).toBe(
      'invalid_pay_method',
    );
  });
});

describe('sharingAmountRefusal', () => {
  test('when the share is more than the amount, then sharing_amount_exceed', () => {
    expect(sharingAmountRefusal(101, 100)).toEqual({
      code: 'sharing_amount_exceed',
      message: 'profit_sharing_amount exceeds amount',
    });
  });

  test('when the share is the whole amount, then nothing is refused', () => {
    expect(sharingAmountRefusal(100, 100)).toBeNull();
  });
});

describe('sharingRefusal', () => {
  const asked = {
    sharing: 30,
    amount: 100,
    receivers: 1,
    maxRatio: 0.3,
    channelCode: 'sandbox',
    channelShares: true,
  };

  test('when nothing is shared, then nothing is refused, whatever the merchant and channel', () => {
    expect(sharingRefusal({ ...asked, sharing: 0, receivers: 0, channelShares: false })).toBeNull();
  });

  test('when a share has no receivers, then sharing_not_config', () => {
    expect(sharingRefusal({ ...asked, receivers: 0 })).toEqual({
      code: 'sharing_not_config',
      message: 'profit sharing is not configured: the order needs a merchant with receivers',
    });
  });

  test("when the share is over the merchant's max_ratio of the amount, then sharing_fee_exceed", () => {
    expect(sharingRefusal({ ...asked, sharing: 31 })).toEqual({
      code: 'sharing_fee_exceed',
      message: 'profit_sharing_amount exceeds 30 (max_ratio 0.3 of amount)',
    });
  });

  test('when the ratio does not give a whole amount, then the limit is rounded down', () => {
    expect(sharingRefusal({ ...asked, amount: 99, sharing: 30 })?.code).toBe('sharing_fee_exceed');
    expect(sharingRefusal({ ...asked, amount: 99, sharing: 29 })).toBeNull();
  });

  test('when the channel does not share, then channel_not_support', () => {
    expect(sharingRefusal({ ...asked, channelShares: false })).toEqual({
      code: 'channel_not_support',
      message: 'channel sandbox does not support profit sharing',
    });
  });

  test('when a share has receivers, stays within the ratio and the channel shares, then nothing is refused', () => {
    expect(sharingRefusal(asked)).toBeNull();
  });

  test('when everything is wrong at once, then the missing receivers are what it hears', () => {
    expect(sharingRefusal({ ...asked, receivers: 0, sharing: 99, channelShares: false })?.code).toBe(
      'sharing_not_config',
    );
  });
});

describe('merchantAccountRefusal', () => {
  test('when the merchant has no account at the channel, then channel_create_fail naming the channel', () => {
    expect(merchantAccountRefusal('m1', 'alipay', null)).toEqual({
      code: 'channel_create_fail',
      message: 'merchant m1 has no account at channel alipay',
    });
  });

  test('when its account there has expired, then channel_create_fail saying so', () => {
    expect(merchantAccountRefusal('m1', 'alipay', { status: 'expired' })).toEqual({
      code: 'channel_create_fail',
      message: "merchant m1's account at channel alipay is expired: authorise it again",
    });
  });

  test('when its account there is active, then nothing is refused', () => {
    expect(merchantAccountRefusal('m1', 'alipay', { status: 'active' })).toBeNull();
  });
});

describe('callbackOrderRefusal', () => {
  test('when no order has the trade number, then unknown_order', () => {
    expect(callbackOrderRefusal(null, { named: 'P1', channelCode: 'sandbox' })).toEqual({
      outcome: 'unknown_order',
      message: 'no order P1',
    });
  });

  test('when the order is at another channel, then channel_mismatch', () => {
    expect(
      callbackOrderRefusal({ tradeNo: 'P1', channelCode: 'alipay' }, { named: 'P1', channelCode: 'sandbox' }),
    ).toEqual({ outcome: 'channel_mismatch', message: 'order P1 is not a sandbox order' });
  });

  test("when the order is the channel's, then nothing is refused", () => {
    expect(
      callbackOrderRefusal(
        { tradeNo: 'P1', channelCode: 'sandbox' },
        { named: 'P1', channelCode: 'sandbox' },
      ),
    ).toBeNull();
  });
});

describe('callbackEventRefusal', () => {
  const order = { amount: '100', currency: 'CNY', subMerchantNo: '1900000001' };
  const payment = { kind: 'payment' as const, amount: 100, currency: 'CNY' };
  const refund = { kind: 'refund' as const, amount: 40 };

  test('when a payment matches its order, then nothing is refused', () => {
    expect(callbackEventRefusal(order, payment)).toBeNull();
    expect(callbackEventRefusal(order, { ...payment, subMerchantNo: '1900000001' })).toBeNull();
  });

  test("when the channel names another sub-merchant than the order's, then merchant_mismatch", () => {
    expect(callbackEventRefusal(order, { ...payment, subMerchantNo: '1900000002' })).toEqual({
      outcome: 'merchant_mismatch',
      message: "sub-merchant 1900000002 is not the order's merchant",
    });
    expect(callbackEventRefusal(order, { ...refund, subMerchantNo: '1900000002' })?.outcome).toBe(
      'merchant_mismatch',
    );
  });

  test('when the channel names a sub-merchant for an order that has none, then merchant_mismatch', () => {
    expect(
      callbackEventRefusal({ ...order, subMerchantNo: null }, { ...payment, subMerchantNo: '1900000001' })
        ?.outcome,
    ).toBe('merchant_mismatch');
  });

  test("when a payment's amount is not the order's, then amount_mismatch", () => {
    expect(callbackEventRefusal(order, { ...payment, amount: 99 })).toEqual({
      outcome: 'amount_mismatch',
      message: 'amount 99 does not match the order',
    });
  });

  test("when a payment's currency is not the order's, then currency_mismatch", () => {
    expect(callbackEventRefusal(order, { ...payment, currency: 'USD' })).toEqual({
      outcome: 'currency_mismatch',
      message: 'currency USD does not match the order',
    });
  });

  test("when a refund's amount differs from the order's, then the order does not refuse it (its refund decides)", () => {
    expect(callbackEventRefusal(order, refund)).toBeNull();
  });

  test('when an amount is not a number, then amount_mismatch, for a refund too', () => {
    expect(callbackEventRefusal(order, { ...refund, amount: NaN })?.outcome).toBe('amount_mismatch');
  });

  test('when the sub-merchant, amount and currency are all wrong, then the sub-merchant is what it hears', () => {
    expect(
      callbackEventRefusal(order, { kind: 'payment', amount: 1, currency: 'USD', subMerchantNo: 'x' })
        ?.outcome,
    ).toBe('merchant_mismatch');
    expect(callbackEventRefusal(order, { kind: 'payment', amount: 1, currency: 'USD' })?.outcome).toBe(
      'amount_mismatch',
    );
  });
});
