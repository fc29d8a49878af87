/**
 * `npm run bench`: how fast durapay takes payments, side by side with the floor of the Temporal
 * server it runs on, measured in the same run on the same machine. See docs/performance.md
 * for what each phase measures and the latest figures.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TEMPORAL_CLI_VERSION } from '../src/cli/dev/temporal-cli';
import { TEMPORAL_SERVER_VERSION } from '../src/cli/dev/temporal-server';
import { withStack } from './harness';
import { say } from './lib/cli';
import { HAS_PROC } from './lib/procstat';
import { latencyChartSvg, markdownSummary, type BenchResult, type PhaseResult } from './lib/report';
import { stopAllStacks } from './lib/stack';
import { ROOT, parseOptions } from './options';
import { createPhases, floorPhases, fullPhases, laterRounds, oneWorkerPhases, openPhases } from './phases';
import { orderCostPhase, type OrderCost } from './order-cost';
import { growthPhases, steadyPhase } from './population-phases';
import { reconcilePhase } from './reconcile-phase';
import { consolePhase } from './console-phase';
import { barcodePhases } from './barcode-phase';
import { checkoutPhases } from './checkout-phase';
import { contractsPhase } from './contracts-phase';
import { ratiosOf, targets } from './targets';

function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  return {
    cpus: cpus.length,
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    temporal_cli: TEMPORAL_CLI_VERSION,
    temporal_server: TEMPORAL_SERVER_VERSION,
    durapay_commit: commit,
  };
}

// The stacks' processes run in their own process group: Ctrl-C reaches only the bench, which
// stops them before it exits.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`\n${signal}: stopping …`);
    void stopAllStacks().finally(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv);
  if (!HAS_PROC)
    say('No /proc on this system: CPU and memory of the processes are not measured (Linux only).');
  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  fs.mkdirSync(opts.outDir, { recursive: true });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-bench-'));
  // Under root, the embedded Postgres runs as the `postgres` user, which must reach its data dir.
  fs.chmodSync(scratch, 0o755);
  const phases: PhaseResult[] = [];
  const failures: { stage: string; error: string }[] = [];
  let stackDescription = '';
  let orderCost: OrderCost | null = null;
  /** A failed stage is reported and the run goes on, so the phases measured so far are kept. */
  const attempt = async (stage: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      failures.push({ stage, error });
      process.stdout.write(`${stage} failed: ${error}\n`);
    }
  };
  try {
    const first = opts.phases.filter((p) => p !== 'growth' && p !== 'steady');
    if (first.length) {
      await attempt(first.join(', '), () =>
        withStack(opts, path.join(scratch, 'stack-a'), first.join(', '), async (b) => {
          stackDescription = b.stack.description;
          if (first.includes('floor')) await attempt('floor', () => floorPhases(b, phases));
          if (first.includes('create')) await attempt('create', () => createPhases(b, phases));
          if (b.opts.rounds > 1) await attempt('later rounds', () => laterRounds(b, phases, first));
          if (first.includes('open')) await attempt('open', () => openPhases(b, phases));
          if (first.includes('full')) await attempt('full', () => fullPhases(b, phases));
          if (first.includes('full')) {
            await attempt('order cost', async () => {
              orderCost = await orderCostPhase(b);
            });
          }
          if (b.stack.cluster) await attempt('one worker', () => oneWorkerPhases(b, phases));
          if (first.includes('reconcile')) await attempt('reconcile', () => reconcilePhase(b, phases));
          if (first.includes('console')) await attempt('console', () => consolePhase(b, phases));
          if (first.includes('barcode')) await attempt('barcode', () => barcodePhases(b, phases));
          if (first.includes('checkout')) await attempt('checkout', () => checkoutPhases(b, phases));
          if (first.includes('contracts')) await attempt('contracts', () => contractsPhase(b, phases));
        }),
      );
    }
    if (opts.phases.includes('steady')) {
      // Its own stack, time scaled so that an order's whole life fits in the run; a running
      // stack (--base-url) must run with DURAPAY_TIME_SCALE equal to --time-scale.
      await attempt('steady', () =>
        withStack(
          opts,
          path.join(scratch, 'stack-s'),
          'steady',
          async (b) => {
            stackDescription ||= b.stack.description;
            await steadyPhase(b, phases);
          },
          { DURAPAY_TIME_SCALE: String(opts.timeScale) },
        ),
      );
    }
    if (opts.phases.includes('growth')) {
      // A fresh stack, so that "0 open orders" is not the orders of the phases before.
      await attempt('growth', () =>
        withStack(opts, path.join(scratch, 'stack-b'), 'growth', async (b) => {
          stackDescription ||= b.stack.description;
          await growthPhases(b, phases);
        }),
      );
    }
  } finally {
    if (!opts.keep) fs.rmSync(scratch, { recursive: true, force: true });
    else say(`Kept the scratch directory ${scratch}`);
  }

  const { ratios, ratioRanges } = ratiosOf(phases, opts);
  const result: BenchResult = {
    started_at: startedAt.toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    machine: machine(),
    stack: stackDescription,
    settings: {
      duration_s: opts.duration,
      warmup_s: opts.warmup,
      concurrency: opts.concurrency,
      full_concurrency: opts.fullConcurrency,
      growth: opts.growth,
      growth_concurrency: opts.growthConcurrency,
      seed_concurrency: opts.seedConcurrency,
      steady_rate: opts.steadyRate,
      steady_window_s: opts.steadyWindow,
      time_scale: opts.timeScale,
      phases: opts.phases,
      topology: opts.topology,
      rounds: opts.rounds,
      open_rates_percent: opts.openRates,
    },
    phases,
    order_cost: orderCost,
    failures,
    ratios,
    ratio_ranges: ratioRanges,
    targets: targets(phases, ratios, opts),
  };
  const jsonPath = path.join(opts.outDir, `${stamp}.json`);
  const svgPath = path.join(opts.outDir, `${stamp}.svg`);
  fs.writeFileSync(jsonPath, `${JSON.stringify(result, null, 2)}\n`);
  fs.writeFileSync(svgPath, latencyChartSvg(result));
  process.stdout.write(`\n${markdownSummary(result)}\n`);
  say(`Wrote ${path.relative(process.cwd(), jsonPath)} and ${path.relative(process.cwd(), svgPath)}`);
  // An open-loop phase offered more than the stack can take times out requests by design: its
  // errors are a measurement (reported, in the JSON too), not a failure of the run.
  const overload = phases.filter((p) => p.rate_fraction !== undefined).reduce((sum, p) => sum + p.errors, 0);
  const errors = phases.reduce((sum, p) => sum + p.errors, 0) - overload;
  if (overload > 0) say(`${overload} request(s) of the open-loop phases failed under their offered load`);
  if (errors > 0 || failures.length > 0) {
    say(`${errors} request(s) and ${failures.length} stage(s) failed: see the errors printed above`);
    process.exitCode = 1;
  }
}

main()
  .then(() => process.exit(process.exitCode ?? 0))
  .catch((err: unknown) => {
    say(`bench: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
