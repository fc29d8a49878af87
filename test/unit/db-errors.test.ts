import { UniqueConstraintError, DatabaseError, ConnectionRefusedError } from 'sequelize';
import { isPermanentDatabaseError, sqlStateOf, violatedConstraint } from '../../src/platform/db/errors';

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
