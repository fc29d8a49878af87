/**
 * Writes test/durations.json from a jest JSON report (`npx jest --json --outputFile=report.json`,
 * or the one `.ci/run` prints from): each test file's seconds, which the sequencer
 * (test/support/sequencer.ts) reads to start the longest files first on a machine with no jest
 * cache of its own, such as CI's fresh clone.
 *
 *   npx tsx test/support/record-durations.ts report.json
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

interface Report {
  testResults: { name: string; startTime: number; endTime: number }[];
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: npx tsx test/support/record-durations.ts <jest JSON report>\n');
  process.exit(2);
}
const report = JSON.parse(fs.readFileSync(file, 'utf8')) as Report;
const seconds: Record<string, number> = {};
for (const r of [...report.testResults].sort((a, b) => a.name.localeCompare(b.name))) {
  // Named from test/ on, so that a report from another checkout (CI's clone) records the same keys.
  const name = /(?:^|\/)(test\/.*)$/.exec(r.name.split(path.sep).join('/'))?.[1] ?? r.name;
  seconds[name] = Math.max(1, Math.round((r.endTime - r.startTime) / 1000));
}
fs.writeFileSync(path.join(ROOT, 'test', 'durations.json'), `${JSON.stringify(seconds, null, 2)}\n`);
process.stdout.write(`test/durations.json: ${Object.keys(seconds).length} files\n`);
