import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A secret kept in the data directory outside production (the master key, the payload keys, the
 * codec token): the file's text, made by `make` the first time. The file is created atomically
 * (written to a file of its own, mode 0600, then linked into place), so that a process reading it
 * meanwhile, or after a crash, never finds it empty; if another process created it first, its
 * secret stands and is the one answered.
 */
export function dataDirSecret(dataDir: string, name: string, make: () => string): string {
  const file = path.join(dataDir, name);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(temporary, make(), { mode: 0o600 });
  try {
    fs.linkSync(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.unlinkSync(temporary);
  }
  return fs.readFileSync(file, 'utf8');
}
