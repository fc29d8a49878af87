/**
 * Polling schedules as workflows and the services that start them read them. Dependency-free,
 * so that workflow code, Node code and the modules' pure rules may import it.
 */

/** The gap before poll `index` of a schedule; its last gap repeats (platform/polling.ts's gapAt). */
export function pollGap(schedule: number[], index: number): number {
  return schedule[Math.min(index, schedule.length - 1)]!;
}
