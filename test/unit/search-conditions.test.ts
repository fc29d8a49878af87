import { SearchConditions } from '../../src/platform/pagination';

describe('SearchConditions', () => {
  test('when no filter is given, then there is no WHERE and only the given replacements', () => {
    const w = new SearchConditions({ limit: 21 })
      .equals('a', 'a', undefined)
      .compare('t', '>=', 'from', undefined);
    expect(w.sql()).toBe('');
    expect(w.replacements).toEqual({ limit: 21 });
  });

  test('when filters are given, then each is one condition whose value travels as a named replacement, never in the SQL', () => {
    const evil = "x'; DROP TABLE orders; --";
    const w = new SearchConditions()
      .equals('o.app_id', 'appId', evil)
      .equals('r.bill_date', 'billDate', '2026-11-27', 'date')
      .compare('o.amount', '<=', 'max', 10)
      .compare('o.created_at', '>=', 'from', '2026-11-01T00:00:00.000Z', 'timestamptz')
      .where("o.status <> 'failed'");
    expect(w.sql()).toBe(
      "WHERE o.app_id = :appId AND r.bill_date = CAST(:billDate AS date) AND o.amount <= :max AND o.created_at >= CAST(:from AS timestamptz) AND o.status <> 'failed'",
    );
    expect(w.sql()).not.toContain(evil);
    expect(w.replacements).toEqual({
      appId: evil,
      billDate: '2026-11-27',
      max: 10,
      from: '2026-11-01T00:00:00.000Z',
    });
  });

  test('when a keyset position is given, then rows after it are (time, keys…) below it; without one, nothing', () => {
    const at = '2026-11-27T10:00:00.123456Z';
    const w = new SearchConditions().after(
      'm.created_at',
      [
        { column: 'm.app_id', value: 'app_1' },
        { column: 'm.id', value: '42', type: 'bigint' },
      ],
      at,
    );
    expect(w.sql()).toBe(
      'WHERE (m.created_at, m.app_id, m.id) < (CAST(:afterAt AS timestamptz), :afterKey0, CAST(:afterKey1 AS bigint))',
    );
    expect(w.replacements).toEqual({ afterAt: at, afterKey0: 'app_1', afterKey1: '42' });
    expect(new SearchConditions().after('t', [{ column: 'k', value: '' }], undefined).sql()).toBe('');
  });
});
