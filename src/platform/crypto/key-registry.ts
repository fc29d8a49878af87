import { createHmac } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { ConfigError } from '../config';
import type { Database } from '../db';
import type { Keyring } from './keyring';

/** Tells two keys apart without revealing either: HMAC-SHA256 of a constant under the key. */
export function keyCheckValue(key: Buffer): string {
  return createHmac('sha256', key).update('durapay payload key check v1').digest('hex');
}

/**
 * Checks the keyring against every key that ever sealed something here (table payload_keys)
 * and then records the current key as used, in one transaction. Refused, with nothing recorded:
 *
 * - a key that sealed data and was not retired (`durapay keys retire`) is missing: what it
 *   sealed could not be opened;
 * - a key listed under an id that another key sealed data under (a typo, or a development key
 *   generated apart): what it seals could not be opened by the others.
 *
 * A process refuses to start on either, naming the key ids (never key material), instead of
 * failing on the first history or row it cannot open.
 */
export async function ensurePayloadKeys(db: Database, keyring: Keyring): Promise<void> {
  await db.sequelize.transaction(async (transaction) => {
    // One checker at a time: two processes with different keys under one new id cannot both pass.
    await db.sequelize.query('LOCK TABLE payload_keys IN SHARE ROW EXCLUSIVE MODE', { transaction });
    const rows = await db.sequelize.query<{ key_id: string; check_value: string; retired: boolean }>(
      'SELECT key_id, check_value, retired_at IS NOT NULL AS retired FROM payload_keys ORDER BY first_used_at',
      { type: QueryTypes.SELECT, transaction },
    );
    const missing = rows
      .filter((r) => !r.retired && keyring.key(r.key_id) === undefined)
      .map((r) => r.key_id);
    const different = rows
      .filter((r) => {
        const key = keyring.key(r.key_id);
        return key !== undefined && keyCheckValue(key) !== r.check_value;
      })
      .map((r) => r.key_id);
    const problems: string[] = [];
    if (missing.length > 0) {
      const many = missing.length > 1;
      problems.push(
        `payload key${many ? 's' : ''} ${missing.join(', ')} sealed data this service keeps ` +
          `(workflow histories, applicant data) but ${many ? 'are' : 'is'} missing from DURAPAY_PAYLOAD_KEYS: ` +
          'add it back after the current key (see "Payload keys" in docs/security.md)',
      );
    }
    if (different.length > 0) {
      problems.push(
        `DURAPAY_PAYLOAD_KEYS gives ${different.join(', ')} a different key than the one that sealed data ` +
          'under that id: give each id its own key, and a new key a new id',
      );
    }
    if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; and ')}`);
    await db.sequelize.query(
      'INSERT INTO payload_keys (key_id, check_value) VALUES (:id, :check) ON CONFLICT (key_id) DO NOTHING',
      { replacements: { id: keyring.current.id, check: keyCheckValue(keyring.current.key) }, transaction },
    );
  });
}

/**
 * Marks a key retired: no data needs it any more, so processes may start without it. The
 * caller checks what it can count (sealed rows); histories it cannot, so the operator decides.
 */
export async function retirePayloadKey(db: Database, keyId: string, current: string): Promise<boolean> {
  if (keyId === current) {
    throw new ConfigError(`payload key ${keyId} is the current key: make another key current first`);
  }
  const rows = await db.sequelize.query(
    'UPDATE payload_keys SET retired_at = now() WHERE key_id = :keyId AND retired_at IS NULL RETURNING key_id',
    { replacements: { keyId }, type: QueryTypes.SELECT },
  );
  return rows.length > 0;
}
