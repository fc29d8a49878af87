import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, type CoreConfig } from '../config';
import { dataDirSecret } from './data-dir-secret';

/**
 * The keys that seal sensitive data at rest: Temporal payloads (the payload codec) and applicant
 * data in Postgres. Each key has an id that is written beside what it sealed, so keys rotate: the
 * first key seals everything new, and every key listed still opens what it sealed before.
 */
export interface PayloadKey {
  id: string;
  key: Buffer;
}

/** 1–32 characters, safe in payload metadata, log lines and a sealed field's prefix. */
const KEY_ID = /^[A-Za-z0-9._-]{1,32}$/;

export const PAYLOAD_KEYS_FILE = 'payload.keys';

export class Keyring {
  private readonly byId: ReadonlyMap<string, Buffer>;

  /** `keys[0]` is the current key. */
  constructor(readonly keys: readonly PayloadKey[]) {
    if (keys.length === 0) throw new Error('a keyring needs at least one key');
    const byId = new Map<string, Buffer>();
    for (const [i, { id, key }] of keys.entries()) {
      // Named by its place, never echoed: what stands where an id goes may be a key.
      if (!KEY_ID.test(id))
        throw new Error(`payload key id of entry ${i + 1} must be 1-32 characters of A-Z a-z 0-9 . _ -`);
      if (key.length !== 32) throw new Error(`payload key ${id} must be 32 bytes`);
      if (byId.has(id)) throw new Error(`payload key id ${id} is given twice`);
      byId.set(id, key);
    }
    this.byId = byId;
  }

  /** The key that seals everything new. */
  get current(): PayloadKey {
    return this.keys[0]!;
  }

  key(id: string): Buffer | undefined {
    return this.byId.get(id);
  }

  ids(): string[] {
    return this.keys.map((k) => k.id);
  }
}

/**
 * `id:base64key` entries separated by commas or new lines, current first, e.g.
 * `2026-11:3q2+7w…=,2026-05:AAEC…=`. Lines starting with `#` are comments (for a keys file).
 */
export function parsePayloadKeys(text: string, source: string): Keyring {
  const entries = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('#'))
    .flatMap((line) => line.split(','))
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new ConfigError(`invalid configuration: ${source} holds no payload key`);
  const keys = entries.map((entry, i) => {
    const colon = entry.indexOf(':');
    if (colon <= 0) {
      throw new ConfigError(
        `invalid configuration: ${source} entry ${i + 1} must be "id:base64 of 32 bytes"`,
      );
    }
    return { id: entry.slice(0, colon), key: Buffer.from(entry.slice(colon + 1), 'base64') };
  });
  try {
    return new Keyring(keys);
  } catch (err) {
    throw new ConfigError(`invalid configuration: ${source}: ${(err as Error).message}`);
  }
}

/** A new key, in the form DURAPAY_PAYLOAD_KEYS takes (`durapay keys new`). */
export function newPayloadKeyEntry(id: string): string {
  if (!KEY_ID.test(id)) throw new ConfigError(`a key id must be 1-32 characters of A-Z a-z 0-9 . _ -`);
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/**
 * The payload keys from DURAPAY_PAYLOAD_KEYS or the file DURAPAY_PAYLOAD_KEYS_FILE names;
 * outside production, a key generated once into the data directory (mode 0600) and reused, so
 * development needs no setup. Production refuses to start without keys.
 */
export function resolvePayloadKeys(config: CoreConfig): Keyring {
  const { keys, keysFile } = config.payloadKeys;
  if (keys !== undefined) return parsePayloadKeys(keys, '"DURAPAY_PAYLOAD_KEYS"');
  if (keysFile !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(keysFile, 'utf8');
    } catch (err) {
      throw new ConfigError(
        `invalid configuration: "DURAPAY_PAYLOAD_KEYS_FILE" ${keysFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    return parsePayloadKeys(text, `"DURAPAY_PAYLOAD_KEYS_FILE" ${keysFile}`);
  }
  if (config.env === 'production') {
    throw new ConfigError(
      'invalid configuration: "DURAPAY_PAYLOAD_KEYS" (or "DURAPAY_PAYLOAD_KEYS_FILE") is required in production: `npx durapay keys new` prints one',
    );
  }
  const text = dataDirSecret(
    config.dataDir,
    PAYLOAD_KEYS_FILE,
    () => `# durapay payload keys, current first (DURAPAY_PAYLOAD_KEYS)\n${newPayloadKeyEntry('dev-1')}\n`,
  );
  return parsePayloadKeys(text, path.join(config.dataDir, PAYLOAD_KEYS_FILE));
}
