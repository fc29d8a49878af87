/** Latency statistics for the benchmark: exact percentiles over every sample of a phase. */
import type { Usage } from './procstat';

export interface LatencySummary {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/**
 * Nearest-rank percentile (the smallest sample with at least q of all samples at or below it)
 * of an ascending array. A phase keeps every sample (tens of thousands at most), so no
 * histogram approximation is needed.
 */
export function percentile(sortedAsc: readonly number[], q: number): number {
  if (sortedAsc.length === 0) throw new RangeError('no samples');
  if (!(q > 0 && q <= 1)) throw new RangeError('q must be in (0, 1]');
  const rank = Math.ceil(q * sortedAsc.length);
  return sortedAsc[rank - 1]!;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** p50/p95/p99/max in milliseconds, to 0.1 ms; null when there are no samples. */
export function summarize(samplesMs: readonly number[]): LatencySummary | null {
  if (samplesMs.length === 0) return null;
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return {
    p50: round1(percentile(sorted, 0.5)),
    p95: round1(percentile(sorted, 0.95)),
    p99: round1(percentile(sorted, 0.99)),
    max: round1(sorted[sorted.length - 1]!),
  };
}

/** a / b to two decimals, or null when either is missing or b is zero. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return null;
  return Math.round((a / b) * 100) / 100;
}

/** The stack's roles whose CPU an operation costs (the bench's own is reported apart). */
const STACK_ROLES = ['api', 'worker', 'temporal', 'postgres'] as const;

/** CPU milliseconds per operation, for each process of the stack and in all. */
export function cpuPerOp(
  processes: Record<string, Usage>,
  operations: number,
): Record<string, number> | null {
  if (operations <= 0 || !processes.api) return null;
  const out: Record<string, number> = {};
  let total = 0;
  for (const role of STACK_ROLES) {
    const usage = processes[role];
    if (!usage) continue;
    out[role] = Math.round(((usage.cpu_s * 1000) / operations) * 100) / 100;
    total += usage.cpu_s;
  }
  out.total = Math.round(((total * 1000) / operations) * 100) / 100;
  return out;
}

/** How an order of the steady phase lives: most are never paid, as codes shown and abandoned. */
export function steadyFate(seq: number): 'expire' | 'pay' | 'pay-refund' {
  const slot = seq % 10;
  if (slot < 7) return 'expire';
  return slot === 9 ? 'pay-refund' : 'pay';
}
