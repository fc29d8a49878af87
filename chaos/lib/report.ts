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
