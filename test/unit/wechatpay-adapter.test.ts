/**
 * durapay's WeChat Pay adapter (its wire through wechatpay-axios-plugin, request signing and
 * answer verification on) against the offline v3 sandbox, which checks every request against
 * the documented fields and opens every sealed field with the platform private key: share
 * returns (分账回退), unfreezes, abnormal refunds (发起异常退款) and the amount limit.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  createWechatpaySandbox,
  generateWechatpaySandboxKeys,
  type WechatpaySandbox,
  type WechatpaySandboxKeys,
} from '../../sandbox/wechatpay';
import { ChannelError } from '../../src/channels/errors';
import type { TradeContext } from '../../src/channels/ports';
import { WechatpayChannel } from '../../src/channels/wechatpay';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(30_000);

const SUB_MCHID = '1900000109';
const MERCHANT_RECEIVER = { type: 'merchant', account: '86693852', name: 'Partner Tea Co' };
const PERSONAL_RECEIVER = { type: 'personal', account: 'oPartnerOpenid' };
/** A refund or sharing order stays PROCESSING this long. */
const DELAY_MS = 100;

let keys: WechatpaySandboxKeys;
let sandbox: WechatpaySandbox;
let server: http.Server;
let channel: WechatpayChannel;
const hook = new Receiver();
let sequence = 0;

const no = (prefix: string) => `${prefix}${Date.now()}${sequence++}`;

beforeAll(async () => {
  keys = generateWechatpaySandboxKeys();
  await hook.start();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wechatpay`;
  sandbox = createWechatpaySandbox({ keys, publicBaseUrl: base, refundDelayMs: DELAY_MS });
  app.use('/wechatpay', sandbox.router);
  channel = new WechatpayChannel({
    baseUrl: base,
    spMchid: keys.spMchid,
    spAppid: keys.spAppid,
    merchantSerial: keys.merchantSerial,
    merchantPrivateKey: keys.merchantPrivateKeyPem,
    apiV3Key: keys.apiV3Key,
    publicKeyId: keys.platformPublicKeyId,
    publicKey: keys.platformPublicKeyPem,
    timeoutMs: 5_000,
  });
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await hook.stop();
});

/** A Native order created by the adapter and paid at the sandbox's checkout; its context. */
async function paidOrder(
  amount = 100,
  profitSharing = true,
): Promise<{ tradeNo: string; ctx: TradeContext }> {
  const tradeNo = no('P');
  const created = await channel.payments.create(
    { currency: 'CNY', subMerchantNo: SUB_MCHID },
    {
      tradeNo,
      amount,
      payMethod: 'qr_code',
      subject: 'Green tea',
      expireAt: new Date(Date.now() + 3_600_000),
      callbackUrl: hook.url,
      profitSharing,
    },
  );
  const paid = await fetch(String(created.payCredential.code_url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'pay' }),
  });
  expect(paid.status).toBe(200);
  const state = await channel.payments.query({ subMerchantNo: SUB_MCHID }, tradeNo);
  if (state.status !== 'paid') throw new Error(`order ${tradeNo} is ${state.status}`);
  return { tradeNo, ctx: { subMerchantNo: SUB_MCHID, channelTradeNo: state.channelTradeNo } };
}

/** A paid order of 100 whose share (finished) gave the merchant receiver 60 and the person 20. */
async function sharedOrder() {
  const order = await paidOrder();
  const ps = channel.profitSharing;
  await ps.registerReceivers!(order.ctx, [MERCHANT_RECEIVER, PERSONAL_RECEIVER]);
  const shareNo = no('S');
  await ps.share(order.ctx, {
    tradeNo: order.tradeNo,
    shareNo,
    receivers: [
      { ...MERCHANT_RECEIVER, amount: 60 },
      { ...PERSONAL_RECEIVER, amount: 20 },
    ],
  });
  await until('the share finished', async () =>
    (await ps.query!(order.ctx, { tradeNo: order.tradeNo, shareNo })).status === 'finished'
      ? true
      : undefined,
  );
  return { ...order, shareNo };
}

describe('share returns', () => {
  test('when asked which receivers can give a share back, then merchants can and openids cannot', () => {
    const ps = channel.profitSharing;
    expect(ps.returns).toBe('separate');
    expect(ps.returnable!(MERCHANT_RECEIVER)).toBe(true);
    expect(ps.returnable!(PERSONAL_RECEIVER)).toBe(false);
    expect(ps.returnable!({ type: 'personal_sub', account: 'oSub' })).toBe(false);
    expect(ps.returnable!({ type: 'bank', account: '6222' })).toBe(false);
  });

  test('when part of a merchant receiver’s share is returned twice, then WeChat Pay holds two SUCCESS return orders of the sharing order, and a repeat is the same one', async () => {
    const { tradeNo, shareNo, ctx } = await sharedOrder();
    const ps = channel.profitSharing;
    const returnNo = no('B');
    const input = {
      tradeNo,
      shareNo,
      returnNo,
      receiver: MERCHANT_RECEIVER,
      amount: 25,
      description: 'refund R1',
    };
    const first = await ps.returnShare!(ctx, input);
    expect(first).toEqual({ status: 'success', channelReturnNo: expect.stringMatching(/^\d+$/) as unknown });
    expect(await ps.returnShare!(ctx, input)).toEqual(first);
    expect(await ps.queryReturn!(ctx, { tradeNo, shareNo, returnNo })).toEqual(first);
    expect(await ps.returnShare!(ctx, { ...input, returnNo: no('B'), amount: 35 })).toMatchObject({
      status: 'success',
    });
    expect(
      sandbox.returns(ctx.channelTradeNo!).map((r) => [r.out_order_no, r.return_mchid, r.amount, r.result]),
    ).toEqual([
      [shareNo, '86693852', 25, 'SUCCESS'],
      [shareNo, '86693852', 35, 'SUCCESS'],
    ]);
  });

  test('when a return asks more than the receiver has left, then it fails with WeChat Pay’s reason and nothing is returned', async () => {
    const { tradeNo, shareNo, ctx } = await sharedOrder();
    const ps = channel.profitSharing;
    const state = await ps.returnShare!(ctx, {
      tradeNo,
      shareNo,
      returnNo: no('B'),
      receiver: MERCHANT_RECEIVER,
      amount: 61,
      description: 'refund R1',
    });
    expect(state).toEqual({
      status: 'failed',
      reason: expect.stringMatching(/^INVALID_REQUEST: .*60 of 60/),
    });
    expect(sandbox.returns(ctx.channelTradeNo!)).toEqual([]);
  });

  test('when a return is asked of a personal receiver, then it fails without asking WeChat Pay', async () => {
    const { tradeNo, shareNo, ctx } = await sharedOrder();
    const state = await channel.profitSharing.returnShare!(ctx, {
      tradeNo,
      shareNo,
      returnNo: no('B'),
      receiver: PERSONAL_RECEIVER,
      amount: 5,
      description: 'refund R1',
    });
    expect(state).toEqual({ status: 'failed', reason: expect.stringContaining('merchant receivers only') });
    expect(sandbox.returns(ctx.channelTradeNo!)).toEqual([]);
  });

  test('when WeChat Pay answers a return PROCESSING or FAILED, then the adapter says so, and the query follows it', async () => {
    const { tradeNo, shareNo, ctx } = await sharedOrder();
    const ps = channel.profitSharing;
    const returnNo = no('B');
    const slow = { tradeNo, shareNo, returnNo, receiver: MERCHANT_RECEIVER, amount: 10 };
    expect(await ps.returnShare!(ctx, { ...slow, description: 'x [sandbox:return-processing]' })).toEqual({
      status: 'processing',
    });
    await until('the return settled', async () =>
      (await ps.queryReturn!(ctx, { tradeNo, shareNo, returnNo })).status === 'success' ? true : undefined,
    );
    expect(
      await ps.returnShare!(ctx, { ...slow, returnNo: no('B'), description: 'x [sandbox:return-failed]' }),
    ).toEqual({ status: 'failed', reason: 'FAILED: ACCOUNT_ABNORMAL' });
    expect(await ps.queryReturn!(ctx, { tradeNo, shareNo, returnNo: 'B_NEVER_MADE' })).toEqual({
      status: 'not_found',
    });
  });
});

describe('unfreeze', () => {
  test('when a frozen payment is unfrozen, then WeChat Pay answers PROCESSING, a query later reads it finished with the description, and nothing can be shared after', async () => {
    const { tradeNo, ctx } = await paidOrder();
    const ps = channel.profitSharing;
    const input = { tradeNo, unfreezeNo: no('U'), description: 'refunded in full: nothing to share' };
    // 解冻剩余资金 is asynchronous: the unfreeze is followed by querying it as a sharing order.
    expect(await ps.unfreeze!(ctx, input)).toEqual({ status: 'processing' });
    await until('the unfreeze finished', async () =>
      (await ps.query!(ctx, { tradeNo, shareNo: input.unfreezeNo })).status === 'finished' ? true : undefined,
    );
    expect(await ps.unfreeze!(ctx, input)).toEqual({ status: 'finished' });
    expect(sandbox.unfreezes(ctx.channelTradeNo!)).toEqual([
      expect.objectContaining({
        out_order_no: input.unfreezeNo,
        description: input.description,
        state: 'FINISHED',
      }),
    ]);
    await ps.registerReceivers!(ctx, [PERSONAL_RECEIVER]);
    await expect(
      ps.share(ctx, { tradeNo, shareNo: no('S'), receivers: [{ ...PERSONAL_RECEIVER, amount: 1 }] }),
    ).rejects.toThrow(/订单已解冻/);
  });

  test('when a payment that froze nothing is unfrozen, then WeChat Pay refuses it', async () => {
    const { tradeNo, ctx } = await paidOrder(100, false);
    await expect(
      channel.profitSharing.unfreeze!(ctx, { tradeNo, unfreezeNo: no('U'), description: 'nothing to share' }),
    ).rejects.toMatchObject({ kind: 'refused' });
    expect(sandbox.unfreezes(ctx.channelTradeNo!)).toEqual([]);
  });
});

describe('abnormal refunds', () => {
  async function callbackEvent(outRefundNo: string, eventType: string) {
    const received = await until(`the ${eventType} callback of ${outRefundNo}`, async () =>
      hook.received.find((r) => r.body.includes('"REFUND.') && r.body.includes(`"${eventType}"`))
        ? hook.received.filter((r) => r.body.includes(`"${eventType}"`))
        : undefined,
    );
    for (const r of received) {
      const req = { rawBody: Buffer.from(r.body), headers: r.headers };
      expect(await channel.callbacks.verify(req)).toEqual({ ok: true });
      const event = await channel.callbacks.decode(req);
      if (event.kind === 'refund' && event.refundNo === outRefundNo) return event;
    }
    return undefined;
  }

  test('when WeChat Pay ends a refund ABNORMAL, then the query and the callback say abnormal; paid to a user’s card instead, it goes on to success with its own callback', async () => {
    const { tradeNo } = await paidOrder(100, false);
    const refundNo = no('R');
    const ctx = { subMerchantNo: SUB_MCHID };
    const started = await channel.refunds.refund(ctx, {
      tradeNo,
      refundNo,
      amount: 40,
      totalAmount: 100,
      reason: 'card closed [sandbox:abnormal]',
      callbackUrl: hook.url,
    });
    expect(started).toMatchObject({ status: 'processing' });
    const channelRefundNo = (started as { channelRefundNo: string }).channelRefundNo;
    const abnormal = await until('the refund abnormal', async () => {
      const st = await channel.refunds.query(ctx, { tradeNo, refundNo });
      return st.status === 'abnormal' ? st : undefined;
    });
    expect(abnormal).toEqual({
      status: 'abnormal',
      channelRefundNo,
      reason: expect.stringMatching(/^ABNORMAL/),
    });
    expect(await until('event', () => callbackEvent(refundNo, 'REFUND.ABNORMAL'))).toMatchObject({
      status: 'abnormal',
      amount: 40,
      channelRefundNo,
    });

    const applied = await channel.refunds.applyAbnormal!(ctx, {
      tradeNo,
      refundNo,
      channelRefundNo,
      method: 'user_bank_card',
      bankType: 'CMB_DEBIT',
      bankAccount: '6214830012345678',
      realName: '李四',
    });
    expect(applied).toEqual({ status: 'processing', channelRefundNo });
    // Sealed on the wire: only the platform private key opened them.
    expect(sandbox.abnormalRefundApplication(SUB_MCHID, refundNo)).toMatchObject({
      type: 'USER_BANK_CARD',
      bank_type: 'CMB_DEBIT',
      bank_account: '6214830012345678',
      real_name: '李四',
    });
    expect(await until('event', () => callbackEvent(refundNo, 'REFUND.SUCCESS'))).toMatchObject({
      status: 'success',
      amount: 40,
    });
    expect(await channel.refunds.query(ctx, { tradeNo, refundNo })).toMatchObject({ status: 'success' });
    // Asked again once it is under way or done: the refund as it stands, not an error.
    expect(
      await channel.refunds.applyAbnormal!(ctx, {
        tradeNo,
        refundNo,
        channelRefundNo,
        method: 'user_bank_card',
        bankType: 'CMB_DEBIT',
        bankAccount: '6214830012345678',
        realName: '李四',
      }),
    ).toMatchObject({ status: 'success' });
  });

  test('when a refund that is not abnormal is applied for, then it is answered as it stands; one WeChat Pay does not have is refused, with no card or name in the error', async () => {
    const { tradeNo } = await paidOrder(100, false);
    const refundNo = no('R');
    const ctx = { subMerchantNo: SUB_MCHID };
    const started = await channel.refunds.refund(ctx, {
      tradeNo,
      refundNo,
      amount: 10,
      totalAmount: 100,
      reason: '[sandbox:callback-lost]',
      callbackUrl: hook.url,
    });
    const channelRefundNo = (started as { channelRefundNo: string }).channelRefundNo;
    const card = {
      tradeNo,
      refundNo,
      method: 'user_bank_card' as const,
      bankType: 'CMB_DEBIT',
      bankAccount: '6214830012345678',
      realName: '李四',
    };
    expect(await channel.refunds.applyAbnormal!(ctx, { ...card, channelRefundNo })).toMatchObject({
      status: expect.stringMatching(/^(processing|success)$/) as unknown,
    });
    expect(sandbox.abnormalRefundApplication(SUB_MCHID, refundNo)).toBeUndefined();
    const err = await channel.refunds.applyAbnormal!(ctx, {
      ...card,
      channelRefundNo: '50000000000000000000000000000',
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChannelError);
    expect((err as ChannelError).message).toMatch(/^RESOURCE_NOT_EXISTS: /);
    expect((err as ChannelError).message).not.toMatch(/6214830012345678|李四/);
  });
});

describe('amounts', () => {
  test('when the limit is asked, then it is 2^31 − 1 fen, the most WeChat Pay’s amount.total takes', async () => {
    expect(channel.capabilities.maxAmount).toBe(2 ** 31 - 1);
    // One more reaches WeChat Pay only if validation let it through: refused there as PARAM_ERROR.
    await expect(paidOrder(2 ** 31)).rejects.toThrow(/^PARAM_ERROR/);
  });
});

describe('the callback reply for an object durapay does not have', () => {
  test('when a callback names no order or refund durapay has, then WeChat Pay hears the failure reply it always heard', () => {
    const failed = channel.callbacks.reply({ ok: false, reason: 'no order P1' });
    expect(channel.callbacks.reply({ ok: false, reason: 'no order P1', unknown: true })).toEqual(failed);
    expect(failed).toEqual({ status: 200, contentType: 'text/plain', body: 'fail' });
  });
});
