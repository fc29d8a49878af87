import { SourceRateLimit, sourceOf } from '../../src/platform/http/source-limit';

describe('SourceRateLimit', () => {
  const at = (start = 1_000_000) => {
    const clock = { now: start };
    return { clock, now: () => clock.now };
  };

  test('when a source has never failed, then it is heard and nothing is kept about it', () => {
    const limit = new SourceRateLimit({ perSecond: 5 });
    for (let i = 0; i < 100; i++) expect(limit.check('10.0.0.1').allowed).toBe(true);
    expect(limit.size).toBe(0);
  });

  test('when a source fails its burst, then it is refused until a token has come back, and refusals cost it nothing', () => {
    const { clock, now } = at();
    const limit = new SourceRateLimit({ perSecond: 5, now });
    for (let i = 0; i < 5; i++) {
      expect(limit.check('10.0.0.1').allowed).toBe(true);
      limit.charge('10.0.0.1');
    }
    expect(limit.check('10.0.0.1')).toEqual({ allowed: false, refusedInARow: 1 });
    expect(limit.check('10.0.0.1')).toEqual({ allowed: false, refusedInARow: 2 });
    // Another source is not touched.
    expect(limit.check('10.0.0.2').allowed).toBe(true);
    clock.now += 199;
    expect(limit.check('10.0.0.1').allowed).toBe(false);
    clock.now += 1;
    expect(limit.check('10.0.0.1')).toEqual({ allowed: true, refusedInARow: 0 });
  });

  test('when more failures were in flight than the source had tokens, then it owes them and is refused until time has paid them', () => {
    const { clock, now } = at();
    const limit = new SourceRateLimit({ perSecond: 5, now });
    // 15 admitted at once (all checked before any failed), then all fail: 10 owed.
    for (let i = 0; i < 15; i++) limit.charge('10.0.0.1');
    clock.now += 2_000;
    expect(limit.check('10.0.0.1').allowed).toBe(false);
    clock.now += 200;
    expect(limit.check('10.0.0.1').allowed).toBe(true);
  });

  test('when a source has refilled its bucket, then it is forgotten', () => {
    const { clock, now } = at();
    const limit = new SourceRateLimit({ perSecond: 5, now });
    limit.charge('10.0.0.1');
    expect(limit.size).toBe(1);
    clock.now += 200;
    expect(limit.check('10.0.0.1').allowed).toBe(true);
    expect(limit.size).toBe(0);
  });

  test('when more sources fail than it may keep, then it keeps at most its bound, the most recent ones', () => {
    const { now } = at();
    const limit = new SourceRateLimit({ perSecond: 1, maxSources: 1_000, now });
    for (let i = 0; i < 5_000; i++) limit.charge(`10.0.${i >> 8}.${i & 255}`);
    expect(limit.size).toBeLessThanOrEqual(1_000);
    // The last one to fail is still refused; the first ones were forgotten.
    expect(limit.check(`10.0.${4_999 >> 8}.${4_999 & 255}`).allowed).toBe(false);
    expect(limit.check('10.0.0.0').allowed).toBe(true);
  });

  test('when the clock steps back, then nothing is given back', () => {
    const { clock, now } = at();
    const limit = new SourceRateLimit({ perSecond: 1, now });
    limit.charge('10.0.0.1');
    clock.now -= 60_000;
    expect(limit.check('10.0.0.1').allowed).toBe(false);
  });
});

describe('sourceOf', () => {
  test.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    [undefined, 'unknown'],
    ['not an address', 'unknown'],
  ])('when the address is %p, then the source is %s', (ip, source) => {
    expect(sourceOf(ip)).toBe(source);
  });
});
