/**
 * durapay's Alipay adapter (its wire through alipay-sdk, request signing and answer verification
 * on) against the offline gateway, which checks each method's biz_content and keeps what it was
 * asked: royalty given back with a refund (refund_royalty_parameters), the unfreeze of a trade's
 * frozen royalty, and refund notifications confirmed in the order's context (a merchant that
 * authorised durapay's app is asked about with its app_auth_token).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  createAlipaySandbox,
  generateAlipaySandboxKeys,
  type AlipaySandbox,
  type AlipaySandboxKeys,
} from '../../sandbox/alipay';
import { AlipayChannel } from '../../src/channels/alipay';
import { ChannelError } from '../../src/channels/errors';
import type { ChannelContext, TradeContext } from '../../src/channels/ports';
import { until } from '../support/wait';

jest.setTimeout(30_000);

const RECEIVER = { type: 'user_id', account: '2088000000000778', name: 'Partner Tea Co' };
const TOKEN = '202611BBf00dcafe0123456789abcdef';

let keys: AlipaySandboxKeys;
let sandbox: AlipaySandbox;
let server: http.Server;
let channel: AlipayChannel;
let notifyUrl = '';
/** Every notification the gateway posted, as received. */
const notifications: { body: Buffer; fields: Record<string, string> }[] = [];
let sequence = 0;

const no = (prefix: string) => `${prefix}${Date.now()}${sequence++}`;

beforeAll(async () => {
  keys = generateAlipaySandboxKeys();
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox = createAlipaySandbox({ keys, publicBaseUrl: `${origin}/alipay`, timeScale: 0.001 });
  app.use('/alipay', sandbox.router);
  // The merchant's notify_url: keeps each notification and acknowledges it.
  app.post('/notify', express.raw({ type: () => true }), (req, res) => {
    const body = req.body as Buffer;
    notifications.push({ body, fields: Object.fromEntries(new URLSearchParams(body.toString('utf8'))) });
    res.type('text/plain').send('success');
  });
  notifyUrl = `${origin}/notify`;
  channel = new AlipayChannel({
    gatewayUrl: `${origin}/alipay/gateway.do`,
    appId: keys.appId,
    sellerId: keys.sellerId,
    privateKey: keys.appPrivateKeyPem,
    alipayPublicKey: keys.alipayPublicKeyPem,
    timeoutMs: 5_000,
  });
});

afterAll(async () => {
  sandbox.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A qr_code trade of 1.00 made by the adapter and paid at the gateway's cashier. */
async function paidTrade(ctx: ChannelContext = {}): Promise<{ tradeNo: string; ctx: TradeContext }> {
  const tradeNo = no('P');
  const created = await channel.payments.create(
    { ...ctx, currency: 'CNY' },
    {
      tradeNo,
      amount: 100,
      payMethod: 'qr_code',
      subject: 'Green tea',
      expireAt: new Date(Date.now() + 3_600_000),
      callbackUrl: notifyUrl,
      profitSharing: true,
    },
  );
  const paid = await fetch(String(created.payCredential.qr_code), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result: 'success' }),
  });
  expect(paid.status).toBe(200);
  const state = await channel.payments.query(ctx, tradeNo);
  if (state.status !== 'paid') throw new Error(`trade ${tradeNo} is ${state.status}`);
  return { tradeNo, ctx: { ...ctx, channelTradeNo: state.channelTradeNo } };
}

/** A paid trade whose royalty settle gave the receiver 0.30. */
async function settledTrade() {
  const trade = await paidTrade();
  await channel.profitSharing.registerReceivers!(trade.ctx, [RECEIVER]);
  const shareNo = no('S');
  expect(
    await channel.profitSharing.share(trade.ctx, {
      tradeNo: trade.tradeNo,
      shareNo,
      receivers: [{ ...RECEIVER, amount: 30 }],
    }),
  ).toEqual({ status: 'finished' });
  return { ...trade, shareNo };
}

describe('royalty returned with the refund', () => {
  test('when the adapter is asked how shares come back, then it is with the refund, from any receiver Alipay settles to', () => {
    expect(channel.profitSharing.returns).toBe('with_refund');
    expect(channel.profitSharing.returnable!(RECEIVER)).toBe(true);
    expect(channel.profitSharing.returnable!({ type: 'login_name', account: 'partner@example.com' })).toBe(
      true,
    );
    expect(channel.profitSharing.returnable!({ type: 'bank', account: '6222' })).toBe(false);
    expect(channel.profitSharing.returnShare).toBeUndefined();
  });

  test('when a refund carries share returns, then Alipay is asked to take them back from the receivers with it, and records them once', async () => {
    const { tradeNo, ctx } = await settledTrade();
    const input = {
      tradeNo,
      refundNo: no('R'),
      amount: 90,
      totalAmount: 100,
      callbackUrl: notifyUrl,
      shareReturns: [{ ...RECEIVER, amount: 20 }],
    };
    expect(await channel.refunds.refund(ctx, input)).toMatchObject({ status: 'success' });
    expect(await channel.refunds.refund(ctx, input)).toMatchObject({ status: 'success' });
    expect(sandbox.royaltyReturns(ctx.channelTradeNo!)).toEqual([
      expect.objectContaining({
        out_request_no: input.refundNo,
        trans_out_type: 'userId',
        trans_out: RECEIVER.account,
        amount: '0.20',
      }),
    ]);
  });

  test('when a refund would take back more than the receiver got, then Alipay refuses the refund whole', async () => {
    const { tradeNo, ctx } = await settledTrade();
    const refused = await channel.refunds
      .refund(ctx, {
        tradeNo,
        refundNo: no('R'),
        amount: 40,
        totalAmount: 100,
        callbackUrl: notifyUrl,
        shareReturns: [{ ...RECEIVER, amount: 31 }],
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChannelError);
    expect(refused).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(/^ACQ.INVALID_PARAMETER/),
    });
    expect(sandbox.trade(tradeNo)!.refunds).toEqual([]);
    expect(sandbox.royaltyReturns(ctx.channelTradeNo!)).toEqual([]);
  });
});

describe('unfreeze', () => {
  test('when a royalty-frozen trade is unfrozen, then Alipay gets a settle with royalty_finish alone, once, and the trade can no longer be settled', async () => {
    const { tradeNo, ctx } = await paidTrade();
    const input = { tradeNo, unfreezeNo: no('U'), description: 'nothing to share' };
    expect(await channel.profitSharing.unfreeze!(ctx, input)).toEqual({ status: 'finished' });
    expect(await channel.profitSharing.unfreeze!(ctx, input)).toEqual({ status: 'finished' });
    expect(sandbox.royaltyUnfreeze(ctx.channelTradeNo!)).toMatchObject({ out_request_no: input.unfreezeNo });
    await channel.profitSharing.registerReceivers!(ctx, [RECEIVER]);
    await expect(
      channel.profitSharing.share(ctx, {
        tradeNo,
        shareNo: no('S'),
        receivers: [{ ...RECEIVER, amount: 1 }],
      }),
    ).rejects.toThrow(/^ACQ.TRADE_SETTLE_ERROR/);
  });
});

describe('refund notifications of a merchant that authorised the app', () => {
  test('when a token merchant’s refund is notified, then it is confirmed with its app_auth_token, and without it Alipay knows no such trade', async () => {
    const ctx = { subMerchantNo: TOKEN };
    const { tradeNo } = await paidTrade(ctx);
    expect(sandbox.trade(tradeNo)).toMatchObject({ app_auth_token: TOKEN });
    const refundNo = no('R');
    await channel.refunds.refund(ctx, {
      tradeNo,
      refundNo,
      amount: 30,
      totalAmount: 100,
      callbackUrl: notifyUrl,
    });
    const notified = await until('the refund notification', async () =>
      notifications.find((n) => n.fields.out_biz_no === refundNo),
    );
    const req = { rawBody: notified.body, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    expect(await channel.callbacks.verify(req)).toEqual({ ok: true });
    const decoded = await channel.callbacks.decode(req);
    expect(decoded).toMatchObject({ kind: 'refund', tradeNo, refundNo });
    expect(await channel.callbacks.confirm!(ctx, decoded)).toMatchObject({
      kind: 'refund',
      refundNo,
      status: 'success',
      amount: 30,
    });
    await expect(channel.callbacks.confirm!({}, decoded)).rejects.toThrow(/has no trade/);
  });
});

describe('the callback reply for an object durapay does not have', () => {
  test('when a notification names no order or refund durapay has, then Alipay hears the failure reply it always heard', () => {
    const failed = channel.callbacks.reply({ ok: false, reason: 'no order P1' });
    expect(channel.callbacks.reply({ ok: false, reason: 'no order P1', unknown: true })).toEqual(failed);
    expect(failed.body).not.toBe(channel.callbacks.reply({ ok: true }).body);
  });
});
