/**
 * The gateway's timers (notification retries, slow refunds, asynchronous settles, trade expiry),
 * all stopped by one close(). None keeps a stopping process alive, and a delay beyond what
 * setTimeout can hold (about 24.8 days) is waited out in pieces rather than fired at once.
 */
export interface SchedulerLogger {
  warn(message: string, meta?: object): void;
}

const LONGEST_TIMER_MS = 2 ** 31 - 1;

export class Scheduler {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly closing = new AbortController();

  constructor(private readonly logger: SchedulerLogger) {}

  /** Aborted by close(): a request in flight (a notification) listens to it. */
  get signal(): AbortSignal {
    return this.closing.signal;
  }

  /** Runs `job` after `ms` unless close() came first; a failure is logged, never thrown. */
  later(ms: number, job: () => void | Promise<void>): void {
    if (this.closing.signal.aborted) return;
    const wait = Math.max(0, ms);
    const step = Math.min(wait, LONGEST_TIMER_MS);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (wait > step) {
        this.later(wait - step, job);
        return;
      }
      Promise.resolve()
        .then(job)
        .catch((err: unknown) =>
          this.logger.warn('alipay sandbox timer failed', {
            error: err instanceof Error ? err.message : String(err),
          }),
        );
    }, step);
    timer.unref();
    this.timers.add(timer);
  }

  close(): void {
    this.closing.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
