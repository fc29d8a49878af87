/**
 * The complaints' sealed columns under key rotation (`durapay keys retire`, `durapay keys reseal
 * --rotate`): how many rows an old payload key still seals, and sealing them again with the
 * current one. The repository reads and writes the same columns (repository.ts).
 */
import { QueryTypes } from 'sequelize';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { SEALED_FIELD_PREFIX, SealedColumn } from '../../platform/crypto/sealed-column';

/** Every complaint value is sealed: a value in clear is refused, never read. */
export const refuseLegacy = (): never => {
  throw new Error('is not sealed');
};

const SEALED_COLUMNS = ['sealed_detail', 'sealed_payer_phone', 'sealed_images', 'sealed_history'] as const;

/** How many complaints hold a value the payload key `keyId` sealed (`durapay keys retire` refuses while any). */
export async function complaintsSealedWith(db: Database, keyId: string): Promise<number> {
  const [row] = await db.sequelize.query<{ n: string }>(
    `SELECT count(*) AS n FROM complaints
      WHERE ${SEALED_COLUMNS.map((c) => `starts_with(${c}, :prefix)`).join(' OR ')}`,
    { replacements: { prefix: `${SEALED_FIELD_PREFIX}${keyId}:` }, type: QueryTypes.SELECT },
  );
  return Number(row?.n ?? 0);
}

/**
 * Seals what an older key sealed in complaints again with the current key (`durapay keys reseal
 * --rotate`), in batches, compare-and-set. A row that does not open is left as it is and named
 * (its complaint, never the value). Returns how many rows were sealed again.
 */
export async function resealComplaints(
  db: Database,
  keyring: Keyring,
  options: { batchSize?: number } = {},
): Promise<{ resealed: number; unopened: { complaintId: string; reason: string }[] }> {
  const columns = SEALED_COLUMNS.map(
    (c) => [c, new SealedColumn<unknown>(keyring, `complaints.${c}`, refuseLegacy)] as const,
  );
  const current = `${SEALED_FIELD_PREFIX}${keyring.current.id}:`;
  let after = ['', ''];
  let resealed = 0;
  const unopened: { complaintId: string; reason: string }[] = [];
  for (;;) {
    const rows = await db.sequelize.query<
      Record<(typeof SEALED_COLUMNS)[number] | 'channel_code' | 'complaint_id', string | null>
    >(
      `SELECT channel_code, complaint_id, ${SEALED_COLUMNS.join(', ')} FROM complaints
        WHERE (channel_code, complaint_id) > (:afterChannel, :afterId)
          AND (${SEALED_COLUMNS.map((c) => `NOT starts_with(${c}, :current)`).join(' OR ')})
        ORDER BY channel_code, complaint_id LIMIT :limit`,
      {
        replacements: { afterChannel: after[0], afterId: after[1], current, limit: options.batchSize ?? 500 },
        type: QueryTypes.SELECT,
      },
    );
    if (rows.length === 0) return { resealed, unopened };
    for (const row of rows) {
      const key = `${row.channel_code}:${row.complaint_id}`;
      const next: Record<string, string | null> = {};
      try {
        for (const [name, column] of columns) {
          const sealed = column.reseal(row[name], key, true);
          if (sealed !== undefined) next[name] = sealed;
        }
      } catch (err) {
        unopened.push({ complaintId: row.complaint_id!, reason: (err as Error).message });
        continue;
      }
      const names = Object.keys(next);
      if (names.length === 0) continue;
      const [, changed] = await db.sequelize.query(
        `UPDATE complaints SET ${names.map((n) => `${n} = :new_${n}`).join(', ')}
          WHERE channel_code = :channelCode AND complaint_id = :complaintId
            AND ${names.map((n) => `${n} = :old_${n}`).join(' AND ')}`,
        {
          replacements: {
            channelCode: row.channel_code,
            complaintId: row.complaint_id,
            ...Object.fromEntries(
              names.flatMap((n) => [
                [`new_${n}`, next[n]],
                [`old_${n}`, row[n as keyof typeof row]],
              ]),
            ),
          },
          type: QueryTypes.UPDATE,
        },
      );
      resealed += Number(changed ?? 0);
    }
    const last = rows[rows.length - 1]!;
    after = [last.channel_code!, last.complaint_id!];
  }
}
