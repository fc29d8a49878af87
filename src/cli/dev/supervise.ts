import type { ChildProcess } from 'node:child_process';
import { stopChild } from '../../platform/process';

/** How a crashed child of `durapay start` is restarted, and when the supervisor gives up. */
export interface RestartPolicy {
  /** Waits before the 1st, 2nd, … restart in a row; the last one repeats. */
  delaysMs: readonly number[];
  /** A child that ran this long before it stopped starts the waits again from the first. */
  stableAfterMs: number;
  /** Restarts allowed within `windowMs`; one more and the whole stack stops. */
  maxRestarts: number;
  windowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  delaysMs: [1_000, 2_000, 4_000, 8_000, 15_000],
  stableAfterMs: 60_000,
  maxRestarts: 8,
  windowMs: 10 * 60_000,
};

export interface SupervisedOptions {
  /** For people: "worker", "API", "Temporal dev server", "embedded Postgres". */
  name: string;
  /** Starts the child and resolves once it is ready to be relied on (or at once, for the worker and API). */
  launch: () => Promise<ChildProcess>;
  say: (line: string) => void;
  /** Called once when the child crashed more often than the policy allows. */
  giveUp: (reason: string) => void;
  policy?: RestartPolicy;
  /** The grace period of a stop (SIGTERM, then SIGKILL). */
  stopGraceMs: number;
  /** The clock run times and the restart window are measured on (Date.now); tests pass their own. */
  now?: () => number;
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}

/**
 * One child of the development supervisor, restarted with backoff when it exits unexpectedly,
 * each time with a line saying why and when; past the policy's limit the supervisor is told to
 * stop the stack with the reason. Stopping it on purpose never restarts it.
 */
export class Supervised {
  private child?: ChildProcess;
  private stopping = false;
  private restarts: number[] = [];
  /** Restarts since the child last ran for `stableAfterMs`. */
  private inARow = 0;
  private startedAt = 0;
  private timer?: NodeJS.Timeout;
  private readonly policy: RestartPolicy;
  private readonly now: () => number;

  constructor(private readonly opts: SupervisedOptions) {
    this.policy = opts.policy ?? DEFAULT_RESTART_POLICY;
    this.now = opts.now ?? Date.now;
  }

  /** The running process (it changes with every restart). */
  get process(): ChildProcess | undefined {
    return this.child;
  }

  /** The first start: a failure here is the caller's to report. */
  async start(): Promise<void> {
    this.watch(await this.opts.launch());
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    if (this.child) await stopChild(this.child, this.opts.stopGraceMs);
  }

  private watch(child: ChildProcess): void {
    this.child = child;
    this.startedAt = this.now();
    child.once('exit', (code, signal) => {
      if (this.stopping || this.child !== child) return;
      this.crashed(describeExit(code, signal));
    });
  }

  private crashed(how: string): void {
    const now = this.now();
    this.restarts = this.restarts.filter((t) => now - t < this.policy.windowMs);
    const minutes = Math.round(this.policy.windowMs / 60_000);
    if (this.restarts.length >= this.policy.maxRestarts) {
      this.opts.giveUp(
        `the ${this.opts.name} stopped ${this.restarts.length + 1} times within ${minutes} min (last: ${how})`,
      );
      return;
    }
    this.restarts.push(now);
    const n = this.restarts.length;
    if (now - this.startedAt >= this.policy.stableAfterMs) this.inARow = 0;
    const delay = this.policy.delaysMs[Math.min(this.inARow, this.policy.delaysMs.length - 1)]!;
    this.inARow += 1;
    this.opts.say(
      `The ${this.opts.name} stopped unexpectedly (${how}); restarting it in ${delay / 1000} s ` +
        `(restart ${n} of at most ${this.policy.maxRestarts} within ${minutes} min) …`,
    );
    this.timer = setTimeout(() => {
      if (this.stopping) return;
      this.opts
        .launch()
        .then((child) => {
          if (this.stopping) {
            void stopChild(child, this.opts.stopGraceMs);
            return;
          }
          this.watch(child);
          this.opts.say(`The ${this.opts.name} is running again (pid ${child.pid}).`);
        })
        .catch((err: unknown) => {
          if (!this.stopping)
            this.crashed(`could not start: ${err instanceof Error ? err.message : String(err)}`);
        });
    }, delay);
  }
}
