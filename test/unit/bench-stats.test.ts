import { percentile, ratio, summarize } from '../../bench/lib/stats';

describe('bench statistics', () => {
  test('when percentiles are taken, then they are nearest-rank over every sample', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100
    expect(percentile(sorted, 0.5)).toBe(50);
    expect(percentile(sorted, 0.95)).toBe(95);
    expect(percentile(sorted, 0.99)).toBe(99);
    expect(percentile(sorted, 1)).toBe(100);
    expect(percentile([7], 0.5)).toBe(7);
    // Three samples: the median is the second, p99 the third.
    expect(percentile([1, 2, 30], 0.5)).toBe(2);
    expect(percentile([1, 2, 30], 0.99)).toBe(30);
  });

  test('when there are no samples or q is out of range, then percentile refuses', () => {
    expect(() => percentile([], 0.5)).toThrow(RangeError);
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 1.5)).toThrow(RangeError);
  });

  test('when samples arrive unsorted, then the summary sorts a copy and rounds to 0.1 ms', () => {
    const samples = [12.34, 3.21, 40.05, 7.77];
    expect(summarize(samples)).toEqual({ p50: 7.8, p95: 40.1, p99: 40.1, max: 40.1 });
    expect(samples).toEqual([12.34, 3.21, 40.05, 7.77]);
    expect(summarize([])).toBeNull();
  });

  test('when a ratio has a missing or zero side, then it is null', () => {
    expect(ratio(30, 60)).toBe(0.5);
    expect(ratio(1, 3)).toBe(0.33);
    expect(ratio(null, 3)).toBeNull();
    expect(ratio(3, undefined)).toBeNull();
    expect(ratio(3, 0)).toBeNull();
  });
});
