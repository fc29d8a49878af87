/**
 * The one reader of failed workflow calls (src/platform/temporal-failures.ts), with each module's
 * own reading passed in: a business failure is handed on only when its code is the module's, with
 * the module's message; a run that has ended is no answer only where the module says so
 * (transfers, whose row then says where it stands); anything else is thrown as it is.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { toAppError } from '../../src/modules/orders/outcomes';
import { CANCEL_FAILURES, createFailures } from '../../src/modules/transfers/outcomes';
import { AppError } from '../../src/platform/errors';
import { failureType, workflowCallError } from '../../src/platform/temporal-failures';

const updateFailed = (message: string, code: string) =>
  new WorkflowUpdateFailedError('Workflow Update failed', ApplicationFailure.nonRetryable(message, code));

test("when a transfer's create is refused by its channel, then channel_transfer_fail names the transfer", () => {
  const answer = workflowCallError(
    updateFailed('payee unknown', 'channel_transfer_fail'),
    createFailures('T1'),
  );
  expect(answer).toBeInstanceOf(AppError);
  expect({ code: (answer as AppError).code, message: (answer as AppError).message }).toEqual({
    code: 'channel_transfer_fail',
    message: 'transfer T1: payee unknown',
  });
});

test("when a transfer's call fails with a SPEC code that is not its own, then it is thrown as it is", () => {
  const create = updateFailed('no', 'channel_not_support');
  expect(() => workflowCallError(create, createFailures('T1'))).toThrow(create);
  const cancel = updateFailed('bad', 'invalid_param');
  expect(() => workflowCallError(cancel, CANCEL_FAILURES)).toThrow(cancel);
  expect(
    (workflowCallError(updateFailed('too late', 'channel_not_support'), CANCEL_FAILURES) as AppError).code,
  ).toBe('channel_not_support');
});

test("when the workflow's run has ended, then a transfer reads it as no answer and an order throws it", () => {
  const ended = new WorkflowNotFoundError('workflow not found', 'transfer:T1', undefined);
  expect(workflowCallError(ended, CANCEL_FAILURES)).toBe('unanswered');
  expect(() => toAppError(ended, 'close')).toThrow(ended);
});

test('when an update failed with a business failure, then its type is read through the update error', () => {
  expect(failureType(updateFailed('ended', 'order_run_ended'))).toBe('order_run_ended');
  expect(failureType(new Error('x'))).toBeUndefined();
});
