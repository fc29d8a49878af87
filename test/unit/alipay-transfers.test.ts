// Longer than 300 lines: every status, problem and failure of the port with a test of its own.
/**
 * Alipay's transfers port on its own: the yuan string of every amount, the one map of Alipay's
 * transfer statuses, the checks made before anything is sent, and which failures are refusals
 * (nothing was paid) and which leave the outcome unknown. The SDK's exec is replaced by a script
 * of Alipay's answers, so each answer is exactly the one under test.
 */
import { generateKeyPairSync } from 'node:crypto';
import { AlipayRequestError } from 'alipay-sdk';
import fc from 'fast-check';
import { AlipayChannel } from '../../src/channels/alipay';
import { AlipayClient } from '../../src/channels/alipay/client';
import { fenOf } from '../../src/channels/alipay/transformers';
import {
  ALIPAY_TRANSFER_MIN_FEN,
  alipayTransfers,
  toWireTransfer,
  transferProblem,
  transferStateOf,
} from '../../src/channels/alipay/transfers';
import { ChannelError, channelFailure } from '../../src/channels/errors';
import type { TransferInput } from '../../src/channels/ports';

const pem = (
  key: { export(o: { type: 'pkcs8' | 'spki'; format: 'pem' }): string | Buffer },
  type: 'pkcs8' | 'spki',
) => String(key.export({ type, format: 'pem' }));
const app = generateKeyPairSync('rsa', { modulusLength: 2048 });
const alipay = generateKeyPairSync('rsa', { modulusLength: 2048 });

function newClient(): AlipayClient {
  return new AlipayClient({
    gatewayUrl: 'http://127.0.0.1:9/gateway.do',
    appId: '2021000000000001',
    sellerId: '2088000000000001',
    privateKey: pem(app.privateKey, 'pkcs8'),
    alipayPublicKey: pem(alipay.publicKey, 'spki'),
    timeoutMs: 1_000,
  });
}

/** A port whose every gateway call is answered by `answers`, in order; the calls are kept. */
function scripted(...answers: (Record<string, unknown> | Error)[]) {
  const client = newClient();
  const calls: { method: string; params: Record<string, unknown> }[] = [];
  jest.spyOn(client.sdk, 'exec').mockImplementation(async (method, params) => {
    calls.push({ method, params: params as Record<string, unknown> });
    const next = answers.shift();
    if (next === undefined) throw new Error(`no answer scripted for ${method}`);
    if (next instanceof Error) throw next;
    return next as never;
  });
  return { port: alipayTransfers(client), calls };
}

const input = (overrides: Partial<TransferInput> = {}): TransferInput => ({
  transferNo: 'T2026010100000001',
  amount: 1234,
  payee: { type: 'alipay_user_id', account: '2088102177846880' },
  remark: 'Commission for March',
  callbackUrl: 'https://durapay.example/api/v1/notify/payment/alipay',
  ...overrides,
});

const ok = (fields: Record<string, unknown>) => ({ code: '10000', msg: 'Success', ...fields });
const failed = (subCode: string, subMsg: string, code = '40004') => ({
  code,
  msg: 'Business Failed',
  sub_code: subCode,
  sub_msg: subMsg,
});

async function caught(promise: Promise<unknown>): Promise<ChannelError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ChannelError)) throw new Error(`expected a ChannelError, got ${String(err)}`);
  return err;
}

describe('amounts', () => {
  test('when fen are sent, then trans_amount is the exact yuan string with two decimals', () => {
    expect(toWireTransfer(input({ amount: 10 })).trans_amount).toBe('0.10');
    expect(toWireTransfer(input({ amount: 1234 })).trans_amount).toBe('12.34');
    expect(toWireTransfer(input({ amount: 100 })).trans_amount).toBe('1.00');
    expect(toWireTransfer(input({ amount: 10_000_000_000 })).trans_amount).toBe('100000000.00');
    // 0.1 + 0.2 in floating point is 0.30000000000000004: never computed that way.
    expect(toWireTransfer(input({ amount: 30 })).trans_amount).toBe('0.30');
  });

  test('when any amount Alipay transfers is sent, then reading its yuan string back gives the same fen', () => {
    fc.assert(
      fc.property(fc.integer({ min: ALIPAY_TRANSFER_MIN_FEN, max: 10_000_000_000 }), (fen) => {
        const wire = toWireTransfer(input({ amount: fen })).trans_amount;
        expect(wire).toMatch(/^\d+\.\d{2}$/);
        expect(fenOf(wire)).toBe(fen);
      }),
    );
  });
});

describe('the wire of a transfer', () => {
  test('when a transfer is sent, then it names the product, the scene, the payee and durapay number', () => {
    expect(
      toWireTransfer(
        input({ payee: { type: 'alipay_logon_id', account: 'tea@example.com', name: ' 王小二 ' } }),
      ),
    ).toEqual({
      out_biz_no: 'T2026010100000001',
      trans_amount: '12.34',
      product_code: 'TRANS_ACCOUNT_NO_PWD',
      biz_scene: 'DIRECT_TRANSFER',
      order_title: 'Commission for March',
      payee_info: { identity: 'tea@example.com', identity_type: 'ALIPAY_LOGON_ID', name: '王小二' },
      remark: 'Commission for March',
    });
    const byUserId = toWireTransfer(input());
    expect(byUserId.payee_info).toEqual({ identity: '2088102177846880', identity_type: 'ALIPAY_USER_ID' });
  });

  test('when the remark is longer than a bill line, then order_title is its first 128 characters', () => {
    const remark = '佣'.repeat(150);
    const wire = toWireTransfer(input({ remark }));
    expect([...wire.order_title]).toHaveLength(128);
    expect(wire.remark).toBe(remark);
  });
});

describe('transferProblem (problemWith)', () => {
  const base = {
    amount: 1000,
    remark: 'ok',
    payee: { type: 'alipay_user_id' as const, account: '2088102177846880' },
  };

  test('when the transfer is one Alipay takes, then there is no problem', () => {
    expect(transferProblem(base)).toBeUndefined();
    expect(
      transferProblem({
        ...base,
        payee: { type: 'alipay_logon_id', account: '13800000000', name: '王小二' },
      }),
    ).toBeUndefined();
    expect(transferProblem({ ...base, amount: 10, remark: 'x'.repeat(200) })).toBeUndefined();
  });

  test.each([
    ['a logon id without a name', { payee: { type: 'alipay_logon_id', account: 'a@b.c' } }, /^payee\.name: /],
    ['a blank name', { payee: { type: 'alipay_logon_id', account: 'a@b.c', name: '  ' } }, /^payee\.name: /],
    ['a short user id', { payee: { type: 'alipay_user_id', account: '2088123' } }, /^payee\.account: .*2088/],
    [
      'a long user id',
      { payee: { type: 'alipay_user_id', account: '20881021778468801' } },
      /^payee\.account: /,
    ],
    [
      'a user id not 2088…',
      { payee: { type: 'alipay_user_id', account: '1088102177846880' } },
      /^payee\.account: /,
    ],
    [
      'an openid',
      { payee: { type: 'openid', account: 'o-abc' } },
      /^payee\.type: .*alipay_user_id or alipay_logon_id/,
    ],
    ['a remark of 201 characters', { remark: 'x'.repeat(201) }, /^remark: .*200/],
    ['0.09 yuan', { amount: 9 }, /^amount: .*0\.10 yuan/],
    ['more than 100 000 000 yuan', { amount: 10_000_000_001 }, /^amount: /],
  ] as const)('when %s is asked for, then the problem names the field', (_what, overrides, message) => {
    expect(transferProblem({ ...base, ...(overrides as object) })).toMatch(message);
  });

  test('when a remark of 200 Chinese characters is checked, then characters are counted, not bytes', () => {
    expect(transferProblem({ ...base, remark: '佣'.repeat(200) })).toBeUndefined();
    expect(transferProblem({ ...base, remark: '佣'.repeat(201) })).toMatch(/^remark: /);
  });

  test('when the channel is asked what it pays, then it says 0.10 yuan at least, to Alipay users only, and cannot cancel', () => {
    const channel = new AlipayChannel({ ...newClient().options });
    expect(channel.transfers.minAmount).toBe(10);
    expect(channel.transfers.payeeTypes).toEqual(['alipay_user_id', 'alipay_logon_id']);
    expect(channel.transfers.problemWith?.({ ...base, amount: 5 })).toMatch(/^amount: /);
    expect(channel.transfers.cancel).toBeUndefined();
  });
});

describe('transferStateOf', () => {
  test('when Alipay says SUCCESS, then the transfer succeeded at pay_date (a query) or trans_date (a create)', () => {
    expect(
      transferStateOf(ok({ status: 'SUCCESS', order_id: 'O1', pay_date: '2026-01-02 08:00:01' }), 'x'),
    ).toEqual({ status: 'success', channelTransferNo: 'O1', finishedAt: new Date('2026-01-02T00:00:01Z') });
    expect(
      transferStateOf(ok({ status: 'SUCCESS', order_id: 'O1', trans_date: '2026-01-02 08:00:02' }), 'x'),
    ).toEqual({ status: 'success', channelTransferNo: 'O1', finishedAt: new Date('2026-01-02T00:00:02Z') });
  });

  test.each(['DEALING', 'WAIT_PAY'])(
    'when Alipay says %s, then the transfer is still processing',
    (status) => {
      expect(transferStateOf(ok({ status, order_id: 'O1' }), 'x')).toEqual({
        status: 'processing',
        channelTransferNo: 'O1',
      });
    },
  );

  test('when Alipay says FAIL, then the transfer failed with its error_code and fail_reason', () => {
    const state = transferStateOf(
      ok({ status: 'FAIL', order_id: 'O1', error_code: 'PAYEE_USER_INFO_ERROR', fail_reason: '姓名不匹配' }),
      'x',
    );
    expect(state).toEqual({
      status: 'failed',
      channelTransferNo: 'O1',
      reason: 'Alipay failed the transfer: PAYEE_USER_INFO_ERROR: 姓名不匹配',
    });
  });

  test('when Alipay says REFUND, then the transfer failed, saying it was paid and came back', () => {
    const state = transferStateOf(ok({ status: 'REFUND', order_id: 'O1', fail_reason: '收款账户冻结' }), 'x');
    expect(state.status).toBe('failed');
    expect(state).toMatchObject({
      reason: expect.stringMatching(/paid .*returned \(REFUND\): 收款账户冻结/),
    });
  });

  test('when Alipay says CLOSED, then the transfer is cancelled: closed before any money left', () => {
    expect(transferStateOf(ok({ status: 'CLOSED', order_id: 'O1' }), 'x')).toEqual({
      status: 'cancelled',
      channelTransferNo: 'O1',
      reason: expect.stringMatching(/before any money left/),
    });
  });

  test('when Alipay names a status it never documented, then the answer is unreadable', () => {
    expect(() => transferStateOf(ok({ status: 'MAYBE' }), 'transfer query')).toThrow(
      expect.objectContaining({ kind: 'invalid_response' }),
    );
    expect(() => transferStateOf(ok({}), 'transfer query')).toThrow(ChannelError);
  });
});

describe('create and query', () => {
  test('when a transfer is created, then it goes by uni.transfer with durapay number and the merchant token, and its state is answered', async () => {
    const { port, calls } = scripted(
      ok({ out_biz_no: 'T1', order_id: 'O1', status: 'SUCCESS', trans_date: '2026-01-02 08:00:00' }),
    );
    const state = await port.create({ appAuthToken: '202601BBtoken' }, input({ transferNo: 'T1' }));
    expect(state).toMatchObject({ status: 'success', channelTransferNo: 'O1' });
    expect(calls[0]!.method).toBe('alipay.fund.trans.uni.transfer');
    expect(calls[0]!.params).toMatchObject({
      app_auth_token: '202601BBtoken',
      bizContent: { out_biz_no: 'T1', trans_amount: '12.34', product_code: 'TRANS_ACCOUNT_NO_PWD' },
    });
  });

  test('when a transfer is queried, then common.query is asked by out_biz_no with product and scene', async () => {
    const { port, calls } = scripted(ok({ out_biz_no: 'T1', order_id: 'O1', status: 'DEALING' }));
    expect(await port.query({}, 'T1')).toEqual({ status: 'processing', channelTransferNo: 'O1' });
    expect(calls[0]).toEqual({
      method: 'alipay.fund.trans.common.query',
      params: expect.objectContaining({
        bizContent: { out_biz_no: 'T1', product_code: 'TRANS_ACCOUNT_NO_PWD', biz_scene: 'DIRECT_TRANSFER' },
      }),
    });
    expect(calls[0]!.params).not.toHaveProperty('app_auth_token');
  });

  test('when Alipay has no such transfer, then the query answers not_found', async () => {
    const { port } = scripted(failed('ORDER_NOT_EXIST', '转账订单不存在'));
    expect(await port.query({}, 'T1')).toEqual({ status: 'not_found' });
  });

  test.each([
    ['PAYEE_NOT_EXIST', '收款账号不存在'],
    ['PAYER_BALANCE_NOT_ENOUGH', '付款方余额不足'],
    ['PAYEE_USER_INFO_ERROR', '支付宝账号和姓名不匹配'],
    ['EXCEED_LIMIT_SM_MIN_AMOUNT', '单笔最低转账金额0.1元'],
  ])(
    'when Alipay refuses with %s, then create throws a refusal with its words, nothing paid',
    async (subCode, subMsg) => {
      const { port, calls } = scripted(failed(subCode, subMsg));
      const err = await caught(port.create({}, input()));
      expect(err.kind).toBe('refused');
      expect(err.message).toBe(`${subCode}: ${subMsg}`);
      expect(channelFailure(err, 'transfer')).toMatchObject({
        code: 'channel_transfer_fail',
        retryable: false,
      });
      expect(calls).toHaveLength(1);
    },
  );

  test.each([
    ['a SYSTEM_ERROR', failed('SYSTEM_ERROR', '系统繁忙')],
    ['an ACQ.SYSTEM_ERROR', failed('ACQ.SYSTEM_ERROR', '系统繁忙')],
    ['a 20000', failed('isp.unknow-error', '服务暂不可用', '20000')],
    ['no connection', new AlipayRequestError('HttpClient Request error: socket hang up')],
    ['an HTTP 502', new AlipayRequestError('HTTP 请求错误, status: 502', { responseHttpStatus: 502 })],
  ])(
    'when Alipay answers %s, then the outcome is unknown and create throws unreachable',
    async (_what, answer) => {
      const { port } = scripted(answer);
      const err = await caught(port.create({}, input()));
      expect(err.kind).toBe('unreachable');
      expect(channelFailure(err, 'transfer')).toMatchObject({ code: 'channel_timeout', retryable: true });
    },
  );

  test('when no answer comes in time, then create throws timeout', async () => {
    const timeout = new AlipayRequestError('HttpClient Request error: timeout', {
      cause: Object.assign(new Error('timeout'), { name: 'HttpClientRequestTimeoutError' }),
    });
    const { port } = scripted(timeout);
    expect((await caught(port.create({}, input()))).kind).toBe('timeout');
  });

  test('when Alipay says the number was used with other parameters, then the transfer under it is looked up and answered', async () => {
    const { port, calls } = scripted(
      failed('PAYMENT_INFO_INCONSISTENCY', '两次请求商户单号一样，但是参数不一致'),
      ok({ out_biz_no: 'T1', order_id: 'O1', status: 'SUCCESS', pay_date: '2026-01-02 08:00:00' }),
    );
    expect(await port.create({}, input({ transferNo: 'T1' }))).toMatchObject({ status: 'success' });
    expect(calls.map((c) => c.method)).toEqual([
      'alipay.fund.trans.uni.transfer',
      'alipay.fund.trans.common.query',
    ]);
  });

  test('when the number was used with other parameters and no transfer is found under it, then the refusal stands', async () => {
    const { port } = scripted(
      failed('PAYMENT_INFO_INCONSISTENCY', '参数不一致'),
      failed('ORDER_NOT_EXIST', '转账订单不存在'),
    );
    expect((await caught(port.create({}, input()))).kind).toBe('refused');
  });

  test('when the number was used and the transfer cannot be read back, then the outcome is unknown, not refused', async () => {
    const { port } = scripted(
      failed('PAYMENT_INFO_INCONSISTENCY', '参数不一致'),
      failed('SYSTEM_ERROR', '系统繁忙'),
    );
    expect((await caught(port.create({}, input()))).kind).toBe('unreachable');
  });

  test('when a transfer has a problem, then it is refused before anything is sent', async () => {
    const { port, calls } = scripted();
    const err = await caught(
      port.create({}, input({ payee: { type: 'alipay_logon_id', account: 'a@b.c' } })),
    );
    expect(err).toMatchObject({ kind: 'refused', message: expect.stringMatching(/^payee\.name: /) });
    expect(calls).toHaveLength(0);
  });

  test('when the merchant is a secondary merchant (smid) without a token, then it is refused rather than paid from the provider account', async () => {
    const { port, calls } = scripted();
    const err = await caught(port.create({ subMerchantNo: '2088000000000099' }, input()));
    expect(err.kind).toBe('refused');
    expect(calls).toHaveLength(0);
  });
});
