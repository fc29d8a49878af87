import { AppError } from '../../src/platform/errors';
import { keysetPageOf } from '../../src/platform/pagination';
import { decodeCursor, encodeCursor, pageOf } from '../../src/platform/http/keyset';
import { dayIn, daysEndingOn } from '../../src/modules/console/overview';

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof AppError ? { code: err.code, message: err.message } : err;
  }
  throw new Error('not refused');
};

describe('list cursors', () => {
  test('when a position is encoded, then it decodes to itself, to the microsecond, rank included', () => {
    const at = '2026-11-27T17:03:28.847106Z';
    for (const position of [
      { at, key: 'P202611271703280000000001' },
      { at, key: 'ntf_1', rank: 0 },
    ]) {
      const cursor = encodeCursor(position)!;
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(cursor)).toEqual(position);
    }
    expect(encodeCursor(null)).toBeNull();
  });

  test.each([
    ['not base64url', 'a b'],
    ['not JSON', Buffer.from('{').toString('base64url')],
    ['not a list', Buffer.from('{"at":1}').toString('base64url')],
    ['a time cut to the millisecond', Buffer.from('["2026-11-27T17:03:28.847Z","P1"]').toString('base64url')],
    ['a day no month has', Buffer.from('["2026-02-31T00:00:00.000000Z","P1"]').toString('base64url')],
    ['hour 24', Buffer.from('["2026-02-01T24:00:00.000000Z","P1"]').toString('base64url')],
    ['year 0', Buffer.from('["0000-01-01T00:00:00.000000Z","P1"]').toString('base64url')],
    ['no time', Buffer.from('["yesterday","P1"]').toString('base64url')],
    ['an empty key', Buffer.from('["2026-11-27T17:03:28.847106Z",""]').toString('base64url')],
    ['a key with U+0000', Buffer.from('["2026-11-27T17:03:28.847106Z","P\\u0000"]').toString('base64url')],
    ['a rank of 2', Buffer.from('["2026-11-27T17:03:28.847106Z","P1",2]').toString('base64url')],
  ])('when a cursor is %s, then 400 invalid_param naming after', (_what, cursor) => {
    expect(refusal(() => decodeCursor(cursor))).toEqual({
      code: 'invalid_param',
      message: expect.stringContaining('"after"'),
    });
  });

  test('when a list’s keys have a form, then a cursor whose key has not is refused', () => {
    const cursor = encodeCursor({ at: '2026-11-27T17:03:28.847106Z', key: 'abc' })!;
    expect(refusal(() => decodeCursor(cursor, /^\d+$/))).toMatchObject({ code: 'invalid_param' });
    expect(
      pageOf({ after: encodeCursor({ at: '2026-11-27T17:03:28.847106Z', key: '12' })! }, /^\d+$/),
    ).toEqual({
      limit: 20,
      after: { at: '2026-11-27T17:03:28.847106Z', key: '12' },
    });
  });

  test('when one row more than the page was read, then the next page starts after the page’s last row', () => {
    const rows = [{ k: 'c' }, { k: 'b' }, { k: 'a' }];
    const position = (r: { k: string }) => ({ at: '2026-01-01T00:00:00.000000Z', key: r.k });
    expect(keysetPageOf(rows, 2, position)).toEqual({ rows: rows.slice(0, 2), next: position(rows[1]!) });
    expect(keysetPageOf(rows, 3, position)).toEqual({ rows, next: null });
  });
});

describe('overview days', () => {
  test('when it is past 16:00 UTC, then it is already the next day in Asia/Shanghai', () => {
    expect(dayIn('Asia/Shanghai', new Date('2026-02-28T16:30:00Z'))).toBe('2026-03-01');
    expect(dayIn('UTC', new Date('2026-02-28T16:30:00Z'))).toBe('2026-02-28');
  });

  test('when 30 days end on the first of March, then they go back through February, oldest first', () => {
    const days = daysEndingOn('2026-03-01', 30);
    expect(days).toHaveLength(30);
    expect(days[0]).toBe('2026-01-31');
    expect(days.slice(-2)).toEqual(['2026-02-28', '2026-03-01']);
  });
});
