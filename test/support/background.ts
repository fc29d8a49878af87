/**
 * A simulated upstream's work after its answers (sandbox/background.ts), with the delay of each
 * task it schedules for later kept: a test reads what was scheduled instead of timing what
 * arrived, and counts what arrived once nothing is left to do for the order (`idle(key)`).
 */
import { Background } from '../../sandbox/background';

export class RecordedBackground extends Background {
  readonly scheduled: { key: string | undefined; ms: number }[] = [];

  override later(ms: number, task: () => void | Promise<void>, key?: string): void {
    this.scheduled.push({ key, ms });
    super.later(ms, task, key);
  }

  /** The delays of the tasks scheduled for later under `key`, in the order they were scheduled. */
  delaysFor(key: string): number[] {
    return this.scheduled.filter((t) => t.key === key).map((t) => t.ms);
  }
}
