import { spawn } from 'node:child_process';
import {
  commandLine,
  findProcesses,
  foldReplicas,
  processTree,
  UsageMonitor,
} from '../../bench/lib/procstat';

/**
 * A child process that burns `cpuMs` of its own CPU time and then exits: counted on its CPU
 * clock, not the wall's, so that a busy machine makes it slower, never lighter.
 */
function burner(cpuMs: number) {
  const child = spawn(process.execPath, [
    '-e',
    `for (let u = process.cpuUsage(); u.user + u.system < ${cpuMs * 1000}; u = process.cpuUsage());`,
    'bench-burner',
  ]);
  return { child, done: new Promise((r) => child.once('exit', r)) };
}

/** A child process that lives until its stdin is closed. */
function sleeper() {
  const child = spawn(process.execPath, [
    '-e',
    'process.stdin.resume().on("end", () => process.exit(0))',
    'bench-sleeper',
  ]);
  const done = new Promise((r) => child.once('exit', r));
  return { child, stop: () => (child.stdin.end(), done) };
}

describe('bench process accounting (/proc)', () => {
  test('when a child burns CPU, then its tree is charged for it and the parent alone is not', async () => {
    const monitor = new UsageMonitor({ tree: process.pid, alone: process.pid }, new Set(['alone']), 50);
    monitor.start();
    // /proc reports CPU in clock ticks (10 ms), user and system time each rounded down: a
    // burner of 500 ms can read as 490. It burns two ticks more, so what is asserted is the
    // accounting, not the kernel's resolution.
    const { child, done } = burner(520);
    expect(processTree(process.pid)).toContain(child.pid);
    await done;
    const usage = monitor.stop();
    // The burner's CPU reaches the parent's tree as waited-for children's time once it exits;
    // what the parent did meanwhile counts in both, so the difference is the burner's alone.
    const chargedToTreeOnly = Math.round((usage.tree!.cpu_s - usage.alone!.cpu_s) * 100) / 100;
    expect(chargedToTreeOnly).toBeGreaterThanOrEqual(0.5);
    expect(usage.alone!.peak_rss_mb).toBeGreaterThan(10);
  }, 60_000); // however long a busy machine takes to give the burner its CPU

  test('when processes are looked up by command line, then this process is never among them', async () => {
    const { child, stop } = sleeper();
    try {
      expect(commandLine(child.pid!)).toContain('bench-sleeper');
      expect(findProcesses(/bench-sleeper/)).toEqual([child.pid]);
      expect(findProcesses(/jest|node/)).not.toContain(process.pid);
    } finally {
      await stop();
    }
  });
});

describe('replicas of one role', () => {
  test('when api-1 and api-2 are measured, then api is their sum and each keeps its own figures', () => {
    const folded = foldReplicas({
      'api-1': { cpu_s: 1.25, peak_rss_mb: 100 },
      'api-2': { cpu_s: 0.5, peak_rss_mb: 90.5 },
      'worker-1': { cpu_s: 2, peak_rss_mb: 200 },
      temporal: { cpu_s: 3, peak_rss_mb: 300 },
    });
    expect(folded.api).toEqual({ cpu_s: 1.75, peak_rss_mb: 190.5 });
    expect(folded.worker).toEqual({ cpu_s: 2, peak_rss_mb: 200 });
    expect(folded['api-2']).toEqual({ cpu_s: 0.5, peak_rss_mb: 90.5 });
    expect(folded.temporal).toEqual({ cpu_s: 3, peak_rss_mb: 300 });
  });

  test('when a role is measured under its own name, then no replica is added to it', () => {
    const folded = foldReplicas({
      api: { cpu_s: 1, peak_rss_mb: 10 },
      'api-2': { cpu_s: 5, peak_rss_mb: 50 },
    });
    expect(folded.api).toEqual({ cpu_s: 1, peak_rss_mb: 10 });
  });
});
