/**
 * Refunds and profit sharing where they meet (SPEC §3.5, §3.7): money out never exceeds money
 * in, whatever comes first. Every effect is counted at the channel (the sandbox's refunds,
 * shares, returns and unfreezes), not only in the answers.
 */
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import type { temporal } from '@temporalio/proto';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { refundWorkflowId } from '../../src/modules/refunds/messages';
import { sealAbnormalPayee } from '../../src/modules/refunds/payee';
import { createActivities } from '../../src/activities';
import { EncryptionCodec } from '../../src/platform/payload-codec';
import { payloadsOf } from '../support/history';
import { startTestStack, type TestStack } from '../support/harness';
import { paymentsClient, type Answer, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(600_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

// At 1/100 of real time: the share is due 2 s after payment, refunds settle within a second.
beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 100, profitShareDelayMs: 200_000 });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

type ReceiverSpec = { type: string; account: string; name?: string; weight: number };

/** A merchant sharing with these receivers, with its account at the sandbox channel. */
const merchantWith = (receivers: ReceiverSpec[]): Promise<string> =>
  pay.merchant({ merchant_name: 'Shared Tea', profit_sharing: { receivers, max_ratio: 1 } });

const MERCHANT: ReceiverSpec = { type: 'MERCHANT_ID', account: '1900000101', name: 'Tea Partner', weight: 1 };
const PERSON: ReceiverSpec = { type: 'PERSONAL_OPENID', account: 'o-person', weight: 1 };

/** What the channel paid out for an order: refunds (not failed), shares, returns, unfreezes. */
async function atChannel(tradeNo: string) {
  const n = (sql: string) => pay.count(sql, { t: tradeNo });
  const refunded = await n(
    "SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_refunds WHERE trade_no = :t AND status <> 'failed'",
  );
  const shared = await n(
    'SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_profit_shares WHERE trade_no = :t',
  );
  const returned = await n(
    'SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_share_returns WHERE trade_no = :t',
  );
  const unfrozen = await n('SELECT count(*) AS n FROM sandbox_unfreezes WHERE trade_no = :t');
  return { refunded, shared, returned, out: refunded + shared - returned, unfrozen };
}

const refund = (tradeNo: string, amount: number, extra: Record<string, unknown> = {}) =>
  pay.post<{ refund_no: string; status: string }>('/api/v1/pay/refund', {
    trade_no: tradeNo,
    refund_amount: amount,
    merchant_refund_no: `MR-${randomUUID()}`,
    ...extra,
  });

/** Waits until no refund of the order is processing and the order counts every one of them. */
async function settled(tradeNo: string): Promise<Record<string, unknown>> {
  return until(
    'refunds settled and counted',
    async () => {
      const open = await pay.count(
        "SELECT count(*) AS n FROM refunds WHERE trade_no = :t AND status = 'processing'",
        { t: tradeNo },
      );
      const out = await pay.count(
        "SELECT COALESCE(SUM(refund_amount), 0) AS n FROM refunds WHERE trade_no = :t AND status IN ('success', 'abnormal')",
        { t: tradeNo },
      );
      const order = await pay.query(tradeNo);
      const shareOpen = ['pending', 'processing'].includes(String(order.profit_sharing_status));
      return open === 0 && !shareOpen && Number(order.refunded_amount) === out ? order : undefined;
    },
    60_000,
  );
}

const sharingIs = (tradeNo: string, status: string) =>
  until(`profit sharing ${status}`, async () =>
    (await pay.query(tradeNo)).profit_sharing_status === status ? true : undefined,
  );

describe('a refund after the share', () => {
  test('when a shared order is refunded in full, then the share comes back from its merchant receiver first and the channel pays out what the buyer paid, once', async () => {
    const merchantId = await merchantWith([MERCHANT]);
    const order = await pay.paidOrder({ merchant_id: merchantId, profit_sharing_amount: 60 });
    await sharingIs(order.trade_no, 'finished');
    expect(await refund(order.trade_no, 100)).toMatchObject({ status: 200, code: 'success' });
    await pay.statusIs(order.trade_no, 'refunded');
    expect(await settled(order.trade_no)).toMatchObject({
      refunded_amount: 100,
      profit_shared_amount: 60,
      profit_returned_amount: 60,
      profit_sharing_status: 'returned',
    });
    expect(await atChannel(order.trade_no)).toEqual({
      refunded: 100,
      shared: 60,
      returned: 60,
      out: 100,
      unfrozen: 0,
    });
  });

  test("when the share went to a person's wallet, then a refund beyond the unshared remainder is 422 refund_amount_exceed naming the shared amount, and one within it is made", async () => {
    const merchantId = await merchantWith([PERSON]);
    const order = await pay.paidOrder({ merchant_id: merchantId, profit_sharing_amount: 60 });
    await sharingIs(order.trade_no, 'finished');
    const refused = await refund(order.trade_no, 41);
    expect(refused).toMatchObject({ status: 422, code: 'refund_amount_exceed' });
    expect(refused.message).toContain('60 of the order is shared to profit-sharing receivers');
    expect(await refund(order.trade_no, 40)).toMatchObject({ status: 200, code: 'success' });
    expect(await settled(order.trade_no)).toMatchObject({ refunded_amount: 40, profit_returned_amount: 0 });
    expect(await atChannel(order.trade_no)).toEqual({
      refunded: 40,
      shared: 60,
      returned: 0,
      out: 100,
      unfrozen: 0,
    });
  });

  test('when the channel refuses to give the share back, then the refund is refused, recorded failed, and nothing stays reserved', async () => {
    const merchantId = await merchantWith([{ ...MERCHANT, account: '1900000102[sandbox:refuse-return]' }]);
    const order = await pay.paidOrder({ merchant_id: merchantId, profit_sharing_amount: 60 });
    await sharingIs(order.trade_no, 'finished');
    const refused = await refund(order.trade_no, 100);
    expect(refused).toMatchObject({ status: 422, code: 'refund_amount_exceed' });
    expect(refused.message).toContain('could not be taken back');
    expect(
      await pay.count("SELECT count(*) AS n FROM refunds WHERE trade_no = :t AND status = 'failed'", {
        t: order.trade_no,
      }),
    ).toBe(1);
    // The 100 it reserved is free again: the unshared 40 can be refunded.
    expect(await refund(order.trade_no, 40)).toMatchObject({ status: 200, code: 'success' });
    await settled(order.trade_no);
    expect(await atChannel(order.trade_no)).toEqual({
      refunded: 40,
      shared: 60,
      returned: 0,
      out: 100,
      unfrozen: 0,
    });
  });
});

describe('a refund before the share', () => {
  test('when the order is refunded in full before the share is due, then nothing is shared and the frozen amount is released at the channel', async () => {
    const merchantId = await merchantWith([MERCHANT]);
    const order = await pay.paidOrder({ merchant_id: merchantId, profit_sharing_amount: 60 });
    expect(await refund(order.trade_no, 100)).toMatchObject({ status: 200, code: 'success' });
    await pay.statusIs(order.trade_no, 'refunded');
    await sharingIs(order.trade_no, 'cancelled');
    expect(await settled(order.trade_no)).toMatchObject({
      profit_shared_amount: 0,
      profit_sharing_status: 'cancelled',
    });
    expect(await atChannel(order.trade_no)).toEqual({
      refunded: 100,
      shared: 0,
      returned: 0,
      out: 100,
      unfrozen: 1,
    });
  });

  test('when part of the order is refunded before the share is due, then the share takes at most what is left', async () => {
    const merchantId = await merchantWith([MERCHANT]);
    const order = await pay.paidOrder({ merchant_id: merchantId, profit_sharing_amount: 60 });
    expect(await refund(order.trade_no, 70)).toMatchObject({ status: 200, code: 'success' });
    await sharingIs(order.trade_no, 'finished');
    expect(await settled(order.trade_no)).toMatchObject({ refunded_amount: 70, profit_shared_amount: 30 });
    expect(await atChannel(order.trade_no)).toEqual({
      refunded: 70,
      shared: 30,
      returned: 0,
      out: 100,
      unfrozen: 0,
    });
  });
});

describe('any interleaving', () => {
  test('when refunds of random amounts arrive before, during and after the share, for receivers that can and cannot give it back, then the channel never pays out more than the buyer paid, every refusal was refusable, and the last fen can be refunded', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          receivers: fc.subarray([MERCHANT, PERSON, { ...MERCHANT, account: '1900000103', weight: 2 }], {
            minLength: 1,
          }),
          share: fc.integer({ min: 1, max: 100 }),
          refunds: fc.array(
            fc.record({
              amount: fc.integer({ min: 1, max: 100 }),
              afterMs: fc.integer({ min: 0, max: 3_000 }),
            }),
            {
              minLength: 1,
              maxLength: 5,
            },
          ),
        }),
        async ({ receivers, share, refunds }) => {
          const merchantId = await merchantWith(receivers);
          const order = await pay.paidOrder({ merchant_id: merchantId, profit_sharing_amount: share });
          const answers: Answer[] = await Promise.all(
            refunds.map(async (r) => {
              await new Promise((done) => setTimeout(done, r.afterMs));
              return refund(order.trade_no, r.amount);
            }),
          );
          for (const a of answers)
            expect(['200 success', '422 refund_amount_exceed']).toContain(`${a.status} ${a.code}`);
          const final = await settled(order.trade_no);
          const channel = await atChannel(order.trade_no);
          // Money out never exceeds money in, and durapay's books say what the channel did.
          expect(channel.out).toBeLessThanOrEqual(100);
          expect(channel.returned).toBeLessThanOrEqual(channel.shared);
          expect(final).toMatchObject({
            refunded_amount: channel.refunded,
            profit_shared_amount: channel.shared,
            profit_returned_amount: channel.returned,
          });
          // What can still be refunded: all but what persons hold. One fen more is refused, the
          // rest is refunded in full (so nothing stayed reserved).
          const held = await pay.count(
            `SELECT COALESCE(SUM((r->>'amount')::bigint), 0) AS n
               FROM sandbox_profit_shares s, jsonb_array_elements(s.receivers) r
              WHERE s.trade_no = :t AND r->>'type' = 'PERSONAL_OPENID'`,
            { t: order.trade_no },
          );
          const rest = 100 - channel.refunded - held;
          expect(await refund(order.trade_no, rest + 1)).toMatchObject({
            status: 422,
            code: 'refund_amount_exceed',
          });
          if (rest > 0)
            expect(await refund(order.trade_no, rest)).toMatchObject({ status: 200, code: 'success' });
          await settled(order.trade_no);
          const after = await atChannel(order.trade_no);
          expect(after.refunded).toBe(100 - held);
          expect(after.out).toBeLessThanOrEqual(100);
        },
      ),
      { numRuns: 12 },
    );
  });
});

describe('abnormal refunds', () => {
  const abnormal = (body: Record<string, unknown>) =>
    pay.post<{ refund_no: string; status: string }>('/api/v1/pay/refund/abnormal', body);
  const bankCard = {
    method: 'user_bank_card',
    bank_type: 'ICBC_DEBIT',
    bank_account: '6222020200012345678',
    real_name: 'Zhang San',
  };

  test('when the channel ends a refund abnormal, then its amount stays counted, refund.abnormal is posted, and paid out to a bank card it succeeds', async () => {
    const order = await pay.paidOrder();
    const made = await refund(order.trade_no, 30, { reason: 'no card [sandbox:abnormal]' });
    expect(made).toMatchObject({ status: 200, code: 'success' });
    const refundNo = made.data!.refund_no;
    await until('abnormal', async () =>
      (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${refundNo}`)).data?.status === 'abnormal'
        ? true
        : undefined,
    );
    expect(await settled(order.trade_no)).toMatchObject({
      refunded_amount: 30,
      status: 'partially_refunded',
    });
    await until('refund.abnormal posted', async () =>
      pay.notificationsFor(order.trade_no, 'refund.abnormal').length === 1 ? true : undefined,
    );
    // Never refundable again: 71 is more than is left.
    expect(await refund(order.trade_no, 71)).toMatchObject({ status: 422, code: 'refund_amount_exceed' });

    const applied = await abnormal({ refund_no: refundNo, ...bankCard });
    expect(applied).toMatchObject({
      status: 200,
      code: 'success',
      data: { refund_no: refundNo, refund_amount: 30 },
    });
    await until('paid out', async () =>
      (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${refundNo}`)).data?.status === 'success'
        ? true
        : undefined,
    );
    await until('refund.succeeded posted', async () =>
      pay.notificationsFor(order.trade_no, 'refund.succeeded').length === 1 ? true : undefined,
    );
    expect(await settled(order.trade_no)).toMatchObject({ refunded_amount: 30 });
    expect(
      await pay.count(
        "SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t AND status = 'success'",
        {
          t: order.trade_no,
        },
      ),
    ).toBe(1);
    // The bank card reached the channel's refund, never durapay's logs.
    expect(
      stack.logs().some((l) => l.includes(bankCard.bank_account) || l.includes(bankCard.real_name)),
    ).toBe(false);
    // Paid out already: not abnormal any more.
    expect(await abnormal({ refund_no: refundNo, ...bankCard })).toMatchObject({
      status: 400,
      code: 'invalid_param',
    });
  });

  test.each([
    [
      { method: 'user_bank_card', bank_type: 'ICBC_DEBIT', real_name: 'Zhang San' },
      '"bank_account" is required',
    ],
    [{ method: 'merchant_bank_card', bank_account: '6222020200012345678' }, '"bank_account" is not allowed'],
    [{ method: 'cash' }, '"method" must be one of'],
    [{ bank_account: '6222020200012345678' }, '"method" is required'],
  ])('when the body is %j, then 400 invalid_param naming the field', async (body, message) => {
    const a = await abnormal({ refund_no: 'R1', ...body });
    expect(a).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(a.message).toContain(message);
  });

  test.each([
    ['bank_account', '6222x20200012345678'],
    ['bank_type', 'ICBC-DEBIT-6222020200012345678'],
  ])(
    'when %s does not match its format, then 400 invalid_param names the field and never quotes its value',
    async (field, value) => {
      const a = await abnormal({ refund_no: 'R1', ...bankCard, [field]: value });
      expect(a).toMatchObject({ status: 400, code: 'invalid_param' });
      expect(a.message).toContain(`"${field}"`);
      expect(a.message).not.toContain(value);
      expect(stack.logs().some((l) => l.includes(value))).toBe(false);
    },
  );

  test("when a refund is paid out to a bank card, then neither the bank account nor the name is in any payload of the refund's histories, even decoded with the payload keys", async () => {
    const card = {
      ...bankCard,
      bank_account: `62220${String(Date.now()).slice(-12)}`,
      real_name: `Li ${randomUUID().slice(0, 8)}`,
    };
    const order = await pay.paidOrder();
    const made = await refund(order.trade_no, 30, { reason: 'no card [sandbox:abnormal]' });
    const refundNo = made.data!.refund_no;
    const refundStatus = async () =>
      (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${refundNo}`)).data?.status;
    await until('abnormal', async () => ((await refundStatus()) === 'abnormal' ? true : undefined));
    expect(await abnormal({ refund_no: refundNo, ...card })).toMatchObject({ status: 200, code: 'success' });
    await until('paid out', async () => ((await refundStatus()) === 'success' ? true : undefined));

    // Every run of the refund's workflow, the one that took the payout among them.
    const workflowId = refundWorkflowId(refundNo);
    const histories = await until('the run that took the payout is listed', async () => {
      const runs: temporal.api.history.v1.IHistory[] = [];
      for await (const run of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
        runs.push(await stack.client.workflow.getHandle(workflowId, run.runId).fetchHistory());
      }
      const tookIt = runs.some((h) =>
        (h.events ?? []).some((e) => e.workflowExecutionUpdateAcceptedEventAttributes),
      );
      return tookIt ? runs : undefined;
    });
    const codec = new EncryptionCodec(stack.payloadKeys.keyring);
    const opened = (await Promise.all(histories.map(async (h) => codec.decode(payloadsOf(h))))).flatMap(
      (payloads) => payloads.map((p) => Buffer.from(p.data ?? []).toString('utf8')),
    );
    const text = opened.join('\n');
    // Decoded: the payout is there (the method), its personal data is not.
    expect(text).toContain('user_bank_card');
    expect(text).toContain(refundNo);
    expect([text.includes(card.bank_account), text.includes(card.real_name)]).toEqual([false, false]);
  });

  test('when the payout activity is handed a payee sealed for its refund, then the channel takes it; a payee sealed for another refund does not open', async () => {
    const abnormalRefund = async () => {
      const order = await pay.paidOrder();
      const made = await refund(order.trade_no, 30, { reason: 'no card [sandbox:abnormal]' });
      const refundNo = made.data!.refund_no;
      await until('abnormal', async () =>
        (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${refundNo}`)).data?.status ===
        'abnormal'
          ? true
          : undefined,
      );
      return refundNo;
    };
    const { applyChannelAbnormalRefund } = createActivities(stack.activityDeps);
    const [older, other] = [await abnormalRefund(), await abnormalRefund()];
    const sealedForOlder = sealAbnormalPayee(stack.payloadKeys.keyring, older, {
      bankAccount: bankCard.bank_account,
      realName: bankCard.real_name,
    });
    // The sandbox refuses a user_bank_card payout that lacks the account or the name.
    expect(
      await applyChannelAbnormalRefund({
        channelCode: 'sandbox',
        refundNo: older,
        method: 'user_bank_card',
        bankType: bankCard.bank_type,
        sealedPayee: sealedForOlder,
      }),
    ).toMatchObject({ status: 'processing' });
    await expect(
      applyChannelAbnormalRefund({
        channelCode: 'sandbox',
        refundNo: other,
        method: 'user_bank_card',
        bankType: bankCard.bank_type,
        sealedPayee: sealedForOlder,
      }),
    ).rejects.toThrow(`the payee of refund ${other} does not open`);
  });

  test('when an operator asks for the payout while refund.abnormal is still being delivered, then the refund is paid out', async () => {
    const slow = await new Receiver().start();
    try {
      const order = await pay.paidOrder({ notify_url: slow.url });
      await until('payment.succeeded delivered', async () => (slow.received.length > 0 ? true : undefined));
      // From now on the merchant's endpoint holds its answer: the refund's workflow is still
      // announcing refund.abnormal when the operator asks.
      slow.hold();
      const made = await refund(order.trade_no, 30, { reason: 'no card [sandbox:abnormal]' });
      const refundNo = made.data!.refund_no;
      await until('refund.abnormal being delivered', async () =>
        slow.received.some((r) => JSON.parse(r.body).type === 'refund.abnormal') ? true : undefined,
      );
      expect((await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${refundNo}`)).data?.status).toBe(
        'abnormal',
      );
      const applied = await abnormal({ refund_no: refundNo, ...bankCard });
      slow.release();
      expect(applied).toMatchObject({ status: 200, code: 'success', data: { refund_no: refundNo } });
      await until('paid out', async () =>
        (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${refundNo}`)).data?.status === 'success'
          ? true
          : undefined,
      );
      expect(await settled(order.trade_no)).toMatchObject({ refunded_amount: 30 });
    } finally {
      await slow.stop();
    }
  });

  test('when the refund is unknown, then 422 refund_not_found; when it is not abnormal, then 400 invalid_param', async () => {
    expect(await abnormal({ refund_no: 'R-none', method: 'merchant_bank_card' })).toMatchObject({
      status: 422,
      code: 'refund_not_found',
    });
    const order = await pay.paidOrder();
    const made = await refund(order.trade_no, 10);
    const a = await abnormal({ refund_no: made.data!.refund_no, method: 'merchant_bank_card' });
    expect(a).toMatchObject({ status: 400, code: 'invalid_param' });
    expect(a.message).toContain('not abnormal');
  });
});
