import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { CoreConfig } from '../config';
import { dataDirSecret } from './data-dir-secret';

export const CODEC_TOKEN_FILE = 'codec.token';

/**
 * The operator token of the codec server: DURAPAY_CODEC_TOKEN; outside production, one generated
 * once into the data directory (mode 0600), so `npm start` works with no setup and the operator
 * reads it from there. Production without it serves no decoding at all.
 */
export function resolveCodecToken(config: CoreConfig): string | undefined {
  if (config.codec.token !== undefined) return config.codec.token;
  if (config.env === 'production') return undefined;
  return dataDirSecret(
    config.dataDir,
    CODEC_TOKEN_FILE,
    () => `${randomBytes(32).toString('base64url')}\n`,
  ).trim();
}

export function codecTokenFile(config: CoreConfig): string {
  return path.join(config.dataDir, CODEC_TOKEN_FILE);
}
