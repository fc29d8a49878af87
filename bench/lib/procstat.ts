/**
 * CPU time and resident memory of the stack's processes, read from Linux's /proc. Each role
 * (api, worker, temporal, postgres) is a process and its descendants, so Postgres's backends
 * count with their postmaster.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export interface Usage {
  cpu_s: number;
  peak_rss_mb: number;
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

const PAGE_KB = 4;

interface Stat {
  ppid: number;
  /** utime + stime, in ticks. */
  ownTicks: number;
  /** The same of its children that ended and were waited for (cutime + cstime). */
  reapedTicks: number;
  rssKb: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime is field 14, stime 15, cutime 16, cstime 17, rss 24.
    const n = (field: number) => Number(fields[field - 3]);
    return { ppid: n(4), ownTicks: n(14) + n(15), reapedTicks: n(16) + n(17), rssKb: n(24) * PAGE_KB };
  } catch {
    return undefined; // gone
  }
}

/** Linux's /proc; elsewhere no process is found and no CPU or memory is reported. */
export const HAS_PROC = fs.existsSync('/proc/self/stat');

function allPids(): number[] {
  if (!HAS_PROC) return [];
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number);
}

interface Snapshot {
  stats: Map<number, Stat>;
  children: Map<number, number[]>;
}

/** One pass over /proc: every process's counters and who its children are. */
function snapshot(): Snapshot {
  const stats = new Map<number, Stat>();
  const children = new Map<number, number[]>();
  for (const pid of allPids()) {
    const st = readStat(pid);
    if (!st) continue;
    stats.set(pid, st);
    const siblings = children.get(st.ppid);
    if (siblings) siblings.push(pid);
    else children.set(st.ppid, [pid]);
  }
  return { stats, children };
}

function treeOf(snap: Snapshot, root: number): number[] {
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of snap.children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** `root` and every process below it. */
export function processTree(root: number): number[] {
  return treeOf(snapshot(), root);
}

/** The command line of a process, arguments joined by spaces; '' when it is gone. */
export function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Processes whose command line matches, with the oldest (lowest pid) first. */
export function findProcesses(pattern: RegExp): number[] {
  return allPids()
    .filter((pid) => pid !== process.pid && pattern.test(commandLine(pid)))
    .sort((a, b) => a - b);
}

function treeSample(snap: Snapshot, root: number, withChildren: boolean): { ticks: number; rssKb: number } {
  let ticks = 0;
  let rssKb = 0;
  for (const pid of withChildren ? treeOf(snap, root) : [root]) {
    const st = snap.stats.get(pid);
    if (!st) continue;
    // A child that ends moves its time into its parent's reaped time: a tree counts both.
    ticks += st.ownTicks + (withChildren ? st.reapedTicks : 0);
    rssKb += st.rssKb;
  }
  return { ticks, rssKb };
}

/**
 * Measures named process trees over a phase: CPU seconds used between start() and stop(), and
 * the peak of their resident memory, sampled every `intervalMs`.
 */
export class UsageMonitor {
  private startTicks = new Map<string, number>();
  private peakKb = new Map<string, number>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly roots: Record<string, number>,
    /** Roles measured as the one process, without what it started (the bench itself). */
    private readonly alone: ReadonlySet<string> = new Set(),
    private readonly intervalMs = 200,
  ) {}

  start(): void {
    const snap = snapshot();
    for (const [name, pid] of Object.entries(this.roots)) {
      const s = treeSample(snap, pid, !this.alone.has(name));
      this.startTicks.set(name, s.ticks);
      this.peakKb.set(name, s.rssKb);
    }
    this.timer = setInterval(() => this.sample(), this.intervalMs);
  }

  private sample(): Map<string, number> {
    const ticks = new Map<string, number>();
    const snap = snapshot();
    for (const [name, pid] of Object.entries(this.roots)) {
      const s = treeSample(snap, pid, !this.alone.has(name));
      ticks.set(name, s.ticks);
      this.peakKb.set(name, Math.max(this.peakKb.get(name) ?? 0, s.rssKb));
    }
    return ticks;
  }

  stop(): Record<string, Usage> {
    clearInterval(this.timer);
    if (!HAS_PROC) return {};
    const ticks = this.sample();
    const hz = clockTicks();
    const out: Record<string, Usage> = {};
    for (const name of Object.keys(this.roots)) {
      out[name] = {
        cpu_s: Math.round((((ticks.get(name) ?? 0) - (this.startTicks.get(name) ?? 0)) / hz) * 100) / 100,
        peak_rss_mb: Math.round(((this.peakKb.get(name) ?? 0) / 1024) * 10) / 10,
      };
    }
    return foldReplicas(out);
  }
}

/**
 * Adds, for replicas of one role (`api-1`, `api-2` in the cluster topology), the role's total
 * (`api`): CPU seconds and peak resident memory summed, beside each replica's own figures.
 */
export function foldReplicas(usage: Record<string, Usage>): Record<string, Usage> {
  const out = { ...usage };
  for (const [name, u] of Object.entries(usage)) {
    const base = /^(.+)-\d+$/.exec(name)?.[1];
    if (!base || base in usage) continue;
    const sum = out[base] ?? { cpu_s: 0, peak_rss_mb: 0 };
    out[base] = {
      cpu_s: Math.round((sum.cpu_s + u.cpu_s) * 100) / 100,
      peak_rss_mb: Math.round((sum.peak_rss_mb + u.peak_rss_mb) * 10) / 10,
    };
  }
  return out;
}
