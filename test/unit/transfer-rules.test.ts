/**
 * The pure rules of transfers (SPEC §11): a repeat is the same transfer only when every field
 * matches, what a channel refuses before anything is recorded, when a transfer may be cancelled,
 * which channel states are news, and which callbacks may reach a transfer.
 */
import fc from 'fast-check';
import {
  cancelRefusal,
  maskAccount,
  sameTransfer,
  stepChanges,
  transferCallbackRefusal,
  transferRefusal,
  type TransferIdentity,
} from '../../src/modules/transfers/rules';

const identity: TransferIdentity = {
  channelCode: 'wechatpay',
  merchantId: 'M1',
  amount: 100,
  payee: { type: 'openid', account: 'o-1', name: null },
  remark: 'Cashback',
  scene: { id: '1000', reportInfos: [{ type: '活动名称', content: '新会员有礼' }] },
  notifyUrl: 'https://merchant.example/hooks',
};

describe('the same transfer', () => {
  test('when every field matches, whatever the scene keys’ order, then it is the same transfer', () => {
    expect(
      sameTransfer(identity, {
        ...identity,
        scene: { reportInfos: [{ content: '新会员有礼', type: '活动名称' }], id: '1000' },
      }),
    ).toBe(true);
  });

  test.each([
    ['channelCode', { channelCode: 'alipay' }],
    ['merchantId', { merchantId: null }],
    ['amount', { amount: 101 }],
    ['payee.account', { payee: { ...identity.payee, account: 'o-2' } }],
    ['payee.name', { payee: { ...identity.payee, name: 'Zhang San' } }],
    ['remark', { remark: 'Other' }],
    ['scene', { scene: { id: '1005', reportInfos: [] } }],
    ['notifyUrl', { notifyUrl: 'https://merchant.example/other' }],
  ])('when %s differs, then it is another request', (_field, change) => {
    expect(sameTransfer(identity, { ...identity, ...change })).toBe(false);
  });
});

describe('refused before anything is recorded', () => {
  const limits = { minAmount: 10, maxAmount: 2 ** 31 - 1, payeeTypes: ['openid'], currency: 'CNY' };

  test('when the channel has no transfers, then 502 channel_not_support', () => {
    expect(transferRefusal('paypal', undefined, { amount: 100, payeeType: 'openid' })?.code).toBe(
      'channel_not_support',
    );
  });

  test('when the payee type is not the channel’s, then invalid_param naming payee.type', () => {
    expect(transferRefusal('wechatpay', limits, { amount: 100, payeeType: 'alipay_user_id' })).toMatchObject({
      code: 'invalid_param',
      message: expect.stringContaining('"payee.type"'),
    });
  });

  test('when the amount is outside the channel’s bounds, then invalid_amount; inside, nothing', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 32 }), (amount) => {
        const refusal = transferRefusal('wechatpay', limits, { amount, payeeType: 'openid' });
        const inside = amount >= 10 && amount <= 2 ** 31 - 1;
        return inside ? refusal === null : refusal?.code === 'invalid_amount';
      }),
    );
    expect(transferRefusal('wechatpay', limits, { amount: 9, payeeType: 'openid' })?.message).toContain(
      '0.10 CNY',
    );
  });
});

test('when a transfer has ended, then it cannot be cancelled; before, it can', () => {
  expect(cancelRefusal('processing', 'T1')).toBeNull();
  expect(cancelRefusal('wait_user_confirm', 'T1')).toBeNull();
  for (const status of ['success', 'failed', 'cancelled'] as const) {
    expect(cancelRefusal(status, 'T1')).toMatchObject({
      code: 'invalid_param',
      message: expect.stringContaining(status),
    });
  }
});

test('when a state is recorded, then only a change is news, and nothing after the end', () => {
  const waiting = { status: 'wait_user_confirm' as const, channelTransferNo: 'C1', packageInfo: 'PKG' };
  expect(stepChanges(undefined, waiting)).toBe(true);
  expect(stepChanges(waiting, { ...waiting })).toBe(false);
  // A query that does not repeat the package keeps the one recorded.
  expect(stepChanges(waiting, { ...waiting, packageInfo: null })).toBe(false);
  expect(stepChanges(waiting, { status: 'processing', channelTransferNo: 'C1' })).toBe(true);
  const done = { status: 'success' as const, channelTransferNo: 'C1' };
  expect(stepChanges(done, { status: 'failed', channelTransferNo: 'C1', reason: 'late' })).toBe(false);
});

test('when an account is shown, then most of it is masked', () => {
  expect(maskAccount('2088000000000001')).toBe('208****0001');
  expect(maskAccount('buyer@example.com')).toBe('buy****.com');
  expect(maskAccount('abcd')).toBe('****');
  fc.assert(fc.property(fc.string({ minLength: 9, maxLength: 64 }), (a) => maskAccount(a).length === 11));
});

describe('a transfer callback', () => {
  const t = { transferNo: 'T1', channelCode: 'wechatpay', amount: 100, subMerchantNo: '1900000109' };

  test('when it names its transfer, channel, amount and sub-merchant, then it is delivered', () => {
    expect(
      transferCallbackRefusal(t, 'wechatpay', { transferNo: 'T1', amount: 100, subMerchantNo: '1900000109' }),
    ).toBeNull();
    expect(transferCallbackRefusal(t, 'wechatpay', { transferNo: 'T1' })).toBeNull();
  });

  test.each([
    ['unknown_transfer', null, 'wechatpay', { transferNo: 'T9' }],
    ['channel_mismatch', t, 'alipay', { transferNo: 'T1' }],
    ['amount_mismatch', t, 'wechatpay', { transferNo: 'T1', amount: 99 }],
    ['merchant_mismatch', t, 'wechatpay', { transferNo: 'T1', subMerchantNo: '1900000110' }],
  ] as const)('when it is %s, then it is refused so', (outcome, transfer, channel, event) => {
    expect(transferCallbackRefusal(transfer, channel, event)?.outcome).toBe(outcome);
  });
});
