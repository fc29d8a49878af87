import { UniqueConstraintError, DatabaseError, ConnectionRefusedError } from 'sequelize';
import { ApplicationFailure } from '@temporalio/common';
import { isPermanentDatabaseError, sqlStateOf, violatedConstraint } from '../../src/platform/db/errors';
import type { Logger } from '../../src/platform/logger';
import { failingPermanentDatabaseErrors } from '../../src/activities';

/** A pg error as the driver raises it, wrapped as Sequelize wraps it. */
function pgError(code: string, constraint?: string): Error {
  return Object.assign(new Error('refused'), { code, ...(constraint ? { constraint } : {}) });
}

describe('permanent database errors', () => {
  test.each([
    ['23505', 'a unique violation'],
    ['23514', 'a check violation'],
    ['22001', 'a value too long for its column'],
    ['22P02', 'a value of the wrong type'],
    ['42703', 'an unknown column'],
  ])('when the database answers %s (%s), then no retry can mend it', (code) => {
    const err = new DatabaseError(pgError(code) as never);
    expect(sqlStateOf(err)).toBe(code);
    expect(isPermanentDatabaseError(err)).toBe(true);
  });

  test.each([
    ['40001', 'a serialization failure'],
    ['40P01', 'a deadlock'],
    ['57P01', 'a server shutting down'],
    ['53300', 'too many connections'],
    ['08006', 'a connection failure'],
  ])('when the database answers %s (%s), then a later try may pass', (code) => {
    expect(isPermanentDatabaseError(new DatabaseError(pgError(code) as never))).toBe(false);
  });

  test('when the connection is refused, then a later try may pass', () => {
    expect(isPermanentDatabaseError(new ConnectionRefusedError(new Error('ECONNREFUSED')))).toBe(false);
    expect(isPermanentDatabaseError(new Error('socket hang up'))).toBe(false);
  });

  test('when a unique index refuses a row, then the constraint it names is known', () => {
    const err = new UniqueConstraintError({
      parent: pgError('23505', 'refunds_app_merchant_refund_no') as never,
    });
    expect(isPermanentDatabaseError(err)).toBe(true);
    expect(violatedConstraint(err)).toBe('refunds_app_merchant_refund_no');
  });
});

describe('activities that meet a permanent database error', () => {
  const logger = { error: () => undefined } as unknown as Logger;
  const refused = () => Promise.reject(new DatabaseError(pgError('23514') as never));

  test('when a write is refused for good, then its activity fails at once as internal_system, naming it', async () => {
    const { recordRefundSettled } = failingPermanentDatabaseErrors(logger, { recordRefundSettled: refused });
    const err = await recordRefundSettled().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'internal_system', nonRetryable: true });
    expect((err as Error).message).toContain('recordRefundSettled');
  });

  test('when a poll or a query meets one, then it fails as before and is retried: it is never taken for an unanswered channel', async () => {
    const { awaitChannelRefund, queryChannelRefund } = failingPermanentDatabaseErrors(logger, {
      awaitChannelRefund: refused,
      queryChannelRefund: refused,
    });
    for (const call of [awaitChannelRefund, queryChannelRefund]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DatabaseError);
      expect(err).not.toBeInstanceOf(ApplicationFailure);
    }
  });
});
