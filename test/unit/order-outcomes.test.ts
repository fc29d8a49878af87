/**
 * What a client hears when the order's workflow update does not come back as an answer: a
 * business failure is its SPEC code; an update the server still refused as transient when the
 * request deadline came, or the deadline itself, is an unknown outcome (502 channel_timeout, send
 * it again), never a 500.
 */
import { ApplicationFailure } from '@temporalio/common';
import { toAppError } from '../../src/modules/orders/outcomes';
import { AppError } from '../../src/platform/errors';

const grpc = (code: number, message: string) => Object.assign(new Error(message), { code });

test.each([
  ['an update aborted by the server (UNAVAILABLE)', grpc(14, '14 UNAVAILABLE: workflow update was aborted')],
  ['too many updates in flight (RESOURCE_EXHAUSTED)', grpc(8, '8 RESOURCE_EXHAUSTED: in-flight updates')],
  ['the deadline at the server (DEADLINE_EXCEEDED)', grpc(4, '4 DEADLINE_EXCEEDED: deadline exceeded')],
  ['the same, wrapped', Object.assign(new Error('update failed'), { cause: grpc(14, 'update was aborted') })],
])('when the create ends with %s, then 502 channel_timeout saying to send it again', (_what, err) => {
  const mapped = toAppError(err, 'create');
  expect(mapped).toBeInstanceOf(AppError);
  expect({ code: mapped.code, again: /send the same request again/.test(mapped.message) }).toEqual({
    code: 'channel_timeout',
    again: true,
  });
});

test('when the update failed with a business failure, then its code; anything else is not disguised', () => {
  expect(toAppError(ApplicationFailure.nonRetryable('too much', 'refund_amount_exceed'), 'refund').code).toBe(
    'refund_amount_exceed',
  );
  const bug = new TypeError('x is undefined');
  expect(() => toAppError(bug, 'create')).toThrow(bug);
});
