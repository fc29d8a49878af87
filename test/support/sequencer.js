/**
 * The order jest starts test files in: its own (the files that failed last time first, then the
 * longest first by its cache of past runs), with test/durations.json standing in for that cache
 * where it has none, as on CI's fresh clone. Longest first keeps the two workers busy to the end
 * instead of leaving one file running alone at the tail. `npx tsx test/support/record-durations.ts
 * <jest JSON report>` writes the table anew. Plain JavaScript: jest loads a sequencer untransformed.
 */
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.join(__dirname, '..', '..');

/** @returns {Record<string, number>} seconds per file, named from the repository's root. */
function recorded() {
  try {
    return JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'durations.json'), 'utf8'));
  } catch {
    return {};
  }
}

class DurationSequencer extends Sequencer {
  table = recorded();

  /** @param {import('@jest/test-result').Test[]} tests */
  sort(tests) {
    // What jest's cache keeps of a file's last run: [0 failed | 1 passed, milliseconds].
    const past = (t) => this._getCache(t)[t.path];
    const failed = (t) => past(t)?.[0] === 0;
    const size = (t) => t.context.hasteFS.getSize(t.path) ?? 0;
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

module.exports = DurationSequencer;
