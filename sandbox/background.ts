/**
 * What a simulated upstream does after it has answered: callbacks and their retries, settlements
 * and expiries due later. Kept in one place so that close() stops all of it, and so that a caller
 * can wait until nothing is left for an order: idle(key) resolves once no task scheduled under
 * that key is due or running, the tasks those tasks scheduled included. Nothing here keeps a
 * stopping process alive, and a delay beyond what setTimeout can hold (about 24.8 days) is waited
 * out in pieces rather than fired at once.
 */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** What a task is for (an order's number), or undefined for a task of no order in particular. */
export type TaskKey = string | undefined;

export class Background {
  private readonly due = new Map<NodeJS.Timeout, TaskKey>();
  private readonly running = new Map<Promise<void>, TaskKey>();
  private readonly deadlines = new Set<NodeJS.Timeout>();
  private readonly closing = new AbortController();
  private waiters: (() => void)[] = [];

  /** `onError` hears a task's failure; a failed task is never thrown to anyone. */
  constructor(private readonly onError: (err: unknown) => void) {}

  /** Aborted by close(): a request in flight (a callback) listens to it. */
  get signal(): AbortSignal {
    return this.closing.signal;
  }

  /** Runs `task` now, without waiting for it, unless close() came first. */
  run(task: () => void | Promise<void>, key?: string): void {
    if (this.closing.signal.aborted) return;
    const done: Promise<void> = Promise.resolve()
      .then(task)
      .catch((err: unknown) => this.onError(err))
      .finally(() => {
        this.running.delete(done);
        this.changed();
      });
    this.running.set(done, key);
  }

  /** Runs `task` after `ms` unless close() came first. */
  later(ms: number, task: () => void | Promise<void>, key?: string): void {
    if (this.closing.signal.aborted) return;
    const wait = Math.max(0, ms);
    const step = Math.min(wait, LONGEST_TIMER_MS);
    const timer = setTimeout(() => {
      // The next piece, or the task, is registered before this timer is forgotten.
      if (wait > step) this.later(wait - step, task, key);
      else this.run(task, key);
      this.due.delete(timer);
      this.changed();
    }, step);
    timer.unref();
    this.due.set(timer, key);
  }

  /**
   * Runs `task` after `ms` unless close() came first, as later() does; but idle() does not wait
   * for the time to come, only for the task once it runs. For a deadline that someone may beat
   * (a payee's day to confirm a transfer), which is a wait for a person, not work left to do.
   */
  deadline(ms: number, task: () => void | Promise<void>, key?: string): void {
    if (this.closing.signal.aborted) return;
    const wait = Math.max(0, ms);
    const step = Math.min(wait, LONGEST_TIMER_MS);
    const timer = setTimeout(() => {
      this.deadlines.delete(timer);
      if (wait > step) this.deadline(wait - step, task, key);
      else this.run(task, key);
    }, step);
    timer.unref();
    this.deadlines.add(timer);
  }

  /**
   * Resolves once nothing scheduled under `key` (under any key, without one) is due or running:
   * every callback sent and acknowledged or given up, every settlement made. What waits for a
   * request (a callback held until a refund) is not a task.
   */
  async idle(key?: string): Promise<void> {
    const busy = (tasks: Map<unknown, TaskKey>) =>
      [...tasks.values()].some((k) => key === undefined || k === key);
    while (busy(this.due) || busy(this.running)) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Cancels what is due and aborts what is running; idle() then waits only for the aborted. */
  close(): void {
    this.closing.abort();
    for (const timer of [...this.due.keys(), ...this.deadlines]) clearTimeout(timer);
    this.due.clear();
    this.deadlines.clear();
    this.changed();
  }

  private changed(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
