import cliProgress from 'cli-progress';

/** What a long step reports while it runs; the bench draws it as a progress bar on stderr. */
export interface Progress {
  update(done: number, detail?: string): void;
  stop(): void;
}

/** A bar per step, on stderr (stdout carries the report); a line every 2 s when stderr is not a terminal. */
export function progressBar(label: string, total: number, unit: string): Progress {
  const bar = new cliProgress.SingleBar(
    {
      format: `${label.padEnd(16)} |{bar}| {value}/{total} ${unit} {detail}`,
      barsize: 24,
      hideCursor: null,
      noTTYOutput: true,
      notTTYSchedule: 2_000,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { detail: '' });
  return {
    update(done, detail = '') {
      bar.update(Math.min(total, Math.round(done)), { detail });
    },
    stop() {
      bar.stop();
    },
  };
}

/** For callers that want no output (tests of the load generator). */
export const silentProgress: Progress = { update() {}, stop() {} };
