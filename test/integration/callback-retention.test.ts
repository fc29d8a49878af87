/**
 * Raw callbacks are kept for a retention (SPEC §9: 90 days by default), then deleted by a
 * Temporal Schedule that the worker creates at start, once: a restarted worker finds it and
 * keeps it (paused or not, with its history), and a changed retention reaches it. Its workflow
 * deletes in bounded batches and the worker counts what it deleted.
 */
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { freePort } from '../../src/platform/net';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { until } from '../support/wait';
import { spawnWorker, type WorkerProcess } from '../support/worker-process';

jest.setTimeout(120_000);

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const forged = (marker: string) =>
  fetch(`${stack.baseUrl}/api/v1/notify/payment/sandbox`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'sandbox-signature': `t=${Math.floor(Date.now() / 1000)},v1=00`,
    },
    body: JSON.stringify({ event_id: randomUUID(), type: 'payment.paid', marker }),
  });

async function rowsMarked(marker: string): Promise<number> {
  const [row] = await stack.database.db.sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM channel_callbacks WHERE raw_body LIKE :like',
    { replacements: { like: `%${marker}%` }, type: QueryTypes.SELECT },
  );
  return Number(row!.n);
}

/** The value of one series in a Prometheus exposition; 0 when it is not there. */
function value(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(' ').pop()) : 0;
}

test('when raw callbacks are older than the retention, then the worker’s schedule deletes them in batches, keeps the rest, counts them, and survives a restart', async () => {
  const taskQueue = uniqueName('tq-retention');
  const scheduleId = `callback-retention:${taskQueue}`;
  const metricsPort = await freePort();
  const workerEnv = (retentionDays: number, extra: Record<string, string> = {}) => ({
    DATABASE_URL: stack.database.url,
    DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
    PUBLIC_BASE_URL: stack.baseUrl,
    SANDBOX_SECRET: stack.sandboxSecret,
    CALLBACK_RETENTION_DAYS: String(retentionDays),
    CALLBACK_RETENTION_BATCH: '10',
    ...extra,
  });

  // 25 callbacks 31 days old, 5 of 29 days, 5 of today; the retention is 30 days.
  const old = randomUUID();
  const young = randomUUID();
  const today = randomUUID();
  for (const [marker, n] of [
    [old, 25],
    [young, 5],
    [today, 5],
  ] as const) {
    for (let i = 0; i < n; i++) expect(await (await forged(marker)).text()).toBe('fail');
  }
  const age = async (marker: string, days: number) =>
    stack.database.db.sequelize.query(
      `UPDATE channel_callbacks SET received_at = now() - make_interval(days => :days) WHERE raw_body LIKE :like`,
      { replacements: { days, like: `%${marker}%` } },
    );
  await age(old, 31);
  await age(young, 29);
  expect([await rowsMarked(old), await rowsMarked(young), await rowsMarked(today)]).toEqual([25, 5, 5]);

  let worker: WorkerProcess | undefined = spawnWorker(
    taskQueue,
    workerEnv(30, { WORKER_METRICS_PORT: String(metricsPort) }),
  );
  const schedule = stack.client.schedule.getHandle(scheduleId);
  try {
    await worker.ready;
    const described = await schedule.describe();
    expect(described.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'callbackRetentionWorkflow',
      taskQueue,
      args: [{ retentionDays: 30, batchSize: 10 }],
    });
    // One purge at a time: a run still going when the next is due is not joined by another.
    expect(described.policies.overlap).toBe('SKIP');
    expect(described.state.paused).toBe(false);

    await schedule.trigger();
    const started = await until('the schedule started its workflow', async () => {
      const info = (await schedule.describe()).info;
      return [...info.runningActions, ...info.recentActions.map((a) => a.action)][0];
    });
    const result = await stack.client.workflow
      .getHandle(started.workflow.workflowId, started.workflow.firstExecutionRunId)
      .result();
    // Batches of at most 10: 10, 10 and the last 5.
    expect(result).toMatchObject({ deleted: 25, batches: 3 });
    expect([await rowsMarked(old), await rowsMarked(young), await rowsMarked(today)]).toEqual([0, 5, 5]);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(value(metrics, 'durapay_channel_callbacks_deleted_total')).toBe(25);

    // An operator pauses it; the worker restarts with a longer retention.
    await schedule.pause('held by the operator');
    await worker.stop();
    worker = spawnWorker(taskQueue, workerEnv(60));
    await worker.ready;
    const again = await schedule.describe();
    expect(again.action).toMatchObject({ args: [{ retentionDays: 60, batchSize: 10 }] });
    // The same schedule, not a new one: its pause and the run it made are still there.
    expect(again.state.paused).toBe(true);
    expect(again.info.recentActions.map((a) => a.action.workflow.workflowId)).toContain(
      started.workflow.workflowId,
    );
  } finally {
    await worker?.stop();
    await schedule.delete().catch(() => undefined);
  }
});
