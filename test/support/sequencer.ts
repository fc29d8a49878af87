/**
 * The order jest starts test files in: its own (the files that failed last time first, then the
 * longest first by its cache of past runs), with test/durations.json standing in for that cache
 * where it has none, as on CI's fresh clone. Longest first keeps the two workers busy to the end
 * instead of leaving one file running alone at the tail. `npx tsx test/support/record-durations.ts
 * <jest JSON report>` writes the table anew.
 */
import fs from 'node:fs';
import path from 'node:path';
import Sequencer from '@jest/test-sequencer';
import type { Test } from '@jest/test-result';

const ROOT = path.join(__dirname, '..', '..');

function recorded(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'durations.json'), 'utf8')) as Record<
      string,
      number
    >;
  } catch {
    return {};
  }
}

/** What jest's cache keeps of a file's last run: [0 failed | 1 passed, milliseconds]. */
type Past = [number, number] | undefined;

export default class DurationSequencer extends Sequencer {
  private readonly table = recorded();

  override sort(tests: Test[]): Test[] {
    const past = (t: Test) => (this._getCache(t) as Record<string, Past>)[t.path];
    const failed = (t: Test) => past(t)?.[0] === 0;
    const size = (t: Test) => t.context.hasteFS.getSize(t.path) ?? 0;
    for (const t of tests) {
      const seconds = this.table[path.relative(ROOT, t.path).split(path.sep).join('/')];
      t.duration = past(t)?.[1] ?? (seconds === undefined ? undefined : seconds * 1000);
    }
    // As jest's own sort: failed first; a file with no time at all (new) before the timed ones,
    // by size; the timed ones longest first.
    return [...tests].sort((a, b) => {
      if (failed(a) !== failed(b)) return failed(a) ? -1 : 1;
      if ((a.duration === undefined) !== (b.duration === undefined)) return a.duration === undefined ? -1 : 1;
      if (a.duration !== undefined && b.duration !== undefined) return b.duration - a.duration;
      return size(b) - size(a);
    });
  }
}
