/**
 * A database write that can never succeed (a constraint, a check, a type) fails its step at once
 * (activities/permanent-database-errors.ts); what the workflow waiting for it does next keeps
 * money and state consistent. The refusal comes through the real path: a CHECK constraint, added to this file's
 * own database, refuses one refund's or one application's write and nothing else.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { refundWorkflowId } from '../../src/modules/refunds/messages';
import { startTestStack, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';

jest.setTimeout(120_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

// At 1/100 of real time: refunds settle within a second, audits are polled every few hundred ms.
beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01, sandboxRefundDelayMs: 100 });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

/** Adds a CHECK constraint for the length of `run`, then drops it. */
async function withCheck<T>(table: string, check: string, run: () => Promise<T>): Promise<T> {
  const name = `refuses_${randomUUID().replaceAll('-', '')}`;
  const query = (sql: string) => stack.database.db.sequelize.query(sql);
  await query(`ALTER TABLE ${table} ADD CONSTRAINT ${name} CHECK (${check})`);
  try {
    return await run();
  } finally {
    await query(`ALTER TABLE ${table} DROP CONSTRAINT ${name}`);
  }
}

/** Whether the worker logged that the database refused `activity` for good, with a check violation. */
const refusalLogged = (activity: string) =>
  stack
    .logs()
    .some(
      (l) => l.includes('failed for good') && l.includes(`"activity":"${activity}"`) && l.includes('23514'),
    );

describe('a refund whose outcome the database refuses to record', () => {
  test.each([
    ['succeeds', '', 'success', 'refund.succeeded', { refunded_amount: 30, status: 'partially_refunded' }],
    ['fails', ' [sandbox:fail]', 'failed', 'refund.failed', { refunded_amount: 0, status: 'paid' }],
  ])(
    'when the refund %s at the channel, then its order still takes the outcome in, nothing stays reserved, it is announced, and the refusal is logged',
    async (_case, marker, outcome, event, order) => {
      const merchantRefundNo = `MR-refused-${randomUUID()}`;
      // Refuses to move this refund out of `processing`, as a CHECK the write breaks would.
      await withCheck(
        'refunds',
        `merchant_refund_no IS DISTINCT FROM '${merchantRefundNo}' OR status = 'processing'`,
        async () => {
          const paid = await pay.paidOrder();
          const made = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
            trade_no: paid.trade_no,
            refund_amount: 30,
            merchant_refund_no: merchantRefundNo,
            reason: `refused write${marker}`,
          });
          expect(made).toMatchObject({ status: 200, code: 'success' });
          const refundNo = made.data!.refund_no;

          // The refund's workflow ends with the channel's outcome instead of failing on the write.
          const handle = stack.client.workflow.getHandle(refundWorkflowId(refundNo));
          await until('the refund is followed', async () => handle.describe().catch(() => undefined));
          expect(await handle.result()).toBe(outcome);
          await until(`the order shows ${JSON.stringify(order)}`, async () => {
            const q = await pay.query(paid.trade_no);
            return q.refunded_amount === order.refunded_amount && q.status === order.status
              ? true
              : undefined;
          });
          const announced = await until(`${event} posted`, async () => {
            const posted = pay.notificationsFor(paid.trade_no, event);
            return posted.length > 0 ? posted : undefined;
          });
          expect(announced).toHaveLength(1);
          expect(JSON.parse(announced[0]!.body).data).toMatchObject({ refund_no: refundNo, status: outcome });
          // The row is as the database left it, and an operator is told which write it refused.
          const [row] = await stack.database.db.sequelize.query<{ status: string }>(
            'SELECT status FROM refunds WHERE refund_no = :refundNo',
            { replacements: { refundNo }, type: QueryTypes.SELECT },
          );
          expect(row?.status).toBe('processing');
          expect(refusalLogged('recordRefundSettled')).toBe(true);

          // Nothing reserved: the rest of the order refunds in full.
          const rest = 100 - order.refunded_amount;
          expect(
            await pay.post('/api/v1/pay/refund', { trade_no: paid.trade_no, refund_amount: rest }),
          ).toMatchObject({
            status: 200,
            code: 'success',
          });
          await pay.statusIs(paid.trade_no, 'refunded');
          expect((await pay.query(paid.trade_no)).refunded_amount).toBe(100);
        },
      );
    },
  );
});

describe('an application whose acceptance the database refuses to record', () => {
  test('when the channel accepts it, then the client is told it was submitted, the audit is followed, and its later answers are recorded', async () => {
    const merchantId = `m-${randomUUID().slice(0, 8)}`;
    const post = (path: string, json: unknown) => signedFetch(stack.baseUrl, app, 'POST', path, { json });
    expect(
      (
        await envelope(
          await post('/api/v1/merchant', { merchant_id: merchantId, merchant_name: 'Tea House' }),
        )
      ).code,
    ).toBe('success');
    // Refuses the channel's first answer (submitted, with its application number), and no other.
    const applied = await withCheck(
      'merchant_applications',
      `merchant_id <> '${merchantId}' OR status <> 'submitted' OR channel_application_no IS NULL`,
      async () => {
        const answer = await envelope<{ application_id: string }>(
          await post(`/api/v1/merchant/${merchantId}/apply`, { channel_code: 'sandbox' }),
        );
        expect(refusalLogged('recordApplicationState')).toBe(true);
        return answer;
      },
    );
    expect(applied).toMatchObject({ code: 'success', data: { application_id: expect.any(String) } });
    const audit = await until('the application finished', async () => {
      const a = (
        await envelope<{ status: string }>(
          await signedFetch(stack.baseUrl, app, 'GET', `/api/v1/merchant/${merchantId}/audit`),
        )
      ).data;
      return a?.status === 'finished' ? a : undefined;
    });
    expect(audit).toMatchObject({ application_id: applied.data!.application_id });
    const merchant = await envelope<{ status: string }>(
      await signedFetch(stack.baseUrl, app, 'GET', `/api/v1/merchant/${merchantId}`),
    );
    expect(merchant.data?.status).toBe('active');
  });
});
