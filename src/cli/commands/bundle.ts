import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflows } from '../../worker';
import { boot } from '../boot';
import { fail } from '../config';

/** `durapay bundle`. */
export async function bundle(opts: { out: string; diagnostics?: boolean }): Promise<void> {
  const { logger } = boot('bundle');
  const code = await bundleWorkflows(logger, { diagnostics: opts.diagnostics === true }).catch(fail);
  fs.mkdirSync(path.dirname(path.resolve(opts.out)), { recursive: true });
  fs.writeFileSync(opts.out, code);
  console.error(`wrote ${opts.out} (${(code.length / 1024).toFixed(0)} KiB)`);
}
