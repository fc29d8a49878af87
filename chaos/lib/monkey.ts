/**
 * Kills the parts of a running `durapay start` with SIGKILL, at chosen moments, and measures
 * how long the stack takes to answer `/readyz` again. The parts are found afresh before each
 * kill, below the supervisor's pid, because every restart gives them new pids.
 */
import { commandLine, processTree } from '../../bench/lib/procstat';

export const COMPONENTS = ['worker', 'api', 'temporal', 'postgres'] as const;
export type Component = (typeof COMPONENTS)[number];

const PATTERNS: Record<Component, RegExp> = {
  worker: /durapay\.js worker$/,
  api: /durapay\.js api$/,
  temporal: / server start-dev /,
  // The postmaster itself (its backends show as "postgres: …"), not the durapay wrapper.
  postgres: /\/bin\/postgres -D /,
};

/** The current pid of a component of the stack below `supervisorPid`. */
export function findComponent(supervisorPid: number, component: Component): number | undefined {
  return processTree(supervisorPid)
    .slice(1)
    .find((pid) => PATTERNS[component].test(commandLine(pid)));
}

export interface Kill {
  component: Component;
  at: number;
  pid?: number;
  /** Milliseconds from the kill until /readyz answered 200 again; undefined if it never did. */
  recoveredMs?: number;
}

/** When to kill what: each component `times` times, spread over the window, in a shuffled order. */
export function killPlan(
  times: number,
  fromMs: number,
  toMs: number,
  random: () => number,
): { component: Component; atMs: number }[] {
  const plan: Component[] = [];
  for (let i = 0; i < times; i++) plan.push(...COMPONENTS);
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  const step = (toMs - fromMs) / plan.length;
  return plan.map((component, i) => ({ component, atMs: Math.round(fromMs + step * (i + random() * 0.5)) }));
}

async function ready(baseUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * Kills the component now (or, while the supervisor is still starting it again, as soon as it is
 * there) and waits until the stack is ready again (at most `timeoutMs` each).
 */
export async function killAndWait(
  baseUrl: string,
  supervisorPid: number,
  component: Component,
  timeoutMs: number,
): Promise<Kill> {
  const deadline = Date.now() + timeoutMs;
  let pid = findComponent(supervisorPid, component);
  // A part the supervisor is still starting again (after an earlier kill, of it or of what it
  // needs) is not there yet: the kill waits for it, so that every planned kill is made.
  while (pid === undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    pid = findComponent(supervisorPid, component);
  }
  const at = Date.now();
  if (pid === undefined) return { component, at };
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return { component, at };
  }
  // Readiness may still say ok for a moment before the stack notices the kill.
  await new Promise((r) => setTimeout(r, 500));
  // Back when the supervisor has started it again and the stack answers ready.
  while (Date.now() - at < timeoutMs) {
    const again = findComponent(supervisorPid, component);
    if (again !== undefined && again !== pid && (await ready(baseUrl))) {
      return { component, at, pid, recoveredMs: Date.now() - at };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { component, at, pid };
}
