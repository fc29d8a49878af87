import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ConfigError, type CoreConfig } from '../config';
import { dataDirSecret } from './data-dir-secret';

export const MASTER_KEY_FILE = 'master.key';

/**
 * The master key from DURAPAY_MASTER_KEY; outside production, a key generated once into the
 * data directory (mode 0600) and reused, so development needs no setup.
 */
export function resolveMasterKey(config: CoreConfig): Buffer {
  if (config.masterKey) return config.masterKey;
  if (config.env === 'production') {
    throw new ConfigError(
      'invalid configuration: "DURAPAY_MASTER_KEY" is required in production (base64 of 32 random bytes, e.g. `openssl rand -base64 32`)',
    );
  }
  const file = path.join(config.dataDir, MASTER_KEY_FILE);
  const key = Buffer.from(
    dataDirSecret(config.dataDir, MASTER_KEY_FILE, () => `${randomBytes(32).toString('base64')}\n`).trim(),
    'base64',
  );
  if (key.length !== 32)
    throw new ConfigError(`invalid configuration: ${file} does not hold a 32-byte base64 key`);
  return key;
}
