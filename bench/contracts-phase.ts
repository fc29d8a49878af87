/**
 * The contracts phase (SPEC §17): what recurring contracts cost while they wait. `--contracts`
 * monthly contracts (10 000 by default) on the sandbox channel, each offered through the API and
 * signed on the sandbox's page, the first deduction 20 days away; once every one is active, the
 * stack is watched for `--contracts-window` seconds with nothing else running. Reported: the
 * open contract workflows Temporal counts, the worker's and the Temporal server's memory, what
 * the contracts add to the idle stack's CPU (against the same window watched before any
 * contract) as CPU per idle contract per day, and the opening's own rate.
 */
import { randomUUID } from 'node:crypto';
import { describeError, runCount } from './lib/load';
import { say } from './lib/cli';
import { UsageMonitor, type Usage } from './lib/procstat';
import { progressBar } from './lib/progress';
import type { PhaseResult } from './lib/report';
import type { Bench } from './harness';

const DAY_S = 86_400;

/** CPU seconds of the stack's own processes. */
function stackCpu(processes: Record<string, Usage>): number {
  return ['api', 'worker', 'temporal', 'postgres']
    .map((role) => processes[role]?.cpu_s ?? 0)
    .reduce((a, n) => a + n, 0);
}

async function openContracts(b: Bench): Promise<number> {
  const { count } = await b.temporal.workflow.count(
    "WorkflowType = 'contractWorkflow' AND ExecutionStatus = 'Running'",
  );
  return count;
}

export async function contractsPhase(b: Bench, out: PhaseResult[]): Promise<void> {
  const count = b.opts.contracts;
  const windowS = b.opts.contractsWindow;
  // The stack's own idle cost first (Temporal's and the worker's polls, Postgres), over the same
  // window, so that what the contracts add is told apart from it.
  say(`  contracts: watching the stack idle without contracts for ${windowS} s …`);
  const before = new UsageMonitor({ ...b.stack.roles, bench: process.pid }, new Set(['bench']));
  before.start();
  await new Promise((r) => setTimeout(r, windowS * 1000));
  const without = before.stop();
  const baseline = stackCpu(without);
  const firstAt = new Date(Date.now() + 20 * DAY_S * 1000).toISOString();
  const errors: Record<string, number> = {};
  let retries = 0;
  const numbers: string[] = [];
  const opened = await runCount({
    count,
    concurrency: b.opts.seedConcurrency,
    timeoutMs: 120_000,
    operation: async (seq) => {
      const input = {
        merchant_contract_no: `BK-${b.runTag}-${seq}-${randomUUID().slice(0, 8)}`,
        channel_code: 'sandbox',
        plan: { period: 'month' as const, every: 1, amount: 1_990, first_at: firstAt },
        subject: 'Bench, membership',
        notify_url: b.receiver.url,
      };
      // Sent again with the same number when an answer fails: a repeat is the same contract.
      for (let attempt = 1; ; attempt++) {
        try {
          const c = await b.sdk.createContract(input);
          if (c.sign_url) {
            const signed = await fetch(c.sign_url, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ result: 'sign' }),
            });
            if (signed.status !== 200) throw new Error(`the sign page answered ${signed.status}`);
          }
          numbers.push(c.contract_no);
          return;
        } catch (err) {
          retries += 1;
          const key = describeError(err);
          errors[key] = (errors[key] ?? 0) + 1;
          if (attempt >= 5) throw err;
          await new Promise((r) => setTimeout(r, 1_000 * attempt));
        }
      }
    },
    progress: progressBar('contracts', count, 'signed'),
  });
  say(
    `  contracts: ${opened.done} offered and signed in ${(opened.elapsedMs / 1000).toFixed(0)} s; waiting for every one active …`,
  );
  // Active once its workflow has the signature (the sandbox's notification, or its own look).
  const deadline = Date.now() + 10 * 60_000;
  let active = 0;
  while (Date.now() < deadline) {
    const { count: n } = await b.temporal.workflow.count(
      "WorkflowType = 'contractWorkflow' AND ExecutionStatus = 'Running' AND BizStatus = 'active'",
    );
    active = n;
    if (active >= opened.done) break;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const sample = numbers.slice(0, 20);
  const statuses = await Promise.all(sample.map(async (no) => (await b.sdk.getContract(no)).status));
  const notActive = statuses.filter((s) => s !== 'active').length;
  say(`  contracts: ${active} active; watching the idle stack for ${windowS} s …`);
  const monitor = new UsageMonitor({ ...b.stack.roles, bench: process.pid }, new Set(['bench']));
  monitor.start();
  await new Promise((r) => setTimeout(r, windowS * 1000));
  const processes: Record<string, Usage> = monitor.stop();
  const open = await openContracts(b);
  const stackCpuS = stackCpu(processes);
  // What the waiting contracts add to the idle stack, per contract and scaled to a day.
  const perContractDayMs = open > 0 ? (((stackCpuS - baseline) * 1000) / open) * (DAY_S / windowS) : null;
  say(
    `  contracts: ${open} contract workflows open; worker ${processes.worker?.peak_rss_mb ?? '?'} MiB, Temporal ${processes.temporal?.peak_rss_mb ?? '?'} MiB; ` +
      `${stackCpuS.toFixed(2)} CPU s in ${windowS} s (${baseline.toFixed(2)} without contracts): ${perContractDayMs === null ? '?' : perContractDayMs.toFixed(3)} ms per contract per day` +
      (retries > 0 ? `; ${retries} offer(s) sent again: ${JSON.stringify(errors)}` : ''),
  );
  out.push({
    name: `contracts-${count}`,
    concurrency: b.opts.seedConcurrency,
    requests: opened.done,
    throughput_rps: Math.round((opened.done / Math.max(opened.elapsedMs / 1000, 0.001)) * 10) / 10,
    latency_ms: null,
    errors: count - opened.done + notActive,
    cpu_s: stackCpuS,
    peak_rss_mb: (processes.api?.peak_rss_mb ?? 0) + (processes.worker?.peak_rss_mb ?? 0),
    processes,
    error_messages: errors,
    contracts: {
      signed: opened.done,
      active,
      open_workflows: open,
      retries,
      window_s: windowS,
      idle_cpu_s_without: Math.round(baseline * 100) / 100,
      idle_cpu_s_with: Math.round(stackCpuS * 100) / 100,
      processes_without: without,
      worker_rss_mb: processes.worker?.peak_rss_mb ?? null,
      temporal_rss_mb: processes.temporal?.peak_rss_mb ?? null,
      cpu_ms_per_contract_day: perContractDayMs === null ? null : Math.round(perContractDayMs * 1000) / 1000,
    },
    measures: `${count} monthly contracts offered and signed on the sandbox (throughput: offers signed per second, ${b.opts.seedConcurrency} at a time), their first deduction 20 days away; then ${windowS} s with only them alive: the stack's CPU in that window (api, worker, temporal, postgres) less its CPU over the same window before any contract, per open contract and scaled to a day, and each process's peak memory in the window`,
  });
}
