/**
 * `npm run bench` end to end, with tiny settings: it brings up its own stack twice (durapay
 * start, here on a scratch database of the tests' Postgres), runs every phase against real
 * Temporal and Postgres, and writes its JSON, Markdown and SVG. Nothing here asserts a speed:
 * only that every phase ran without error and reported what the report promises.
 *
 * @runs-alone: it brings up its own stacks and times orders against their scaled lives; beside
 * other files a loaded machine, not durapay, decides (test/support/tiered-runner.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { BenchResult } from '../../bench/lib/report';
import { runTool } from '../support/scripts';
import { globalState } from '../support/state';

jest.setTimeout(420_000);

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-bench-test-'));
afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

const runBench = (args: string[]) => runTool('bench/main.ts', args);

async function benchDatabases(): Promise<string[]> {
  const pg = new Client({ connectionString: globalState().adminUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'durapay_bench_%'",
    );
    return rows.map((r) => r.datname);
  } finally {
    await pg.end();
  }
}

test('when the bench runs every phase with tiny settings, then each phase reports its figures with no error, and it writes JSON, Markdown and a chart', async () => {
  const before = await benchDatabases();
  const { code, stdout, stderr } = await runBench([
    '--duration',
    '1',
    '--warmup',
    '0',
    '--concurrency',
    '2',
    '--full-concurrency',
    '1',
    // One open-loop rate, a fifth of the floor's throughput, for creates and full cycles.
    '--open-rates',
    '20',
    '--growth',
    // Well above what growth-0's one second of creates leaves open, so that the seeding is run.
    '0,200',
    '--seed-concurrency',
    '4',
    // An order's 30-minute life in 9 s, then 2 s measured.
    '--time-scale',
    '0.005',
    '--steady-window',
    '2',
    '--out-dir',
    outDir,
  ]);
  // A failed run shows what failed: the bench prints each phase's errors on stdout.
  const printedErrors = stdout.split('\n').filter((l) => / × .*error: |more distinct errors|failed/.test(l));
  expect({ code, stderr: code === 0 ? '' : stderr, printedErrors: code === 0 ? [] : printedErrors }).toEqual({
    code: 0,
    stderr: '',
    printedErrors: [],
  });

  const files = fs.readdirSync(outDir);
  const json = files.find((f) => f.endsWith('.json'));
  expect(json).toBeDefined();
  expect(files).toContain(json!.replace(/\.json$/, '.svg'));
  const result = JSON.parse(fs.readFileSync(path.join(outDir, json!), 'utf8')) as BenchResult;

  expect(result.machine).toMatchObject({ cpus: os.cpus().length, node: process.version });
  expect(result.failures).toEqual([]);
  // Two alternating rounds of floor and create, then the open loops, then the rest.
  expect(result.phases.map((p) => p.name)).toEqual([
    'floor-c2',
    'create-c2',
    'floor-c2',
    'create-c2',
    'open-create-20',
    'open-full-20',
    'full-c1',
    'steady',
    'growth-0',
    'growth-200',
  ]);
  expect(result.phases.slice(0, 4).map((p) => p.round)).toEqual([1, 1, 2, 2]);
  const floorRps = (result.phases[0]!.throughput_rps + result.phases[2]!.throughput_rps) / 2;
  for (const open of result.phases.slice(4, 6)) {
    expect(open.rate_fraction).toBe(0.2);
    expect(open.rate_per_s).toBeCloseTo(floorRps * 0.2, 0);
    expect(open.latency_ms!.p99).toBeGreaterThan(0);
  }
  const [low, high] = result.ratio_ranges.create_vs_floor!;
  expect(low).toBeLessThanOrEqual(result.ratios.create_vs_floor!);
  expect(high).toBeGreaterThanOrEqual(result.ratios.create_vs_floor!);
  for (const p of result.phases) {
    expect(p.errors).toBe(0);
    expect(p.requests).toBeGreaterThan(0);
    expect(p.throughput_rps).toBeGreaterThan(0);
    expect(p.latency_ms!.p50).toBeGreaterThan(0);
    expect(p.latency_ms!.p50).toBeLessThanOrEqual(p.latency_ms!.p95);
    expect(p.latency_ms!.p99).toBeLessThanOrEqual(p.latency_ms!.max);
    // The API and the worker of the bench's own stack are found and measured.
    expect(Object.keys(p.processes)).toEqual(expect.arrayContaining(['api', 'worker', 'temporal', 'bench']));
    expect(p.cpu_s).toBe(Math.round((p.processes.api!.cpu_s + p.processes.worker!.cpu_s) * 100) / 100);
    expect(p.processes.worker!.peak_rss_mb).toBeGreaterThan(50);
    // CPU per operation for each process of the stack, and their sum.
    const perOp = p.cpu_ms_per_op!;
    expect(perOp.total).toBeGreaterThan(0);
    const parts = ['api', 'worker', 'temporal', 'postgres'].map((r) => perOp[r] ?? 0);
    expect(Math.abs(parts.reduce((a, n) => a + n, 0) - perOp.total!)).toBeLessThan(0.05);
  }
  expect(result.phases[7]).toMatchObject({ rate_per_s: 4, time_scale: 0.005 });
  // The growth stack is a fresh one: nothing open before its first phase, then the seeded 200.
  expect(result.phases[8]!.open_orders).toBe(0);
  expect(result.phases[9]!.open_orders).toBeGreaterThanOrEqual(200);
  expect(result.phases[9]!.seeding).toMatchObject({ retries: 0 });
  expect(result.phases[9]!.seeding!.orders).toBeGreaterThan(0);
  // What a paid order cost, from the histories: at least its own workflow and the tasks that
  // took it from created to paid.
  expect(result.order_cost).toMatchObject({ orders: 20 });
  expect(result.order_cost!.workflows).toBeGreaterThanOrEqual(1);
  expect(result.order_cost!.by_type.orderWorkflow).toMatchObject({ workflows: 1 });
  expect(result.order_cost!.workflow_tasks).toBeGreaterThanOrEqual(2);
  expect(result.order_cost!.events).toBeGreaterThan(result.order_cost!.workflow_tasks);
  expect(stdout).toMatch(/a paid order so far \(20 sampled\): [\d.]+ workflows/);
  expect(result.ratios.create_vs_floor).toBeGreaterThan(0);
  expect(result.ratios.lifetime_cpu_vs_create).toBeGreaterThan(0);
  expect(result.ratios.create_cpu_vs_floor).toBeGreaterThan(0);
  expect(result.ratios.worker_rss_mb_at_10k).toBeNull();
  expect(result.ratios.growth_top_level).toBe(200);
  expect(result.ratios.growth_p50_10k_vs_0).toBeNull();

  expect(stdout).toContain('| phase | conc. | requests | req/s |');
  expect(stdout).toMatch(/\| create-c2 \| 2 \| \d+ \|/);
  expect(fs.readFileSync(path.join(outDir, json!.replace(/\.json$/, '.svg')), 'utf8')).toContain(
    '<title>full-c1 p50',
  );
  // Its scratch databases are gone with its stacks.
  expect(await benchDatabases()).toEqual(before);
});

test('when the bench runs on the cluster topology, then every process is measured and the one-worker phases follow', async () => {
  const before = await benchDatabases();
  const { code, stdout, stderr } = await runBench([
    '--topology',
    'cluster',
    '--phases',
    'create,full',
    '--rounds',
    '1',
    '--duration',
    '2',
    '--warmup',
    '0',
    '--concurrency',
    '2',
    '--full-concurrency',
    '1',
    '--out-dir',
    outDir,
  ]);
  // A failed run shows what failed: the bench prints each phase's errors on stdout.
  const printedErrors = stdout.split('\n').filter((l) => / × .*error: |more distinct errors|failed/.test(l));
  expect({ code, stderr: code === 0 ? '' : stderr, printedErrors: code === 0 ? [] : printedErrors }).toEqual({
    code: 0,
    stderr: '',
    printedErrors: [],
  });
  const json = fs
    .readdirSync(outDir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(outDir, f), 'utf8')) as BenchResult)
    .find((r) => r.settings.topology === 'cluster');
  expect(json).toBeDefined();
  const result = json!;
  expect(result.stack).toContain('2 APIs behind a balancer, 2 workers');
  expect(result.phases.map((p) => p.name)).toEqual([
    'create-c2',
    'full-c1',
    'create-c2-1-worker',
    'full-c1-1-worker',
  ]);
  for (const p of result.phases) {
    expect(p.errors).toBe(0);
    expect(p.requests).toBeGreaterThan(0);
    expect(p.processes.api!.cpu_s).toBeCloseTo(p.processes['api-1']!.cpu_s + p.processes['api-2']!.cpu_s, 1);
    expect(Object.keys(p.processes)).toEqual(expect.arrayContaining(['temporal', 'postgres', 'worker-1']));
  }
  expect(Object.keys(result.phases[0]!.processes)).toContain('worker-2');
  expect(Object.keys(result.phases[2]!.processes)).not.toContain('worker-2');
  expect(result.ratios.cluster_create_2_vs_1_workers).toBeGreaterThan(0);
  expect(result.ratios.cluster_full_2_vs_1_workers).toBeGreaterThan(0);
  expect(stderr).toContain('stopping worker-2');
  expect(stdout).toContain('| create-c2-1-worker |');
  // The cluster's scratch databases (durapay's and Temporal's two) are dropped with it.
  const pg = new Client({ connectionString: globalState().adminUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query("SELECT datname FROM pg_database WHERE datname LIKE 'temporal_bench_%'");
    expect(rows).toEqual([]);
  } finally {
    await pg.end();
  }
  expect(await benchDatabases()).toEqual(before);
});

test('when an option is out of range, then the bench refuses it and names it', async () => {
  const { code, stderr } = await runBench(['--concurrency', '0,8']);
  expect(code).not.toBe(0);
  expect(stderr).toContain('--concurrency must be a comma-separated list of integers ≥ 1');
  const remote = await runBench(['--base-url', 'http://example.com:8080']);
  expect(remote.code).not.toBe(0);
  expect(remote.stderr).toContain("--base-url must be an http(s) URL on this machine's loopback");
});
