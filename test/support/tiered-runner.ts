/**
 * How jest runs the test files (jest.config.js names this runner): a file whose first comment
 * says `@runs-alone` runs with no other file beside it, one at a time; every other file runs as
 * many at once as jest's `maxWorkers` (two in CI). The alone files are those that bring up whole
 * stacks of their own (chaos, bench, fuzz, the cluster) or that race production's deadlines on
 * purpose: on two cores, another file beside them would measure the machine, not durapay.
 *
 * Nothing else changes: each file runs exactly as jest's own runner runs it (the same runner,
 * called twice), and `--runInBand` (or `maxWorkers` 1) still runs everything one at a time.
 */
import fs from 'node:fs';
import TestRunner, { type Test, type TestRunnerOptions, type TestWatcher } from 'jest-runner';

const ALONE = /^\s*\*\s*@runs-alone\b/m;

/** Whether the file's first doc comment marks it `@runs-alone`. */
export function runsAlone(file: string): boolean {
  const header = /^\/\*\*[\s\S]*?\*\//.exec(fs.readFileSync(file, 'utf8'))?.[0] ?? '';
  return ALONE.test(header);
}

export default class TieredRunner extends TestRunner {
  override async runTests(tests: Test[], watcher: TestWatcher, options: TestRunnerOptions): Promise<void> {
    if (options.serial) return super.runTests(tests, watcher, options);
    const alone = tests.filter((t) => runsAlone(t.path));
    const together = tests.filter((t) => !runsAlone(t.path));
    // The shared files first, the longest ones first (jest's order), then the alone ones.
    if (together.length > 0) await super.runTests(together, watcher, options);
    if (alone.length > 0 && !watcher.isInterrupted()) {
      await super.runTests(alone, watcher, { ...options, serial: true });
    }
  }
}
