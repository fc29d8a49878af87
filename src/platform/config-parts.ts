/**
 * What reading a setting takes, for platform/config.ts and the channels' own settings
 * (src/channels/<code>/config.ts): the error a bad setting stops the process with, a secret
 * read from its variable or its _FILE, and the forms keys are given in.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Schema } from 'joi';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** A setting's value as given (an empty variable counts as unset). */
export type SettingReader = (key: string) => string | undefined;

/**
 * Settings kept outside the core (a channel's, in its folder), validated with the core ones and
 * read into the configuration under `code` (undefined: not configured).
 */
export interface SettingsSection {
  code: string;
  settings: { schema: Record<string, Schema>; read(str: SettingReader, cwd: string): unknown };
}

/**
 * A secret from its variable, or from the file its _FILE variable names (never both). The
 * message names the setting, never its value.
 */
export function secretSetting(str: SettingReader, key: string, cwd: string): string | undefined {
  const inline = str(key);
  const file = str(`${key}_FILE`);
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError(`invalid configuration: set "${key}" or "${key}_FILE", not both`);
  }
  if (file === undefined) return inline;
  try {
    return fs.readFileSync(path.resolve(cwd, file), 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new ConfigError(`invalid configuration: "${key}_FILE" cannot be read (${String(code ?? err)})`);
  }
}

/** A PEM given in one line with literal \\n escapes (common in container settings), as lines. */
export function pem(value: string): string {
  return value.includes('\\n') && !value.includes('\n') ? value.replaceAll('\\n', '\n') : value;
}

/** A key given as PEM or as the bare base64 Alipay's key tool prints, as a KeyObject. */
export function rsaKeyFrom(text: string, kind: 'private' | 'public'): KeyObject | undefined {
  const value = pem(text).trim();
  const attempts: (() => KeyObject)[] = value.includes('-----BEGIN')
    ? [() => (kind === 'private' ? createPrivateKey(value) : createPublicKey(value))]
    : [
        ...(['pkcs8', 'pkcs1'] as const).map(
          (type) => () =>
            kind === 'private'
              ? createPrivateKey({ key: Buffer.from(value, 'base64'), format: 'der', type })
              : createPublicKey({
                  key: Buffer.from(value, 'base64'),
                  format: 'der',
                  type: type === 'pkcs8' ? 'spki' : 'pkcs1',
                }),
        ),
      ];
  for (const attempt of attempts) {
    try {
      const key = attempt();
      if (key.asymmetricKeyType === 'rsa') return key;
    } catch {
      // the next form
    }
  }
  return undefined;
}
