/** The bench's outputs: the JSON result, the Markdown summary and the latency chart (SVG). */
import type { LatencySummary } from './stats';
import type { OrderCost } from '../order-cost';
import type { Usage } from './procstat';

export interface PhaseResult {
  name: string;
  concurrency: number;
  requests: number;
  throughput_rps: number;
  latency_ms: LatencySummary | null;
  errors: number;
  /** CPU seconds of the API and the worker together, during the measured window. */
  cpu_s: number | null;
  /** Peak resident memory of the API plus that of the worker, in MiB. */
  peak_rss_mb: number | null;
  /** Each measured process (api, worker, temporal, postgres, and the bench's own) on its own. */
  processes: Record<string, Usage>;
  /**
   * CPU milliseconds per operation of each process of the stack (api, worker, temporal,
   * postgres) and their total: the primary figure, steadier than throughput on a shared machine.
   */
  cpu_ms_per_op?: Record<string, number> | null;
  /** Open-loop phases: the arrival rate, and the floor's throughput fraction it is. */
  rate_per_s?: number;
  /** Open-loop phases: arrivals in the measured window (`requests` of them completed). */
  offered?: number;
  rate_fraction?: number;
  /** Floor and create phases: which of the alternating rounds (1 = the first) it was. */
  round?: number;
  /** The steady phase: its DURAPAY_TIME_SCALE. */
  time_scale?: number;
  /** Every distinct error message with its count (warm-up included). */
  error_messages: Record<string, number>;
  /**
   * The steady phase (SPEC §7): orders it paid, how many of their workflows were still open
   * after the idle period (twice, scaled), and how a refund of one of them then went.
   */
  idle?: { paid_orders: number; open_after_idle: number; waited_s: number; refund_after_idle: string };
  /** growth phases: open order workflows when the phase began. */
  open_orders?: number;
  /** growth phases: how the open orders were created before the phase (through the API). */
  seeding?: { orders: number; seconds: number; orders_per_s: number; retries: number };
  /** What one request of this phase is, and what its latency spans. */
  /** The console phase: the median latency of each of its reads, in ms. */
  console_reads_p50_ms?: Record<string, number>;
  /**
   * The contracts phase: contracts signed and active, the contract workflows Temporal holds open,
   * the worker's and Temporal's peak memory, and the stack's CPU per idle contract per day (ms).
   */
  contracts?: {
    signed: number;
    active: number;
    open_workflows: number;
    retries: number;
    window_s: number;
    /** The stack's CPU seconds over the window before any contract, and with them all waiting. */
    idle_cpu_s_without: number;
    idle_cpu_s_with: number;
    /** Each process over the window before any contract, to compare with `processes`. */
    processes_without: Record<string, Usage>;
    worker_rss_mb: number | null;
    temporal_rss_mb: number | null;
    cpu_ms_per_contract_day: number | null;
  };
  measures: string;
}

export interface Target {
  name: string;
  target: string;
  measured: string;
  /** null: a figure for a reader to judge (memory against its bound), not a pass or fail. */
  met: boolean | null;
}

export interface BenchResult {
  started_at: string;
  command: string;
  machine: Record<string, unknown>;
  stack: string;
  settings: Record<string, unknown>;
  phases: PhaseResult[];
  /** What a paid order has cost Temporal (workflows, tasks, events), when the full phase ran. */
  order_cost: OrderCost | null;
  /** Stages that could not finish (a stack that did not start, seeding that failed). */
  failures: { stage: string; error: string }[];
  ratios: {
    create_vs_floor: number | null;
    /** p50 of growth-10000 / p50 of growth-0; null unless both levels ran. */
    growth_p50_10k_vs_0: number | null;
    /** p50 at the highest growth level that ran / p50 at 0 (the default levels stop below 10 000). */
    growth_p50_top_vs_0: number | null;
    growth_top_level: number | null;
    /** The steady phase's CPU per order over its whole life / create-cN's CPU per create. */
    lifetime_cpu_vs_create: number | null;
    /** create-cN's CPU per create / floor-cN's CPU per update-with-start (same N, the highest). */
    create_cpu_vs_floor: number | null;
    /** Worker peak RSS during growth-10000, MiB; null unless that level ran. */
    worker_rss_mb_at_10k: number | null;
    /** --topology cluster: create-cN throughput with 2 workers / with 1 (null on the dev topology). */
    cluster_create_2_vs_1_workers: number | null;
    /** --topology cluster: full-cN throughput with 2 workers / with 1. */
    cluster_full_2_vs_1_workers: number | null;
    /** The steady phase's paid orders whose workflow was still open after the idle period / those paid. */
    open_workflows_after_idle_fraction: number | null;
    /** open-full-50 completed ≥ 98 % of its arrivals with p50 ≤ 250 ms; null unless it ran. */
    full_cycle_keeps_up_at_50: boolean | null;
    /**
     * One node's full-cycle capacity: the highest open-full rate (orders a second) that completed
     * ≥ 98 % of its arrivals with p50 ≤ 250 ms; null when none did or none ran.
     */
    full_cycle_capacity_rps: number | null;
  };
  /**
   * The ratios measured once per round of the alternating floor and create phases (round r's
   * create against round r's floor): [lowest, highest]; null with fewer than one round of each.
   */
  ratio_ranges: {
    create_vs_floor: [number, number] | null;
    create_cpu_vs_floor: [number, number] | null;
  };
  targets: Target[];
}

const fmt = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined ? '–' : x.toFixed(digits);

/** ` (rounds: 0.41–0.47)` for a range over more than one round, else nothing. */
const range = (r: [number, number] | null | undefined) =>
  r && r[0] !== r[1] ? ` (rounds: ${r[0].toFixed(2)}–${r[1].toFixed(2)})` : '';

/** One Markdown table: a row per phase, with create/floor and growth ratios in their own column. */
export function markdownSummary(result: BenchResult): string {
  const floorRps = new Map(
    result.phases.filter((p) => p.name.startsWith('floor')).map((p) => [p.concurrency, p.throughput_rps]),
  );
  const growth0 = result.phases.find((p) => p.name.startsWith('growth') && p.open_orders !== undefined);
  const rows = result.phases.map((p) => {
    let versus = '';
    const floor = floorRps.get(p.concurrency);
    if (p.name.startsWith('create') && floor)
      versus = `${(p.throughput_rps / floor).toFixed(2)} × floor req/s`;
    if (p.name.startsWith('growth') && growth0?.latency_ms && p.latency_ms && p !== growth0) {
      versus = `${(p.latency_ms.p50 / growth0.latency_ms.p50).toFixed(2)} × ${growth0.name} p50`;
    }
    const rss = ['api', 'worker']
      .map((r) => (p.processes[r] ? fmt(p.processes[r]!.peak_rss_mb, 0) : '–'))
      .join(' / ');
    if (p.rate_per_s !== undefined) versus ||= `${p.rate_per_s}/s arriving`;
    return `| ${p.name} | ${p.concurrency || 'open'} | ${p.requests} | ${fmt(p.throughput_rps)} | ${fmt(p.latency_ms?.p50)} | ${fmt(p.latency_ms?.p95)} | ${fmt(p.latency_ms?.p99)} | ${fmt(p.latency_ms?.max)} | ${p.errors} | ${fmt(p.cpu_s)} | ${rss} | ${versus} |`;
  });
  const lines = [
    `durapay bench, ${result.started_at}: ${String(result.machine.cpus)} × ${String(result.machine.cpu_model)}, ${String(result.machine.memory_gib)} GiB; ${result.stack}`,
    '',
    '| phase | conc. | requests | req/s | p50 ms | p95 ms | p99 ms | max ms | errors | CPU s (api+worker) | peak RSS MiB (api / worker) | ratio |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows,
    '',
    `create/floor throughput at the highest concurrency: ${fmt(result.ratios.create_vs_floor, 2)}` +
      range(result.ratio_ranges?.create_vs_floor) +
      `; create/floor CPU per operation: ${fmt(result.ratios.create_cpu_vs_floor, 2)}` +
      range(result.ratio_ranges?.create_cpu_vs_floor) +
      '; ' +
      `growth p50 at ${result.ratios.growth_top_level ?? '–'} open orders / at 0: ${fmt(result.ratios.growth_p50_top_vs_0, 2)}` +
      (result.ratios.growth_p50_10k_vs_0 === null
        ? ''
        : ` (at 10 000: ${fmt(result.ratios.growth_p50_10k_vs_0, 2)})`),
    `full cycle: one node's capacity ${result.ratios.full_cycle_capacity_rps ?? '–'} orders/s ` +
      `(highest open-loop rate with ≥ 98 % completed and p50 ≤ 250 ms); paid order workflows open ` +
      `after the idle period: ${fmt(result.ratios.open_workflows_after_idle_fraction, 4)} of those paid`,
    ...(result.order_cost
      ? [
          '',
          `a paid order so far (${result.order_cost.orders} sampled): ${result.order_cost.workflows} workflows, ` +
            `${result.order_cost.workflow_tasks} workflow tasks, ${result.order_cost.activity_tasks} activity tasks, ` +
            `${result.order_cost.local_activities} local activities, ${result.order_cost.events} history events`,
        ]
      : []),
    '',
    ...result.failures.map((f) => `- FAILED: ${f.stage}: ${f.error}`),
    ...result.targets.map(
      (t) =>
        `- ${t.met === null ? 'to read' : t.met ? 'met' : 'MISSED'}: ${t.name} ${t.target} (measured ${t.measured})`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Latency per phase as horizontal bars (p50, p95, p99) on a logarithmic axis: phases span
 * milliseconds (the floor at one caller) to seconds (saturation), which a linear axis hides.
 */
export function latencyChartSvg(result: BenchResult): string {
  const phases = result.phases.filter((p) => p.latency_ms);
  const labelW = 150;
  const plotW = 560;
  const rowH = 34;
  const top = 48;
  const height = top + phases.length * rowH + 40;
  const width = labelW + plotW + 110;
  const values = phases.flatMap((p) => [p.latency_ms!.p50, p.latency_ms!.p99]).filter((v) => v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.max(0.1, Math.min(...values, 1)))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values, 10))));
  const x = (ms: number) =>
    labelW + ((Math.log10(Math.max(ms, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotW;
  const series: [keyof LatencySummary, string][] = [
    ['p50', '#2b6cb0'],
    ['p95', '#dd6b20'],
    ['p99', '#c53030'],
  ];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${labelW}" y="18" font-size="14" font-weight="bold">durapay bench: latency per phase (ms, log scale)</text>`,
  ];
  series.forEach(([name, color], i) => {
    parts.push(`<rect x="${labelW + i * 70}" y="28" width="10" height="10" fill="${color}"/>`);
    parts.push(`<text x="${labelW + i * 70 + 14}" y="37">${name}</text>`);
  });
  for (let tick = lo; tick <= hi; tick *= 10) {
    const tx = x(tick);
    parts.push(`<line x1="${tx}" y1="${top - 4}" x2="${tx}" y2="${height - 30}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${tx}" y="${height - 14}" text-anchor="middle">${tick >= 1 ? tick : tick.toFixed(1)}</text>`,
    );
  }
  phases.forEach((p, i) => {
    const y = top + i * rowH;
    parts.push(`<text x="${labelW - 8}" y="${y + 17}" text-anchor="end">${escapeXml(p.name)}</text>`);
    series.forEach(([name, color], j) => {
      const v = p.latency_ms![name];
      const w = Math.max(1, x(v) - labelW);
      parts.push(
        `<rect x="${labelW}" y="${y + 3 + j * 9}" width="${w.toFixed(1)}" height="8" fill="${color}"><title>${escapeXml(p.name)} ${name} ${v} ms</title></rect>`,
      );
    });
    parts.push(
      `<text x="${Math.min(x(p.latency_ms!.p99) + 4, width - 4).toFixed(1)}" y="${y + 25}" font-size="10" fill="#444">${p.latency_ms!.p50} / ${p.latency_ms!.p99}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
