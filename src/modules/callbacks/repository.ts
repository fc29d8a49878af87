import { QueryTypes } from 'sequelize';
import type { Database } from '../../platform/db';

/** What became of a callback, written once it has been answered. */
export interface CallbackResult {
  verified: boolean;
  outcome: string;
  error?: string;
  eventId?: string;
  tradeNo?: string;
  refundNo?: string;
}

/** A callback about an order as an operator is shown it: what came of it, never its body. */
export interface ReceivedCallback {
  id: number;
  channelCode: string;
  receivedAt: Date;
  verified: boolean;
  outcome: string;
  error: string | null;
  refundNo: string | null;
}

/**
 * The raw-callback log (`channel_callbacks`, SPEC §4): every callback of a channel durapay has,
 * whose body it read, stored before it is answered, and deleted after the retention (SPEC §9).
 */
export class CallbackLog {
  constructor(private readonly db: Database) {}

  async record(entry: {
    channelCode: string;
    headers: Record<string, string>;
    rawBody: string;
  }): Promise<number> {
    const [row] = await this.db.sequelize.query<{ id: string }>(
      `INSERT INTO channel_callbacks (channel_code, received_at, headers, raw_body, verified, outcome)
       VALUES (:channelCode, now(), CAST(:headers AS jsonb), :rawBody, false, 'received')
       RETURNING id`,
      {
        replacements: { ...entry, headers: JSON.stringify(entry.headers) },
        type: QueryTypes.SELECT,
      },
    );
    return Number(row!.id);
  }

  async finish(id: number, result: CallbackResult): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE channel_callbacks
          SET verified = :verified, outcome = :outcome, error = :error, channel_event_id = :eventId,
              trade_no = :tradeNo, refund_no = :refundNo
        WHERE id = :id`,
      {
        replacements: {
          id,
          verified: result.verified,
          outcome: result.outcome,
          error: result.error ?? null,
          eventId: result.eventId ?? null,
          tradeNo: result.tradeNo ?? null,
          refundNo: result.refundNo ?? null,
        },
      },
    );
  }

  /**
   * The callbacks about an order still kept (the retention deletes old ones), oldest first,
   * without their headers and bodies (the console's order timeline; index of migration 0021).
   */
  async aboutTrade(tradeNo: string, limit = 200): Promise<ReceivedCallback[]> {
    const rows = await this.db.sequelize.query<{
      id: string;
      channel_code: string;
      received_at: Date;
      verified: boolean;
      outcome: string;
      error: string | null;
      refund_no: string | null;
    }>(
      `SELECT id, channel_code, received_at, verified, outcome, error, refund_no FROM channel_callbacks
        WHERE trade_no = :tradeNo ORDER BY received_at, id LIMIT :limit`,
      { replacements: { tradeNo, limit }, type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({
      id: Number(r.id),
      channelCode: r.channel_code,
      receivedAt: r.received_at,
      verified: r.verified,
      outcome: r.outcome,
      error: r.error,
      refundNo: r.refund_no,
    }));
  }

  /**
   * Deletes at most `limit` callbacks received before `before`, oldest first, in one short
   * statement (its own transaction, so locks are held for one batch only); answers how many.
   * Found through the index on received_at (migration 0014), so that a batch costs the rows it
   * deletes, not a scan of the table.
   */
  async deleteReceivedBefore(before: Date, limit: number): Promise<number> {
    const [, result] = await this.db.sequelize.query(
      `DELETE FROM channel_callbacks
        WHERE id IN (SELECT id FROM channel_callbacks
                      WHERE received_at < :before
                      ORDER BY received_at
                      LIMIT :limit)`,
      { replacements: { before, limit } },
    );
    return (result as { rowCount?: number } | undefined)?.rowCount ?? 0;
  }
}
