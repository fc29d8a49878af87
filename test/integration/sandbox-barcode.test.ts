/**
 * The sandbox channel's barcode payments (SPEC §14) through its adapter's port, against the
 * simulator on a real Postgres: each kind of sandbox buyer code answers as its buyer does, a
 * reverse closes the payment and gives back what was taken, and the simulator's ledger (the
 * orders it holds `paid`) is read in its own table.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { ChannelError } from '../../src/channels/errors';
import type { BarcodePort, PaymentsPort } from '../../src/channels/ports';
import { sandboxAuthCode, type SandboxBuyer } from '../../src/channels/sandbox';
import { startTestStack, type TestStack } from '../support/harness';

jest.setTimeout(60_000);

let stack: TestStack;
let barcode: BarcodePort;
let payments: PaymentsPort;

beforeAll(async () => {
  stack = await startTestStack();
  const channel = stack.services.channels.get('sandbox')!;
  barcode = channel.barcode!;
  payments = channel.payments;
});
afterAll(async () => {
  await stack?.stop();
});

const ctx = { currency: 'CNY', channelTradeNo: null };

function payment(
  buyer: SandboxBuyer,
  tradeNo = `B${randomUUID().replace(/-/g, '').slice(0, 24).toUpperCase()}`,
) {
  return {
    tradeNo,
    amount: 1_234,
    subject: 'Counter sale',
    authCode: sandboxAuthCode(buyer),
    deviceId: 'till-1',
    storeId: 'store-9',
    callbackUrl: 'http://127.0.0.1:9/callback',
    profitSharing: false,
  };
}

/** The simulator's row of the payment: what it holds and how often it was asked. */
async function ledger(tradeNo: string) {
  const [row] = await stack.database.db.sequelize.query<{
    status: string;
    pay_method: string;
    reverse_refunded: boolean;
    reverse_requests: number;
    create_requests: number;
    extra: Record<string, unknown>;
  }>(
    `SELECT status, pay_method, reverse_refunded, reverse_requests, create_requests, extra
       FROM sandbox_orders WHERE trade_no = :tradeNo`,
    { replacements: { tradeNo }, type: QueryTypes.SELECT },
  );
  return row;
}

async function refusal(p: Promise<unknown>): Promise<ChannelError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChannelError);
  return err as ChannelError;
}

describe('barcode payments at the sandbox', () => {
  test('when the buyer pays at once, then it answers paid, and the simulator holds the money with the scene fields', async () => {
    const p = payment('pays');
    const answer = await barcode.pay(ctx, p);
    expect(answer).toMatchObject({ status: 'paid', amount: 1_234 });
    expect(await ledger(p.tradeNo)).toMatchObject({
      status: 'paid',
      pay_method: 'barcode',
      extra: { device_id: 'till-1', store_id: 'store-9' },
    });
    expect(await payments.query(ctx, p.tradeNo)).toMatchObject({ status: 'paid', amount: 1_234 });
  });

  test('when the buyer confirms later, then it answers paying, and a query finds it paid once the buyer has confirmed', async () => {
    const p = payment('confirms_later');
    expect(await barcode.pay(ctx, p)).toMatchObject({ status: 'paying' });
    expect(await payments.query(ctx, p.tradeNo)).toEqual({ status: 'pending' });
    await stack.sandboxIdle(p.tradeNo);
    expect(await payments.query(ctx, p.tradeNo)).toMatchObject({ status: 'paid' });
  });

  test('when the buyer has not enough balance or shows an expired code, then the code is refused with the reason, and nothing is held', async () => {
    for (const [buyer, words] of [
      ['insufficient', 'balance'],
      ['expired', 'expired'],
    ] as const) {
      const p = payment(buyer);
      const err = await refusal(barcode.pay(ctx, p));
      expect({ kind: err.kind, words: err.message.includes(words) }).toEqual({
        kind: 'refused',
        words: true,
      });
      expect(await ledger(p.tradeNo)).toBeUndefined();
    }
  });

  test('when the buyer never confirms, then the reverse closes it with nothing to give back', async () => {
    const p = payment('never_confirms');
    expect(await barcode.pay(ctx, p)).toMatchObject({ status: 'paying' });
    expect(await barcode.reverse(ctx, p.tradeNo)).toEqual({ status: 'reversed', refunded: false });
    expect(await ledger(p.tradeNo)).toMatchObject({ status: 'closed', reverse_refunded: false });
    // Asked again, it answers as it was reversed, and nothing changes.
    expect(await barcode.reverse(ctx, p.tradeNo)).toEqual({ status: 'reversed', refunded: false });
    expect(await ledger(p.tradeNo)).toMatchObject({ status: 'closed', reverse_requests: 2 });
  });

  test('when the buyer was charged and the answer was lost, then the pay call fails as unknown, and the reverse gives the money back', async () => {
    const p = payment('answer_lost');
    const err = await refusal(barcode.pay(ctx, p));
    expect(['unreachable', 'timeout', 'invalid_response']).toContain(err.kind);
    expect(await ledger(p.tradeNo)).toMatchObject({ status: 'paid' });
    expect(await barcode.reverse(ctx, p.tradeNo)).toEqual({ status: 'reversed', refunded: true });
    expect(await ledger(p.tradeNo)).toMatchObject({ status: 'closed', reverse_refunded: true });
  });

  test('when the buyer confirms just as the reverse arrives, then the reverse gives the money back', async () => {
    const p = payment('confirms_at_reverse');
    expect(await barcode.pay(ctx, p)).toMatchObject({ status: 'paying' });
    expect(await barcode.reverse(ctx, p.tradeNo)).toEqual({ status: 'reversed', refunded: true });
    expect(await ledger(p.tradeNo)).toMatchObject({ status: 'closed', reverse_refunded: true });
    expect(await payments.query(ctx, p.tradeNo)).toEqual({ status: 'closed' });
  });

  test('when the channel refuses to reverse a payment it holds, then the reverse is refused and the payment stands', async () => {
    const p = payment('reverse_refused');
    expect(await barcode.pay(ctx, p)).toMatchObject({ status: 'paying' });
    const err = await refusal(barcode.reverse(ctx, p.tradeNo));
    expect(err.kind).toBe('refused');
    expect(await payments.query(ctx, p.tradeNo)).toMatchObject({ status: 'paid' });
    expect(await ledger(p.tradeNo)).toMatchObject({ status: 'paid' });
  });

  test('when the same payment is sent again with the same code, then it is the same payment; with another code, it is refused', async () => {
    const p = payment('never_confirms');
    await barcode.pay(ctx, p);
    expect(await barcode.pay(ctx, p)).toMatchObject({ status: 'paying' });
    expect(await ledger(p.tradeNo)).toMatchObject({ create_requests: 2 });
    const err = await refusal(barcode.pay(ctx, { ...p, authCode: sandboxAuthCode('pays') }));
    expect(err.kind).toBe('refused');
    expect(await ledger(p.tradeNo)).toMatchObject({ status: 'pending' });
  });

  test('when a payment the simulator never heard of is reversed, then it is reversed with nothing to give back', async () => {
    expect(await barcode.reverse(ctx, `B${Date.now()}`)).toEqual({
      status: 'reversed',
      refunded: false,
      unseen: true,
    });
  });

  test('when the buyer confirms later but the payment was reversed first, then the confirmation changes nothing', async () => {
    const p = payment('confirms_later');
    expect(await barcode.pay(ctx, p)).toMatchObject({ status: 'paying' });
    expect(await barcode.reverse(ctx, p.tradeNo)).toEqual({ status: 'reversed', refunded: false });
    await stack.sandboxIdle(p.tradeNo);
    expect(await ledger(p.tradeNo)).toMatchObject({ status: 'closed', reverse_refunded: false });
  });
});
