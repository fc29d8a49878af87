import { QueryTypes } from 'sequelize';
import { ConfigError } from '../config';
import type { Database } from '../db';
import type { Keyring } from './keyring';

/**
 * Records the current payload key as used and checks that the keyring still holds every key
 * that ever sealed something and was not retired (`durapay keys retire`, once no history or
 * row needs it). A process started without one refuses to start, naming the key, instead of
 * failing on the first history or row it cannot open.
 */
export async function ensurePayloadKeys(db: Database, keyring: Keyring): Promise<void> {
  await db.sequelize.query('INSERT INTO payload_keys (key_id) VALUES (:id) ON CONFLICT (key_id) DO NOTHING', {
    replacements: { id: keyring.current.id },
  });
  const rows = await db.sequelize.query<{ key_id: string }>(
    'SELECT key_id FROM payload_keys WHERE retired_at IS NULL ORDER BY first_used_at',
    { type: QueryTypes.SELECT },
  );
  const missing = rows.map((r) => r.key_id).filter((id) => keyring.key(id) === undefined);
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid configuration: payload key${missing.length > 1 ? 's' : ''} ${missing.join(', ')} sealed data this service keeps ` +
        `(workflow histories, applicant data) but ${missing.length > 1 ? 'are' : 'is'} missing from DURAPAY_PAYLOAD_KEYS: ` +
        'add it back after the current key (see "Payload keys" in the README)',
    );
  }
}

/** Marks a key retired: no data needs it any more, so processes may start without it. */
export async function retirePayloadKey(db: Database, keyId: string, current: string): Promise<boolean> {
  if (keyId === current)
    throw new ConfigError(`payload key ${keyId} is the current key: make another key current first`);
  const rows = await db.sequelize.query(
    'UPDATE payload_keys SET retired_at = now() WHERE key_id = :keyId AND retired_at IS NULL RETURNING key_id',
    { replacements: { keyId }, type: QueryTypes.SELECT },
  );
  return rows.length > 0;
}
