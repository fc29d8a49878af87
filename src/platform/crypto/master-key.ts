import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config } from '../config';

export const MASTER_KEY_FILE = 'master.key';

/**
 * The master key from DURAPAY_MASTER_KEY; outside production, a key generated once into the
 * data directory (mode 0600) and reused, so development needs no setup.
 */
export function resolveMasterKey(config: Config): Buffer {
  if (config.masterKey) return config.masterKey;
  if (config.env === 'production') {
    throw new ConfigError(
      'invalid configuration: "DURAPAY_MASTER_KEY" is required in production (base64 of 32 random bytes, e.g. `openssl rand -base64 32`)',
    );
  }
  const file = path.join(config.dataDir, MASTER_KEY_FILE);
  try {
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32)
      throw new ConfigError(`invalid configuration: ${file} does not hold a 32-byte base64 key`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    // 'wx': if another process created it meanwhile, use theirs.
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  }
}
