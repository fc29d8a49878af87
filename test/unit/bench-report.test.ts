import { latencyChartSvg, markdownSummary, type BenchResult, type PhaseResult } from '../../bench/lib/report';
import { parseOptions } from '../../bench/options';
import { keepsUp, ratiosOf } from '../../bench/targets';

function phase(
  name: string,
  concurrency: number,
  rps: number,
  p50: number,
  extra: Partial<PhaseResult> = {},
): PhaseResult {
  return {
    name,
    concurrency,
    requests: Math.round(rps * 10),
    throughput_rps: rps,
    latency_ms: { p50, p95: p50 * 2, p99: p50 * 3, max: p50 * 4 },
    errors: 0,
    cpu_s: 1.5,
    peak_rss_mb: 300,
    processes: { api: { cpu_s: 0.5, peak_rss_mb: 100 }, worker: { cpu_s: 1, peak_rss_mb: 200 } },
    error_messages: {},
    measures: 'test',
    ...extra,
  };
}

const result: BenchResult = {
  started_at: '2026-11-22T10:00:00.000Z',
  command: 'npm run bench',
  machine: { cpus: 2, cpu_model: 'Test CPU', memory_gib: 24 },
  stack: 'own stack',
  settings: {},
  phases: [
    phase('floor-c32', 32, 80, 12),
    phase('create-c32', 32, 40, 30),
    phase('full-c8', 8, 20, 90),
    phase('growth-0', 8, 30, 20, { open_orders: 0 }),
    phase('growth-10000', 8, 28, 24, { open_orders: 10_000 }),
  ],
  order_cost: {
    orders: 20,
    workflows: 1,
    workflow_tasks: 4,
    activity_tasks: 1,
    local_activities: 3,
    events: 21.5,
    by_type: { orderWorkflow: { workflows: 1, events: 21.5 } },
    measures: 'test',
  },
  failures: [],
  ratios: {
    create_vs_floor: 0.5,
    growth_p50_10k_vs_0: 1.2,
    growth_p50_top_vs_0: 1.2,
    growth_top_level: 10_000,
    lifetime_cpu_vs_create: 1.4,
    create_cpu_vs_floor: 1.3,
    worker_rss_mb_at_10k: 300,
    cluster_create_2_vs_1_workers: null,
    cluster_full_2_vs_1_workers: null,
    open_workflows_after_idle_fraction: 0.004,
    full_cycle_keeps_up_at_50: true,
    full_cycle_capacity_rps: 20.2,
  },
  ratio_ranges: { create_vs_floor: [0.47, 0.5], create_cpu_vs_floor: [1.3, 1.3] },
  targets: [{ name: 'create-c32 p99', target: '≤ 150 ms', measured: '90 ms', met: true }],
};

describe('bench report', () => {
  test('when summarized, then one table has a row per phase with the create/floor and growth ratios', () => {
    const md = markdownSummary(result);
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| phase'));
    expect(rows).toHaveLength(5);
    expect(rows[1]).toMatch(
      /^\| create-c32 \| 32 \| 400 \| 40\.0 \| 30\.0 \| 60\.0 \| 90\.0 \| 120\.0 \| 0 \| 1\.5 \| 100 \/ 200 \| 0\.50 × floor req\/s \|$/,
    );
    expect(rows[4]).toContain('1.20 × growth-0 p50');
    expect(md).toContain(
      'create/floor throughput at the highest concurrency: 0.50 (rounds: 0.47–0.50); create/floor CPU per operation: 1.30; growth p50 at 10000 open orders / at 0: 1.20 (at 10 000: 1.20)',
    );
    expect(md).toContain('- met: create-c32 p99 ≤ 150 ms (measured 90 ms)');
    expect(md).toContain(
      'a paid order so far (20 sampled): 1 workflows, 4 workflow tasks, 1 activity tasks, 3 local activities, 21.5 history events',
    );
  });

  test('when an open-loop phase is summarized, then its row says open and its arrival rate', () => {
    const open = phase('open-create-50', 0, 20, 15, { rate_per_s: 20.5, rate_fraction: 0.5 });
    const md = markdownSummary({ ...result, phases: [open] });
    expect(md).toMatch(/\| open-create-50 \| open \| 200 \| 20\.0 \| 15\.0 \|.*\| 20\.5\/s arriving \|/);
  });

  test('when charted, then the SVG has a labelled bar per percentile and phase on a log axis', () => {
    const svg = latencyChartSvg(result);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<rect x="150" y="\d+" width="[\d.]+" height="8"/g)).toHaveLength(5 * 3);
    expect(svg).toContain('<title>growth-10000 p99 72 ms</title>');
    // Decades from 10 ms (the smallest p50 rounds down) to 1000 ms (the largest p99 rounds up).
    for (const tick of ['>10<', '>100<', '>1000<']) expect(svg).toContain(tick);
    // A longer latency draws a longer bar.
    const width = (title: string) =>
      Number(svg.match(new RegExp(`width="([\\d.]+)" height="8" fill="[^"]+"><title>${title}`))![1]);
    expect(width('full-c8 p50 90 ms')).toBeGreaterThan(width('floor-c32 p50 12 ms'));
  });
});

describe('bench ratios of open-loop full cycles and idle orders', () => {
  const opts = parseOptions(['node', 'bench']);
  const open = (pct: number, rate: number, offered: number, completed: number, p50: number) =>
    phase(`open-full-${pct}`, 0, completed / 10.5, p50, {
      rate_per_s: rate,
      offered,
      requests: completed,
      rate_fraction: pct / 100,
    });

  test('when a phase completes every arrival at p50 ≤ 250 ms, then it keeps up, though its completions per second trail its rate', () => {
    expect(keepsUp(open(25, 8.3, 83, 83, 130.5))).toBe(true);
    // Every arrival completed, but the queue grew: p50 past 250 ms.
    expect(keepsUp(open(50, 16.6, 166, 166, 1060.9))).toBe(false);
    // Fast, but more than 2 % of arrivals never completed.
    expect(keepsUp(open(50, 16.6, 166, 160, 120))).toBe(false);
  });

  test('when open-loop and steady phases ran, then capacity is the highest rate that kept up, and the idle fraction is open over paid', () => {
    const phases = [
      open(25, 8.3, 83, 83, 130.5),
      open(50, 16.6, 166, 166, 1060.9),
      open(75, 24.9, 249, 181, 838.9),
      phase('steady', 0, 4, 109, {
        idle: {
          paid_orders: 84,
          open_after_idle: 1,
          waited_s: 29,
          refund_after_idle: 'processing, then refund.succeeded',
        },
      }),
    ];
    const { ratios } = ratiosOf(phases, opts);
    expect(ratios.full_cycle_capacity_rps).toBe(8.3);
    expect(ratios.full_cycle_keeps_up_at_50).toBe(false);
    expect(ratios.open_workflows_after_idle_fraction).toBe(0.0119);
    expect(ratiosOf([], opts).ratios).toMatchObject({
      full_cycle_capacity_rps: null,
      full_cycle_keeps_up_at_50: null,
      open_workflows_after_idle_fraction: null,
    });
  });
});
