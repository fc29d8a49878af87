/**
 * The states orders' runs save when they end idle (SPEC §7), sealed with the payload keys like
 * the runs' payloads in Temporal, and bound to their order: copied to another order's row, a
 * state does not open. `durapay keys reseal --rotate` seals them again with the current key, and
 * `durapay keys retire` counts them.
 */
import { QueryTypes } from 'sequelize';
import { FieldSealer, SEALED_FIELD_PREFIX } from '../../platform/crypto/field-sealer';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';

const context = (tradeNo: string) => `orders.saved_state:${tradeNo}`;

export function sealSavedState(keyring: Keyring, tradeNo: string, value: unknown): string {
  return new FieldSealer(keyring).seal(value, context(tradeNo));
}

export function openSavedState<T>(keyring: Keyring, tradeNo: string, sealed: string): T {
  return new FieldSealer(keyring).open<T>(sealed, context(tradeNo));
}

/** How many saved states `keyId` sealed. */
export async function savedStatesSealedWith(db: Database, keyId: string): Promise<number> {
  const [row] = await db.sequelize.query<{ n: string }>(
    'SELECT count(*) AS n FROM order_saved_states WHERE starts_with(state, :prefix)',
    { replacements: { prefix: `${SEALED_FIELD_PREFIX}${keyId}:` }, type: QueryTypes.SELECT },
  );
  return Number(row?.n ?? 0);
}

/**
 * Seals the saved states an older key sealed again with the current one, in batches. A state
 * its order's run replaced meanwhile is left as that run wrote it (compare and set). One that
 * does not open (its key is no longer listed, or it was altered) is left as it is and named:
 * its order cannot be reopened, whatever is done here. Returns how many were sealed again.
 */
export async function resealSavedStates(
  db: Database,
  keyring: Keyring,
  options: { batchSize?: number } = {},
): Promise<{ resealed: number; unopened: { tradeNo: string; reason: string }[] }> {
  const current = `${SEALED_FIELD_PREFIX}${keyring.current.id}:`;
  let after = '';
  let resealed = 0;
  const unopened: { tradeNo: string; reason: string }[] = [];
  for (;;) {
    const rows = await db.sequelize.query<{ trade_no: string; state: string }>(
      `SELECT trade_no, state FROM order_saved_states
        WHERE trade_no > :after AND NOT starts_with(state, :current)
        ORDER BY trade_no LIMIT :limit`,
      { replacements: { after, current, limit: options.batchSize ?? 500 }, type: QueryTypes.SELECT },
    );
    if (rows.length === 0) return { resealed, unopened };
    for (const row of rows) {
      let value: unknown;
      try {
        value = openSavedState(keyring, row.trade_no, row.state);
      } catch (err) {
        // Names the order for an operator, never the value.
        unopened.push({ tradeNo: row.trade_no, reason: (err as Error).message });
        continue;
      }
      const [, changed] = await db.sequelize.query(
        'UPDATE order_saved_states SET state = :sealed WHERE trade_no = :t AND state = :old',
        {
          replacements: {
            t: row.trade_no,
            old: row.state,
            sealed: sealSavedState(keyring, row.trade_no, value),
          },
          type: QueryTypes.UPDATE,
        },
      );
      if (changed > 0) resealed += 1;
    }
    after = rows[rows.length - 1]!.trade_no;
  }
}
