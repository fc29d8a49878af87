/**
 * The daily reconciliation (SPEC §10) is a Temporal Schedule the worker makes sure of at start,
 * at RECONCILIATION_AT in RECONCILIATION_TIME_ZONE: its run starts a reconciliation of the day
 * before for every account that took orders then.
 */
import { QueryTypes } from 'sequelize';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { addDays, billDateOf } from '../../src/modules/reconciliation/rules';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { Receiver } from '../support/receiver';
import { until } from '../support/wait';
import { spawnWorker, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(180_000);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack({ timeScale: 0.01 });
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

test("when the worker starts, then the daily schedule is set to the configured time, and its run reconciles yesterday's accounts", async () => {
  // An order paid yesterday (China time), on both sides.
  const merchantId = await pay.merchant();
  const paid = await pay.paidOrder({ merchant_id: merchantId, amount: 310 });
  await stack.database.db.sequelize.query(
    `UPDATE orders SET pay_time = pay_time - interval '1 day', created_at = created_at - interval '1 day'
      WHERE trade_no = :t`,
    { replacements: { t: paid.trade_no } },
  );
  await stack.database.db.sequelize.query(
    `UPDATE sandbox_orders SET paid_at = paid_at - interval '1 day', created_at = created_at - interval '1 day'
      WHERE trade_no = :t`,
    { replacements: { t: paid.trade_no } },
  );
  const [{ pay_time: payTime }] = (await stack.database.db.sequelize.query<{ pay_time: Date }>(
    'SELECT pay_time FROM orders WHERE trade_no = :t',
    { replacements: { t: paid.trade_no }, type: QueryTypes.SELECT },
  )) as [{ pay_time: Date }];
  const yesterday = addDays(billDateOf(new Date()), -1);
  // (Run within a minute of midnight in China, the order may still be today's: say so.)
  expect(billDateOf(new Date(payTime))).toBe(yesterday);

  const taskQueue = uniqueName('tq-reconcile');
  const scheduleId = `reconciliation-daily:${taskQueue}`;
  const worker: WorkerProcess = spawnWorker(taskQueue, {
    DATABASE_URL: stack.database.url,
    DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
    DURAPAY_PAYLOAD_KEYS: stack.payloadKeys.env,
    PUBLIC_BASE_URL: stack.baseUrl,
    SANDBOX_SECRET: stack.sandboxSecret,
    RECONCILIATION_AT: '09:15',
    RECONCILIATION_TIME_ZONE: 'Asia/Shanghai',
  });
  const schedule = stack.client.schedule.getHandle(scheduleId);
  try {
    await worker.ready;
    const described = await schedule.describe();
    expect(described.spec.calendars).toMatchObject([{ hour: [{ start: 9 }], minute: [{ start: 15 }] }]);
    expect(described.spec.timezone).toBe('Asia/Shanghai');
    expect(described.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'reconciliationDayWorkflow',
      taskQueue,
    });
    expect(described.policies.overlap).toBe('SKIP');

    await schedule.trigger();
    const started = await until('the schedule started its workflow', async () => {
      const info = (await schedule.describe()).info;
      return [...info.runningActions, ...info.recentActions.map((a) => a.action)][0];
    });
    const runs = await stack.client.workflow
      .getHandle(started.workflow.workflowId, started.workflow.firstExecutionRunId)
      .result();
    const runId = `sandbox:S-${merchantId}:${yesterday}`;
    expect(runs).toContain(runId);
    expect(await stack.client.workflow.getHandle(`reconciliation:${runId}`).result()).toMatchObject({
      status: 'completed',
      summary: { rows: 1, matched: 1 },
    });
    const listed = await pay.get<{ list: { run_id: string; started_by: string }[] }>(
      `/api/v1/reconciliation/runs?bill_date=${yesterday}`,
    );
    expect(listed.data!.list.find((r) => r.run_id === runId)).toMatchObject({ started_by: 'schedule' });
  } finally {
    await worker.stop();
    await schedule.delete().catch(() => undefined);
  }
});
