import fs from 'node:fs';
import path from 'node:path';
import { say } from '../../bench/lib/cli';

/** Writes a run's JSON report as `<name>-<time>.json` in `outDir`, and says where. */
export function writeReport(outDir: string, name: string, report: unknown): string {
  fs.mkdirSync(outDir, { recursive: true });
  const out = path.join(outDir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  say(`report: ${out}`);
  return out;
}

/** Answers counted by `<status> <code>` (`undecided`: none within the deadline). */
export function byAnswer(answers: ({ status: number; code: string } | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const key = a ? `${a.status} ${a.code}` : 'undecided';
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** Counts as `n key, n key`, or `none`. */
export const listCounts = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ') || 'none';
