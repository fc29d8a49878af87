/**
 * When an update is sent again (platform/temporal-updates.ts): only when the server says it was
 * not applied. An update-with-start whose run completed before it saw the update (NOT_FOUND,
 * "workflow execution already completed") is sent again, starting the next run (SPEC §7); a
 * plain update to a completed workflow is not (its caller reads how the workflow ended).
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { deliverUpdate } from '../../src/platform/temporal-updates';
import { createLogger } from '../../src/platform/logger';

const log = createLogger({ level: 'error' });
/** The client as deliverUpdate uses it: only its deadline wrapper. */
const client = { withDeadline: <T>(_deadline: number, fn: () => Promise<T>) => fn() } as unknown as Client;

/** A call that fails with `err` the first time and answers `ok` after. */
function failingOnce(err: Error) {
  let calls = 0;
  const fn = async () => {
    calls += 1;
    if (calls === 1) throw err;
    return 'ok';
  };
  return { fn, calls: () => calls };
}

const completed = () =>
  new WorkflowNotFoundError('workflow execution already completed', 'order:app:M-1', undefined);

test('when an update-with-start finds its run completed, then it is sent again and answered by the next run', async () => {
  const call = failingOnce(completed());
  const answer = await deliverUpdate(call.fn, {
    client,
    deadline: Date.now() + 5_000,
    log,
    withStart: true,
  });
  expect([answer, call.calls()]).toEqual(['ok', 2]);
});

test('when a plain update finds its workflow completed, then the caller is told, not sent again', async () => {
  const call = failingOnce(completed());
  await expect(deliverUpdate(call.fn, { client, deadline: Date.now() + 5_000, log })).rejects.toBeInstanceOf(
    WorkflowNotFoundError,
  );
  expect(call.calls()).toBe(1);
});

test('when the server refuses an update as busy, then it is sent again; a business failure is not', async () => {
  const busy = Object.assign(new Error('too many in-flight updates'), { code: 8 });
  const retried = failingOnce(busy);
  expect(await deliverUpdate(retried.fn, { client, deadline: Date.now() + 5_000, log })).toBe('ok');
  const refused = failingOnce(new Error('refund amount exceeds the refundable amount'));
  await expect(
    deliverUpdate(refused.fn, { client, deadline: Date.now() + 5_000, log, withStart: true }),
  ).rejects.toThrow('exceeds');
  expect(refused.calls()).toBe(1);
});

test("when the server rejects an update its worker did not take (UnprocessedUpdate), then it is sent again; a workflow's own rejection is not", async () => {
  // What the server answers for an update it sent to a workflow task that completed without it
  // (temporal server, update/errors_failures.go): never accepted, so never applied.
  const unprocessed = new WorkflowUpdateFailedError(
    'Workflow Update failed',
    ApplicationFailure.create({
      message:
        "Workflow Update is rejected because it wasn't processed by worker. Probably, Workflow Update is not supported by the worker.",
      type: 'UnprocessedUpdate',
      nonRetryable: true,
    }),
  );
  const retried = failingOnce(unprocessed);
  expect(
    await deliverUpdate(retried.fn, { client, deadline: Date.now() + 5_000, log, withStart: true }),
  ).toBe('ok');
  expect(retried.calls()).toBe(2);
  const rejected = failingOnce(
    new WorkflowUpdateFailedError(
      'Workflow Update failed',
      ApplicationFailure.nonRetryable('order closed', 'order_closed'),
    ),
  );
  await expect(
    deliverUpdate(rejected.fn, { client, deadline: Date.now() + 5_000, log }),
  ).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
  expect(rejected.calls()).toBe(1);
});
