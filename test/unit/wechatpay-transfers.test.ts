/**
 * WeChat Pay 商家转账 on the adapter's side, without a network: the create body of each form, the
 * mapping of every published bill state, the MCHTRANSFER.BILL.FINISHED resource as an event, and
 * the rules the port checks before anything is recorded (problemWith).
 */
import { ChannelError } from '../../src/channels/errors';
import { referenceOf, type TransferInput } from '../../src/channels/ports';
import { WechatpayChannel } from '../../src/channels/wechatpay';
import {
  eventOf,
  toWireTransfer,
  transferProblem,
  transferStateOf,
  type WireNotification,
} from '../../src/channels/wechatpay/transformers';
import { generateWechatpaySandboxKeys } from '../../sandbox/wechatpay';

const ACCOUNT = { spMchid: '1230000109', spAppid: 'wxsp0000000000001' };
const SCENE = {
  id: '1000',
  reportInfos: [
    { type: '活动名称', content: '新会员有礼' },
    { type: '奖励说明', content: '注册会员抽奖一等奖' },
  ],
};

const input = (overrides: Partial<TransferInput> = {}): TransferInput => ({
  transferNo: 'TR20260101000001',
  amount: 100,
  payee: { type: 'openid', account: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
  remark: 'cash reward',
  scene: SCENE,
  callbackUrl: 'https://gateway.example.com/api/v1/notify/transfer/wechatpay',
  ...overrides,
});

const bill = (fields: Record<string, unknown>) => ({
  out_bill_no: 'TR20260101000001',
  transfer_bill_no: '1330000071100999991182020050700019480001',
  ...fields,
});

describe('the create body', () => {
  test('when a sub-merchant pays, then the partner body names its sub_mchid, the service provider’s appid, the scene and its report infos', () => {
    const seal = jest.fn(() => 'sealed');
    const body = toWireTransfer(
      ACCOUNT,
      '1900000109',
      input({ scene: { ...SCENE, userRecvPerception: '现金奖励' } }),
      seal,
    );
    expect(body).toEqual({
      sub_mchid: '1900000109',
      appid: ACCOUNT.spAppid,
      out_bill_no: 'TR20260101000001',
      transfer_scene_id: '1000',
      openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o',
      transfer_amount: 100,
      transfer_remark: 'cash reward',
      notify_url: 'https://gateway.example.com/api/v1/notify/transfer/wechatpay',
      user_recv_perception: '现金奖励',
      transfer_scene_report_infos: [
        { info_type: '活动名称', info_content: '新会员有礼' },
        { info_type: '奖励说明', info_content: '注册会员抽奖一等奖' },
      ],
    });
    // No name, nothing sealed.
    expect(seal).not.toHaveBeenCalled();
  });

  test('when the service provider pays, then the direct body has no sub_mchid, and the payee’s name goes only sealed', () => {
    const body = toWireTransfer(
      ACCOUNT,
      undefined,
      input({ amount: 200_000, payee: { type: 'openid', account: 'oPayee', name: '张三' } }),
      (plain) => `sealed(${plain.length})`,
    );
    expect(body).not.toHaveProperty('sub_mchid');
    expect(body.user_name).toBe('sealed(2)');
    expect(JSON.stringify(body)).not.toContain('张三');
  });
});

describe('bill states', () => {
  test.each([
    ['ACCEPTED', 'processing'],
    ['PROCESSING', 'processing'],
    ['TRANSFERING', 'processing'],
    ['CANCELING', 'cancelling'],
  ])('when WeChat Pay answers %s, then the transfer is %s', (state, status) => {
    expect(transferStateOf(bill({ state }))).toEqual({
      status,
      channelTransferNo: '1330000071100999991182020050700019480001',
    });
  });

  test('when the bill waits for its payee, then its package_info is what the payee confirms with', () => {
    expect(transferStateOf(bill({ state: 'WAIT_USER_CONFIRM', package_info: 'ABBQO+oYAAAB' }))).toEqual({
      status: 'wait_user_confirm',
      channelTransferNo: '1330000071100999991182020050700019480001',
      packageInfo: 'ABBQO+oYAAAB',
    });
  });

  test('when a query answers WAIT_USER_CONFIRM, which carries no package_info, then packageInfo is empty', () => {
    expect(transferStateOf(bill({ state: 'WAIT_USER_CONFIRM' }))).toMatchObject({ packageInfo: '' });
  });

  test('when the bill succeeded, then it finished at its update_time', () => {
    expect(transferStateOf(bill({ state: 'SUCCESS', update_time: '2026-01-01T10:00:05+08:00' }))).toEqual({
      status: 'success',
      channelTransferNo: '1330000071100999991182020050700019480001',
      finishedAt: new Date('2026-01-01T02:00:05Z'),
    });
  });

  test('when the payee never confirmed, then WeChat Pay’s FAIL with OVERDUE_CLOSE is a failure that says so', () => {
    expect(transferStateOf(bill({ state: 'FAIL', fail_reason: 'OVERDUE_CLOSE' }))).toEqual({
      status: 'failed',
      channelTransferNo: '1330000071100999991182020050700019480001',
      reason:
        'OVERDUE_CLOSE: the payee did not confirm in time; WeChat Pay closed the bill and returned the money',
    });
  });

  test('when a bill failed for a reason not listed, then the failure keeps WeChat Pay’s code', () => {
    expect(transferStateOf(bill({ state: 'FAIL', fail_reason: 'SOMETHING_NEW' }))).toMatchObject({
      status: 'failed',
      reason: 'SOMETHING_NEW: WeChat Pay failed the transfer',
    });
  });

  test('when the bill was cancelled, then the transfer is cancelled', () => {
    expect(transferStateOf(bill({ state: 'CANCELLED' }))).toMatchObject({ status: 'cancelled' });
  });

  test('when the answer has a state WeChat Pay does not publish, or no out_bill_no, then it is an invalid response', () => {
    expect(() => transferStateOf(bill({ state: 'CLOSED' }))).toThrow(ChannelError);
    expect(() => transferStateOf({ state: 'SUCCESS' })).toThrow(/out_bill_no/);
  });
});

describe('the MCHTRANSFER.BILL.FINISHED resource', () => {
  const notification: WireNotification = {
    id: 'EV-2018022511223320873',
    event_type: 'MCHTRANSFER.BILL.FINISHED',
    resource_type: 'encrypt-resource',
    resource: { algorithm: 'AEAD_AES_256_GCM', ciphertext: 'x', nonce: 'y', associated_data: 'mch_payment' },
  };

  test('when a bill succeeded, then the event names durapay’s transfer number, its state, amount and merchants, and refers to the transfer', () => {
    const { event, spMchid, subMchid } = eventOf(notification, {
      ...bill({ state: 'SUCCESS', update_time: '2026-01-01T10:00:05+08:00' }),
      mch_id: ACCOUNT.spMchid,
      sub_mchid: '1900000109',
      transfer_amount: 100,
      openid: 'oPayee',
      create_time: '2026-01-01T10:00:00+08:00',
    });
    expect(spMchid).toBe(ACCOUNT.spMchid);
    expect(subMchid).toBe('1900000109');
    expect(event).toEqual({
      kind: 'transfer',
      eventId: 'EV-2018022511223320873',
      transferNo: 'TR20260101000001',
      state: {
        status: 'success',
        channelTransferNo: '1330000071100999991182020050700019480001',
        finishedAt: new Date('2026-01-01T02:00:05Z'),
      },
      amount: 100,
    });
    expect(referenceOf(event)).toEqual({
      eventId: 'EV-2018022511223320873',
      subject: { kind: 'transfer_no', transferNo: 'TR20260101000001' },
    });
  });

  test('when the resource is not a final state, or names no merchant, then it is refused', () => {
    const waiting = { ...bill({ state: 'WAIT_USER_CONFIRM' }), mch_id: ACCOUNT.spMchid };
    expect(() => eventOf(notification, waiting)).toThrow(/WAIT_USER_CONFIRM/);
    expect(() => eventOf(notification, bill({ state: 'SUCCESS' }))).toThrow(ChannelError);
  });
});

describe('problemWith', () => {
  const ask = (overrides: Partial<TransferInput> = {}) => {
    const { transferNo: _no, callbackUrl: _url, ...rest } = input(overrides);
    return transferProblem(rest);
  };

  test('when the transfer is as WeChat Pay takes it, then there is no problem', () => {
    expect(ask()).toBeUndefined();
    expect(ask({ amount: 10, remark: '备'.repeat(32) })).toBeUndefined();
    expect(
      ask({ amount: 200_000, payee: { type: 'openid', account: 'oPayee', name: '张三' } }),
    ).toBeUndefined();
  });

  test('when the payee is not an openid, then payee.type is named', () => {
    expect(ask({ payee: { type: 'alipay_user_id', account: '2088000000000001' } })).toBe(
      'payee.type must be openid at wechatpay, not alipay_user_id',
    );
  });

  test('when no scene is given, then scene is named', () => {
    expect(ask({ scene: undefined })).toMatch(/^scene is required at wechatpay/);
    expect(ask({ scene: { id: '', reportInfos: [] } })).toMatch(/^scene is required at wechatpay/);
  });

  test('when the remark is longer than 32 characters (not bytes), then remark is named', () => {
    expect(ask({ remark: '备'.repeat(33) })).toBe(
      'remark must be at most 32 characters at wechatpay (it has 33)',
    );
    expect(ask({ remark: '' })).toMatch(/^remark is required/);
  });

  test('when 2 000 yuan or more is paid without the payee’s name, then payee.name is named', () => {
    expect(ask({ amount: 199_999 })).toBeUndefined();
    expect(ask({ amount: 200_000 })).toBe('payee.name is required from 2000.00 yuan at wechatpay');
  });

  test('when less than 0.10 yuan is asked, then the amount is named', () => {
    expect(ask({ amount: 9 })).toBe('amount must be at least 0.10 yuan at wechatpay');
  });

  test('when the channel is asked, then it pays openids from 0.10 yuan, checks the same rules, and refuses a bad create before calling', async () => {
    const keys = generateWechatpaySandboxKeys();
    const channel = new WechatpayChannel({
      // Nothing listens here: a create that reached the network would be unreachable, not refused.
      baseUrl: 'http://127.0.0.1:9',
      spMchid: keys.spMchid,
      spAppid: keys.spAppid,
      merchantSerial: keys.merchantSerial,
      merchantPrivateKey: keys.merchantPrivateKeyPem,
      apiV3Key: keys.apiV3Key,
      publicKeyId: keys.platformPublicKeyId,
      publicKey: keys.platformPublicKeyPem,
      timeoutMs: 1_000,
    });
    const port = channel.transfers;
    expect(port.minAmount).toBe(10);
    expect(port.payeeTypes).toEqual(['openid']);
    expect(port.problemWith?.({ ...input({ amount: 300_000 }) })).toBe(
      'payee.name is required from 2000.00 yuan at wechatpay',
    );
    await expect(
      port.create({ subMerchantNo: '1900000109' }, input({ remark: 'x'.repeat(40) })),
    ).rejects.toEqual(
      expect.objectContaining({
        kind: 'refused',
        message: expect.stringMatching(/^remark must be at most 32/),
      }),
    );
  });
});
