/**
 * A merchant_refund_no names one refund of one app (SPEC §3.5), across all of its orders: the
 * same number sent for two orders at once answers each decisively within the request deadline,
 * never reserves an amount for a refund that was not made, and never reaches the channel twice.
 * Counted at the channel (the sandbox's refunds), not only in the answers.
 */
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { startTestStack, type TestStack } from '../support/harness';
import { inRounds, paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';

jest.setTimeout(300_000);

const ROUNDS = 12;
const USED_ELSEWHERE = 'merchant_refund_no already used for another order';

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 100 });
  app = await stack.createApp(['payments']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

/** Refunds the channel was asked to make for an order, and their total. */
const atChannel = async (tradeNo: string) => ({
  refunds: await pay.count('SELECT count(*) AS n FROM sandbox_refunds WHERE trade_no = :t', { t: tradeNo }),
  amount: await pay.count(
    "SELECT COALESCE(SUM(amount), 0) AS n FROM sandbox_refunds WHERE trade_no = :t AND status <> 'failed'",
    { t: tradeNo },
  ),
});

/** Refunds every refundable fen of the order: succeeds only if nothing was left reserved. */
async function refundsInFull(tradeNo: string): Promise<string> {
  const { amount, refunded_amount } = await pay.query(tradeNo);
  const rest = Number(amount) - Number(refunded_amount);
  if (rest === 0) return 'nothing left';
  const a = await pay.post('/api/v1/pay/refund', { trade_no: tradeNo, refund_amount: rest });
  return `${a.status} ${a.code}`;
}

describe('a merchant_refund_no across orders', () => {
  test('when one was used for an order, then the same number for another order is 400 invalid_param, and the first refund is answered again', async () => {
    const a = await pay.paidOrder();
    const b = await pay.paidOrder();
    const number = `MR-${randomUUID()}`;
    const first = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
      trade_no: a.trade_no,
      refund_amount: 10,
      merchant_refund_no: number,
    });
    expect(first).toMatchObject({ status: 200, code: 'success' });
    const other = await pay.post('/api/v1/pay/refund', {
      trade_no: b.trade_no,
      refund_amount: 10,
      merchant_refund_no: number,
    });
    expect(other).toMatchObject({ status: 400, code: 'invalid_param', message: USED_ELSEWHERE });
    const again = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
      trade_no: a.trade_no,
      refund_amount: 10,
      merchant_refund_no: number,
    });
    expect(again.data?.refund_no).toBe(first.data?.refund_no);
    expect(await atChannel(b.trade_no)).toEqual({ refunds: 0, amount: 0 });
  });

  test(`when the same number is sent for two orders at once, ${ROUNDS} rounds, then one refund is made, the other is refused at once, and neither order keeps anything reserved`, async () => {
    const rounds = await inRounds(ROUNDS, 3, async () => {
      const [a, b] = await Promise.all([pay.paidOrder(), pay.paidOrder()]);
      const number = `MR-${randomUUID()}`;
      const answers = await Promise.all(
        [a, b].map((o) =>
          pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
            trade_no: o.trade_no,
            refund_amount: 10,
            merchant_refund_no: number,
          }),
        ),
      );
      const winner = answers.findIndex((x) => x.code === 'success');
      const [made, lost] = winner === 0 ? [a, b] : [b, a];
      // The made refund settles; then both orders give back every fen they have left.
      await until('the refund settled', async () =>
        Number((await pay.query(made.trade_no)).refunded_amount) === 10 ? true : undefined,
      );
      return {
        answers: answers.map((x) => `${x.status} ${x.code}`).sort(),
        refused: answers.find((x) => x.code !== 'success')?.message,
        lostAtChannel: await atChannel(lost.trade_no),
        madeAtChannel: await atChannel(made.trade_no),
        lostRefundsInFull: await refundsInFull(lost.trade_no),
        madeRefundsRest: await refundsInFull(made.trade_no),
      };
    });
    expect(rounds).toEqual(
      Array.from({ length: ROUNDS }, () => ({
        answers: ['200 success', '400 invalid_param'],
        refused: USED_ELSEWHERE,
        lostAtChannel: { refunds: 0, amount: 0 },
        madeAtChannel: { refunds: 1, amount: 10 },
        lostRefundsInFull: '200 success',
        madeRefundsRest: '200 success',
      })),
    );
  });

  test('when refunds with numbers from a small pool interleave across three orders, then each number reaches the channel for one order only and every order can be refunded to its last fen', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            order: fc.integer({ min: 0, max: 2 }),
            number: fc.integer({ min: 0, max: 3 }),
            amount: fc.integer({ min: 1, max: 40 }),
          }),
          { minLength: 2, maxLength: 8 },
        ),
        async (requests) => {
          const orders = await Promise.all([0, 1, 2].map(() => pay.paidOrder()));
          const pool = [0, 1, 2, 3].map(() => `MR-${randomUUID()}`);
          const answers = await Promise.all(
            requests.map((r) =>
              pay.post<{ refund_no: string; trade_no: string }>('/api/v1/pay/refund', {
                trade_no: orders[r.order]!.trade_no,
                refund_amount: r.amount,
                merchant_refund_no: pool[r.number],
              }),
            ),
          );
          // Every answer is decisive: made, refused as used elsewhere, or beyond the refundable.
          for (const a of answers) {
            expect(['200 success', '400 invalid_param', '422 refund_amount_exceed']).toContain(
              `${a.status} ${a.code}`,
            );
          }
          // At the channel: one order per number, and each made refund settles.
          const rows = await Promise.all(
            orders.map((o) =>
              stack.database.db.sequelize.query<{ refund_no: string }>(
                'SELECT refund_no FROM sandbox_refunds WHERE trade_no = :t',
                { replacements: { t: o.trade_no }, type: QueryTypes.SELECT },
              ),
            ),
          );
          const byNumber = await pay.count(
            `SELECT count(*) AS n FROM (SELECT merchant_refund_no FROM refunds
               WHERE app_id = :app AND merchant_refund_no IN (:pool) AND status <> 'failed'
               GROUP BY merchant_refund_no HAVING count(DISTINCT trade_no) > 1) twice`,
            { app: app.app_id, pool },
          );
          expect(byNumber).toBe(0);
          expect(rows.flat().length).toBe(
            await pay.count(
              "SELECT count(*) AS n FROM refunds WHERE app_id = :app AND merchant_refund_no IN (:pool) AND status <> 'failed'",
              { app: app.app_id, pool },
            ),
          );
          // Nothing stays reserved: each order refunds to its last fen once its refunds settled.
          for (const o of orders) {
            await until('refunds settled and counted on the order', async () => {
              const open = await pay.count(
                "SELECT count(*) AS n FROM refunds WHERE trade_no = :t AND status = 'processing'",
                { t: o.trade_no },
              );
              const made = await pay.count(
                "SELECT COALESCE(SUM(refund_amount), 0) AS n FROM refunds WHERE trade_no = :t AND status = 'success'",
                { t: o.trade_no },
              );
              const counted = Number((await pay.query(o.trade_no)).refunded_amount);
              return open === 0 && counted === made ? true : undefined;
            });
            expect(['200 success', 'nothing left']).toContain(await refundsInFull(o.trade_no));
            const { amount } = await atChannel(o.trade_no);
            expect(amount).toBe(100);
          }
        },
      ),
      { numRuns: 8 },
    );
  });
});
