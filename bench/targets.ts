/**
 * What a run is judged by: the ratios between its phases (durapay against the Temporal floor,
 * growth against no open orders, one worker against two) and the targets they must meet.
 */
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../src/platform/config';
import type { BenchResult, PhaseResult, Target } from './lib/report';
import { ratio } from './lib/stats';
import type { Options } from './options';

/** The ratios of a run's phases, and their range over the rounds of floor and create. */
export function ratiosOf(
  phases: PhaseResult[],
  opts: Options,
): { ratios: BenchResult['ratios']; ratioRanges: BenchResult['ratio_ranges'] } {
  const maxC = Math.max(...opts.concurrency);
  const maxFullC = Math.max(...opts.fullConcurrency);
  const growth = phases.filter((p) => p.name.startsWith('growth'));
  const ratios: BenchResult['ratios'] = {
    create_vs_floor: ratio(
      phases.find((p) => p.name === `create-c${maxC}`)?.throughput_rps,
      phases.find((p) => p.name === `floor-c${maxC}`)?.throughput_rps,
    ),
    growth_p50_10k_vs_0: ratio(
      growth.find((p) => p.name === 'growth-10000')?.latency_ms?.p50,
      growth.find((p) => p.name === 'growth-0')?.latency_ms?.p50,
    ),
    growth_p50_top_vs_0:
      growth.length > 1 && growth[0]!.name === 'growth-0'
        ? ratio(growth[growth.length - 1]!.latency_ms?.p50, growth[0]!.latency_ms?.p50)
        : null,
    growth_top_level: growth.length ? Number(growth[growth.length - 1]!.name.slice('growth-'.length)) : null,
    lifetime_cpu_vs_create: ratio(
      phases.find((p) => p.name === 'steady')?.cpu_ms_per_op?.total,
      phases.find((p) => p.name === `create-c${maxC}`)?.cpu_ms_per_op?.total,
    ),
    create_cpu_vs_floor: ratio(
      phases.find((p) => p.name === `create-c${maxC}`)?.cpu_ms_per_op?.total,
      phases.find((p) => p.name === `floor-c${maxC}`)?.cpu_ms_per_op?.total,
    ),
    worker_rss_mb_at_10k:
      growth.find((p) => p.name === 'growth-10000')?.processes.worker?.peak_rss_mb ?? null,
    cluster_create_2_vs_1_workers: ratio(
      phases.find((p) => p.name === `create-c${maxC}` && opts.topology === 'cluster')?.throughput_rps,
      phases.find((p) => p.name === `create-c${maxC}-1-worker`)?.throughput_rps,
    ),
    cluster_full_2_vs_1_workers: ratio(
      phases.find((p) => p.name === `full-c${maxFullC}` && opts.topology === 'cluster')?.throughput_rps,
      phases.find((p) => p.name === `full-c${maxFullC}-1-worker`)?.throughput_rps,
    ),
    open_workflows_after_idle_fraction: null,
    full_cycle_keeps_up_at_50: null,
    full_cycle_capacity_rps: null,
  };
  const steadyIdle = phases.find((p) => p.name === 'steady')?.idle;
  ratios.open_workflows_after_idle_fraction =
    steadyIdle && steadyIdle.paid_orders > 0
      ? Math.round((steadyIdle.open_after_idle / steadyIdle.paid_orders) * 10_000) / 10_000
      : null;
  const openFull = phases.filter((p) => p.name.startsWith('open-full-'));
  const half = openFull.find((p) => p.name === 'open-full-50');
  ratios.full_cycle_keeps_up_at_50 = half ? keepsUp(half) : null;
  const kept = openFull.filter(keepsUp).map((p) => p.rate_per_s ?? 0);
  ratios.full_cycle_capacity_rps = kept.length ? Math.max(...kept) : null;
  const perRound = (num: (p: PhaseResult) => number | null | undefined) => {
    const values: number[] = [];
    for (const create of phases.filter((p) => p.name === `create-c${maxC}`)) {
      const floor = phases.find((p) => p.name === `floor-c${maxC}` && p.round === create.round);
      const r = ratio(num(create), floor ? num(floor) : undefined);
      if (r !== null) values.push(r);
    }
    return values.length ? ([Math.min(...values), Math.max(...values)] as [number, number]) : null;
  };
  const ratioRanges: BenchResult['ratio_ranges'] = {
    create_vs_floor: perRound((p) => p.throughput_rps),
    create_cpu_vs_floor: perRound((p) => p.cpu_ms_per_op?.total),
  };
  return { ratios, ratioRanges };
}

/**
 * An open-loop full-cycle phase kept up: ≥ 98 % of its arrivals completed, with p50 ≤ 250 ms (a
 * queue that grows pushes p50 past that within the window). Completions per second are not the
 * test: they are counted until the last answer, so even a phase that kept up shows a little less
 * than its arrival rate.
 */
export function keepsUp(p: PhaseResult): boolean {
  if (!p.offered || !p.latency_ms) return false;
  return p.requests >= 0.98 * p.offered && p.latency_ms.p50 <= 250;
}

export function targets(phases: PhaseResult[], ratios: BenchResult['ratios'], opts: Options): Target[] {
  const out: Target[] = [];
  const maxC = Math.max(...opts.concurrency);
  const create = phases.find((p) => p.name === `create-c${maxC}`);
  if (create) {
    out.push({
      name: `create-c${maxC} throughput`,
      target: '≥ 0.5 × floor',
      measured: `${ratios.create_vs_floor ?? '–'} × floor`,
      met: ratios.create_vs_floor === null ? null : ratios.create_vs_floor >= 0.5,
    });
    out.push({
      name: `create-c${maxC} p99`,
      target: '≤ 150 ms',
      measured: `${create.latency_ms?.p99 ?? '–'} ms`,
      met: create.latency_ms ? create.latency_ms.p99 <= 150 : null,
    });
  }
  for (const full of phases.filter((p) => p.name.startsWith('full'))) {
    out.push({
      name: `${full.name} p50`,
      target: '≤ 250 ms',
      measured: `${full.latency_ms?.p50 ?? '–'} ms`,
      met: full.latency_ms ? full.latency_ms.p50 <= 250 : null,
    });
  }
  if (ratios.create_cpu_vs_floor !== null) {
    out.push({
      name: `create-c${maxC} CPU per request`,
      target: '≤ 1.5 × floor',
      measured: `${ratios.create_cpu_vs_floor} × floor`,
      met: ratios.create_cpu_vs_floor <= 1.5,
    });
  }
  if (ratios.lifetime_cpu_vs_create !== null) {
    out.push({
      name: "an order's lifetime CPU (steady)",
      target: '≤ 2 × its create',
      measured: `${ratios.lifetime_cpu_vs_create} ×`,
      met: ratios.lifetime_cpu_vs_create <= 2,
    });
  }
  const openCreate = phases.find((p) => p.name === 'open-create-50');
  if (openCreate) {
    out.push({
      name: 'open-create-50 p99',
      target: '≤ 150 ms',
      measured: `${openCreate.latency_ms?.p99 ?? '–'} ms`,
      met: openCreate.latency_ms ? openCreate.latency_ms.p99 <= 150 : null,
    });
  }
  const openFull = phases.find((p) => p.name === 'open-full-50');
  if (openFull) {
    out.push({
      name: 'open-full-50 p50 (buyer pays → notification delivered)',
      target: '≤ 100 ms',
      measured: `${openFull.latency_ms?.p50 ?? '–'} ms`,
      met: openFull.latency_ms ? openFull.latency_ms.p50 <= 100 : null,
    });
  }
  if (ratios.full_cycle_keeps_up_at_50 !== null) {
    out.push({
      name: 'open-full-50 keeps up (≥ 98 % of arrivals completed, p50 ≤ 250 ms)',
      target: 'yes',
      measured: ratios.full_cycle_keeps_up_at_50 ? 'yes' : 'no',
      met: ratios.full_cycle_keeps_up_at_50,
    });
  }
  const steadyIdle = phases.find((p) => p.name === 'steady')?.idle;
  if (steadyIdle && ratios.open_workflows_after_idle_fraction !== null) {
    out.push({
      name: 'paid order workflows still open after the idle period (steady)',
      target: '≤ 1 % of those paid; a refund of one after it succeeds',
      measured: `${steadyIdle.open_after_idle} of ${steadyIdle.paid_orders}; refund: ${steadyIdle.refund_after_idle}`,
      met:
        ratios.open_workflows_after_idle_fraction <= 0.01 &&
        steadyIdle.refund_after_idle.endsWith('refund.succeeded'),
    });
  }
  const growth = phases.filter((p) => p.name.startsWith('growth'));
  if (growth.length > 1) {
    const last = growth[growth.length - 1]!;
    out.push({
      name: `${last.name} p50`,
      target: `≤ 1.2 × ${growth[0]!.name} p50`,
      measured: `${ratios.growth_p50_top_vs_0 ?? '–'} ×`,
      met: ratios.growth_p50_top_vs_0 === null ? null : ratios.growth_p50_top_vs_0 <= 1.2,
    });
    if (ratios.worker_rss_mb_at_10k !== null) {
      out.push({
        name: 'worker peak RSS at 10 000 open orders',
        target: '≤ 700 MiB',
        measured: `${ratios.worker_rss_mb_at_10k} MiB`,
        met: ratios.worker_rss_mb_at_10k <= 700,
      });
    }
    const rss = growth.map((p) => `${p.processes.worker?.peak_rss_mb ?? '–'}`).join(' → ');
    out.push({
      name: 'worker peak RSS across growth',
      target: `bounded by the worker's workflow cache (WORKER_MAX_CACHED_WORKFLOWS, ${process.env.WORKER_MAX_CACHED_WORKFLOWS || DEFAULT_MAX_CACHED_WORKFLOWS} on the bench's own stack unless set)`,
      measured: `${rss} MiB`,
      met: null,
    });
  }
  return out;
}
