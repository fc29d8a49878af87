/**
 * What the order workflow answers a client with when an activity failed: the SPEC code the
 * activity gave its failure (channels/errors.ts made it), or the fallback when it gave none; a
 * close failure recorded under its older label answers as today's map labels it.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  RetryState,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { closeFailure, failureOf } from '../../src/modules/orders/rules';

const failedActivity = (cause: Error) =>
  new ActivityFailure(
    'activity failed',
    'closeChannelPayment',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    '',
    cause,
  );

test('when an activity failed with a SPEC code, then that code and its message are the answer', () => {
  const err = failedActivity(ApplicationFailure.nonRetryable('refused: ORDER_PAID', 'channel_refund_fail'));
  expect(failureOf(err, 'channel_timeout')).toEqual({
    code: 'channel_refund_fail',
    message: 'refused: ORDER_PAID',
  });
});

test('when the failure is not wrapped in an activity failure, then its code is read all the same', () => {
  expect(failureOf(ApplicationFailure.nonRetryable('no', 'channel_create_fail'), 'channel_timeout')).toEqual({
    code: 'channel_create_fail',
    message: 'no',
  });
});

test.each([
  [
    'the activity timed out',
    failedActivity(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE)),
  ],
  [
    'an application failure carries no type',
    failedActivity(ApplicationFailure.create({ message: 'typeless' })),
  ],
  ['something that is not an error was thrown', 'a string'],
])('when %s, then the fallback code answers', (_what, err) => {
  const f = failureOf(err, 'internal_system');
  expect(f.code).toBe('internal_system');
  expect(typeof f.message).toBe('string');
});

test('when a close failed under the older channel_create_fail label, then it answers channel_timeout', () => {
  expect(closeFailure({ code: 'channel_create_fail', message: 'refused' })).toEqual({
    code: 'channel_timeout',
    message: 'refused',
  });
});

test.each(['channel_timeout', 'channel_not_support'] as const)(
  'when a close failed with %s, then that code answers as it is',
  (code) => {
    expect(closeFailure({ code, message: 'm' })).toEqual({ code, message: 'm' });
  },
);
