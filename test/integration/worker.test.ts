import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { QueryTypes } from 'sequelize';
import { diagnosticWorkflowId, type DiagnosticResult } from '../../src/diagnostics/messages';
import { startTestStack, uniqueName, type TestStack } from '../support/harness';
import { spawnWorker } from '../support/worker-process';

jest.setTimeout(120_000);

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function steps(runId: string) {
  return stack.database.db.sequelize.query<{ step: number; workflow_id: string }>(
    'SELECT step, workflow_id FROM diagnostic_steps WHERE run_id = :runId ORDER BY step',
    { replacements: { runId }, type: QueryTypes.SELECT },
  );
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('diagnostic workflow on the real worker', () => {
  test('when the workflow runs, then its activity writes each step to Postgres once', async () => {
    const runId = randomUUID();
    const result: DiagnosticResult = await stack.client.workflow.execute('diagnosticWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: diagnosticWorkflowId(runId),
      args: [{ runId, pauseMs: 50 }],
    });
    expect(result).toEqual({ runId, steps: [1, 2], insertedSteps: [1, 2] });
    expect(await steps(runId)).toEqual([
      { step: 1, workflow_id: diagnosticWorkflowId(runId) },
      { step: 2, workflow_id: diagnosticWorkflowId(runId) },
    ]);
  });

  test('when the worker process is killed mid-workflow and a new one starts, then the workflow completes exactly once', async () => {
    const taskQueue = uniqueName('tq-kill');
    const first = spawnWorker(taskQueue, { DATABASE_URL: stack.database.url });
    await first.ready;

    const runId = randomUUID();
    const handle = await stack.client.workflow.start('diagnosticWorkflow', {
      taskQueue,
      workflowId: diagnosticWorkflowId(runId),
      args: [{ runId, pauseMs: 3_000 }],
    });
    // Step 1 is written and its activity's completion recorded (a kill between the two would
    // rightly repeat the activity, whose insert then finds the row); the workflow now sleeps on a
    // durable timer. Kill the worker outright.
    const EventType = temporal.api.enums.v1.EventType;
    await waitFor('step 1 recorded', async () => {
      const { events } = await handle.fetchHistory();
      return events!.some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED) ? true : undefined;
    });
    expect((await steps(runId)).map((r) => r.step)).toEqual([1]);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = spawnWorker(taskQueue, { DATABASE_URL: stack.database.url });
    try {
      await second.ready;
      const result: DiagnosticResult = await handle.result();
      expect(result.insertedSteps).toEqual([1, 2]);
      expect((await steps(runId)).map((r) => r.step)).toEqual([1, 2]);

      const { events } = await handle.fetchHistory();
      const count = (type: number) => events!.filter((e) => e.eventType === type).length;
      expect(count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)).toBe(2);
      expect(count(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)).toBe(2);
      expect(count(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)).toBe(1);
      // Workflow tasks were picked up by two different worker processes.
      const identities = new Set(
        events!
          .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)
          .map((e) => e.workflowTaskStartedEventAttributes?.identity),
      );
      expect(identities.size).toBe(2);
    } finally {
      await second.stop();
    }
  });
});
