// Longer than 400 lines would be a smell here; this file is the one place that touches the
// reconciliation tables, and its matching is SQL so that a million rows never sit in memory.
import { QueryTypes, type Transaction } from 'sequelize';
import type { StatementRow } from '../../channels/ports';
import type { Database } from '../../platform/db';
import { FieldSealer } from '../../platform/crypto/field-sealer';
import {
  keysetAt,
  keysetPageOf,
  SearchConditions,
  type KeysetPage,
  type KeysetResult,
} from '../../platform/pagination';
import type { Keyring } from '../../platform/crypto/keyring';
import {
  DEFAULT_ACCOUNT,
  RECONCILIATION_CATEGORIES,
  type MismatchCategory,
  type MismatchState,
  type Resolution,
  type RunStatus,
  type RunSummary,
} from './messages';
import { addDays, CARRY_OVER_DAYS, dayStart } from './rules';

export interface RunRow {
  run_id: string;
  channel_code: string;
  account: string;
  bill_date: string;
  status: RunStatus;
  statement: 'ready' | 'empty' | null;
  statement_format: string | null;
  statement_size: string | null;
  statement_sha256: string | null;
  channel_hash: string | null;
  rows_read: string;
  summary: RunSummary | null;
  error: string | null;
  started_by: string;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface MismatchRow {
  id: string;
  run_id: string;
  app_id: string | null;
  category: MismatchCategory;
  kind: 'payment' | 'refund';
  trade_no: string;
  refund_no: string | null;
  local: Record<string, unknown> | null;
  channel: Record<string, unknown> | null;
  state: MismatchState;
  note: string | null;
  resolution: Resolution | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The account of an order as runs name it: its channel account's number, or the channel's own. */
const ORDER_ACCOUNT = `COALESCE(a.account_no, o.sub_merchant_no, '${DEFAULT_ACCOUNT}')`;
const PAID_STATUSES = `('paid', 'partially_refunded', 'refunded')`;
/** A refund's statuses as the statement's: an abnormal refund is one the channel could not pay. */
const REFUND_AS_CHANNEL = `CASE r.status WHEN 'abnormal' THEN 'failed' ELSE r.status END`;

/**
 * Whether the run's account is the app's own (attached to one of its merchants): only then does
 * the app see the run's account-wide summary; the channel's own account is shared by apps.
 */
const OWNED = `EXISTS (SELECT 1 FROM merchant_channel_accounts oa WHERE oa.app_id = :appId
  AND oa.channel_code = r.channel_code AND oa.account_no = r.account)`;

const CHUNK_CONTEXT = (runId: string, seq: number) => `reconciliation_statement_chunks.data:${runId}:${seq}`;

export class ReconciliationRepository {
  private readonly sealer: FieldSealer;

  constructor(
    private readonly db: Database,
    keyring: Keyring,
  ) {
    this.sealer = new FieldSealer(keyring);
  }

  private query<T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction?: Transaction,
  ) {
    return this.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });
  }

  /** Records a run (once: a run started again is the same row) and answers it. */
  async ensureRun(r: {
    runId: string;
    channelCode: string;
    account: string;
    billDate: string;
    startedBy: string;
  }) {
    await this.db.sequelize.query(
      `INSERT INTO reconciliation_runs (run_id, channel_code, account, bill_date, started_by)
       VALUES (:runId, :channelCode, :account, :billDate, :startedBy)
       ON CONFLICT (run_id) DO NOTHING`,
      { replacements: r },
    );
    return (await this.find(r.runId))!;
  }

  async find(runId: string): Promise<RunRow | undefined> {
    const [row] = await this.query<RunRow>(
      `SELECT *, to_char(bill_date, 'YYYY-MM-DD') AS bill_date FROM reconciliation_runs WHERE run_id = :runId`,
      { runId },
    );
    return row;
  }

  async setRunning(runId: string): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE reconciliation_runs SET status = 'running', started_at = now(), finished_at = NULL, error = NULL,
              updated_at = now() WHERE run_id = :runId`,
      { replacements: { runId } },
    );
  }

  async finish(
    runId: string,
    outcome: { status: 'completed' | 'failed'; summary: RunSummary | null; error: string | null },
  ) {
    await this.db.sequelize.query(
      `UPDATE reconciliation_runs SET status = :status, summary = CAST(:summary AS jsonb), error = :error,
              finished_at = now(), updated_at = now() WHERE run_id = :runId`,
      {
        replacements: {
          runId,
          status: outcome.status,
          summary: outcome.summary === null ? null : JSON.stringify(outcome.summary),
          error: outcome.error,
        },
      },
    );
  }

  /** Forgets what an earlier attempt of the run read (the statement is read again whole). */
  async clearStatement(runId: string): Promise<void> {
    await this.db.sequelize.transaction(async (transaction) => {
      await this.db.sequelize.query('DELETE FROM reconciliation_rows WHERE run_id = :runId', {
        replacements: { runId },
        transaction,
      });
      await this.db.sequelize.query('DELETE FROM reconciliation_statement_chunks WHERE run_id = :runId', {
        replacements: { runId },
        transaction,
      });
      await this.db.sequelize.query(
        `UPDATE reconciliation_runs SET statement = NULL, statement_format = NULL, statement_size = NULL,
                statement_sha256 = NULL, channel_hash = NULL, rows_read = 0, updated_at = now()
          WHERE run_id = :runId`,
        { replacements: { runId }, transaction },
      );
    });
  }

  /** Keeps one piece of the raw statement, sealed. */
  async storeChunk(runId: string, seq: number, bytes: Buffer): Promise<void> {
    await this.db.sequelize.query(
      `INSERT INTO reconciliation_statement_chunks (run_id, seq, data) VALUES (:runId, :seq, :data)
       ON CONFLICT (run_id, seq) DO UPDATE SET data = EXCLUDED.data`,
      {
        replacements: {
          runId,
          seq,
          data: this.sealer.seal(bytes.toString('base64'), CHUNK_CONTEXT(runId, seq)),
        },
      },
    );
  }

  /** The raw statement, piece by piece, opened. */
  async *chunks(runId: string): AsyncIterable<Buffer> {
    for (let seq = 0; ; seq += 1) {
      const [row] = await this.query<{ data: string }>(
        'SELECT data FROM reconciliation_statement_chunks WHERE run_id = :runId AND seq = :seq',
        { runId, seq },
      );
      if (!row) return;
      yield Buffer.from(this.sealer.open<string>(row.data, CHUNK_CONTEXT(runId, seq)), 'base64');
    }
  }

  async insertRows(runId: string, firstLine: number, rows: readonly StatementRow[]): Promise<void> {
    if (rows.length === 0) return;
    const values: string[] = [];
    const replacements: Record<string, unknown> = { runId };
    rows.forEach((r, i) => {
      values.push(`(:runId, :l${i}, :k${i}, :t${i}, :r${i}, :c${i}, :a${i}, :f${i}, :s${i}, :at${i})`);
      replacements[`l${i}`] = firstLine + i;
      replacements[`k${i}`] = r.kind;
      replacements[`t${i}`] = r.tradeNo;
      replacements[`r${i}`] = r.refundNo;
      replacements[`c${i}`] = r.channelNo;
      replacements[`a${i}`] = r.amount;
      replacements[`f${i}`] = r.fee;
      replacements[`s${i}`] = r.status;
      replacements[`at${i}`] = r.time.toISOString();
    });
    await this.db.sequelize.query(
      `INSERT INTO reconciliation_rows (run_id, line, kind, trade_no, refund_no, channel_no, amount, fee, status, at)
       VALUES ${values.join(', ')}`,
      { replacements },
    );
  }

  async recordStatement(
    runId: string,
    s: {
      statement: 'ready' | 'empty';
      format: string | null;
      size: number;
      sha256: string | null;
      channelHash: string | null;
      rows: number;
    },
  ): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE reconciliation_runs SET statement = :statement, statement_format = :format, statement_size = :size,
              statement_sha256 = :sha256, channel_hash = :channelHash, rows_read = :rows, updated_at = now()
        WHERE run_id = :runId`,
      { replacements: { runId, ...s } },
    );
  }

  /**
   * Compares the run's statement with durapay's books (SPEC §10) and records what differs,
   * replacing what an earlier attempt of the same run found, except what a person resolved or a
   * repair acted on. All in SQL, in one transaction: the statement's rows never sit in memory.
   */
  async match(
    run: { runId: string; channelCode: string; account: string; billDate: string },
    now: Date,
  ): Promise<void> {
    const from = dayStart(run.billDate);
    const to = dayStart(addDays(run.billDate, 1));
    const neighbours = { lo: addDays(run.billDate, -1), hi: addDays(run.billDate, CARRY_OVER_DAYS) };
    const carryEnded = now.getTime() >= dayStart(addDays(run.billDate, CARRY_OVER_DAYS + 1)).getTime();
    const r = { ...run, from: from.toISOString(), to: to.toISOString(), ...neighbours, carryEnded };
    await this.db.sequelize.transaction(async (transaction) => {
      const q = (sql: string) => this.db.sequelize.query(sql, { replacements: r, transaction });
      await q(`DELETE FROM reconciliation_mismatches WHERE run_id = :runId AND state IN ('open', 'carried')`);
      // Statement payments against orders.
      await q(`
        INSERT INTO reconciliation_mismatches (run_id, app_id, category, kind, trade_no, local, channel, state)
        SELECT :runId, o.app_id,
               CASE WHEN o.trade_no IS NULL THEN 'unknown_at_durapay'
                    WHEN o.amount <> s.amount THEN 'amount_mismatch'
                    ELSE 'missing_local_payment' END,
               'payment', s.trade_no,
               CASE WHEN o.trade_no IS NULL THEN NULL ELSE jsonb_build_object('status', o.status, 'amount', o.amount,
                 'channel_trade_no', o.channel_trade_no, 'pay_time', o.pay_time) END,
               jsonb_build_object('line', s.line, 'status', s.status, 'amount', s.amount, 'fee', s.fee,
                 'channel_no', s.channel_no, 'time', s.at),
               'open'
          FROM reconciliation_rows s
          LEFT JOIN orders o ON o.trade_no = s.trade_no AND o.channel_code = :channelCode
         WHERE s.run_id = :runId AND s.kind = 'payment'
           AND (o.trade_no IS NULL OR o.status IN ('pending', 'closed') OR o.amount <> s.amount)`);
      // Statement refunds against refunds.
      await q(`
        INSERT INTO reconciliation_mismatches (run_id, app_id, category, kind, trade_no, refund_no, local, channel, state)
        SELECT :runId, r.app_id,
               CASE WHEN r.refund_no IS NULL THEN 'unknown_at_durapay'
                    WHEN r.refund_amount <> s.amount THEN 'amount_mismatch'
                    ELSE 'status_mismatch' END,
               'refund', s.trade_no, s.refund_no,
               CASE WHEN r.refund_no IS NULL THEN NULL ELSE jsonb_build_object('status', r.status,
                 'amount', r.refund_amount, 'channel_refund_no', r.channel_refund_no, 'created_at', r.created_at) END,
               jsonb_build_object('line', s.line, 'status', s.status, 'amount', s.amount, 'fee', s.fee,
                 'channel_no', s.channel_no, 'time', s.at),
               'open'
          FROM reconciliation_rows s
          LEFT JOIN refunds r ON r.refund_no = s.refund_no
         WHERE s.run_id = :runId AND s.kind = 'refund'
           AND (r.refund_no IS NULL OR r.refund_amount <> s.amount OR ${REFUND_AS_CHANNEL} <> s.status)`);
      // What the books hold for the day and the statement lacks: found on a neighbouring day's
      // statement (it crossed midnight), it matches; otherwise it waits out the carry-over.
      const absent = (alias: string, key: 'trade_no' | 'refund_no') => {
        // A payment is absent unless a payment line names it (a refund line names its trade too).
        const kind = key === 'trade_no' ? "AND s.kind = 'payment'" : '';
        return `
        NOT EXISTS (SELECT 1 FROM reconciliation_rows s WHERE s.run_id = :runId AND s.${key} = ${alias} ${kind})
        AND NOT EXISTS (SELECT 1 FROM reconciliation_rows s JOIN reconciliation_runs n ON n.run_id = s.run_id
                         WHERE s.${key} = ${alias} ${kind} AND n.channel_code = :channelCode AND n.account = :account
                           AND n.bill_date BETWEEN CAST(:lo AS date) AND CAST(:hi AS date))`;
      };
      await q(`
        INSERT INTO reconciliation_mismatches (run_id, app_id, category, kind, trade_no, local, state)
        SELECT :runId, o.app_id, 'missing_channel_payment', 'payment', o.trade_no,
               jsonb_build_object('status', o.status, 'amount', o.amount, 'channel_trade_no', o.channel_trade_no,
                 'pay_time', o.pay_time),
               CASE WHEN :carryEnded THEN 'open' ELSE 'carried' END
          FROM orders o LEFT JOIN merchant_channel_accounts a ON a.id = o.channel_account_id
         WHERE o.channel_code = :channelCode AND o.pay_time >= :from AND o.pay_time < :to
           AND o.status IN ${PAID_STATUSES} AND ${ORDER_ACCOUNT} = :account
           AND ${absent('o.trade_no', 'trade_no')}`);
      await q(`
        INSERT INTO reconciliation_mismatches (run_id, app_id, category, kind, trade_no, refund_no, local, state)
        SELECT :runId, r.app_id, 'status_mismatch', 'refund', r.trade_no, r.refund_no,
               jsonb_build_object('status', r.status, 'amount', r.refund_amount,
                 'channel_refund_no', r.channel_refund_no, 'created_at', r.created_at),
               CASE WHEN :carryEnded THEN 'open' ELSE 'carried' END
          FROM refunds r JOIN orders o ON o.trade_no = r.trade_no
          LEFT JOIN merchant_channel_accounts a ON a.id = o.channel_account_id
         WHERE o.channel_code = :channelCode AND r.created_at >= :from AND r.created_at < :to
           AND r.status = 'success' AND ${ORDER_ACCOUNT} = :account
           AND ${absent('r.refund_no', 'refund_no')}`);
      // A resolution or a repair stands: the same finding is not recorded again beside it.
      await q(`
        DELETE FROM reconciliation_mismatches m
         WHERE m.run_id = :runId AND m.state IN ('open', 'carried')
           AND EXISTS (SELECT 1 FROM reconciliation_mismatches k
                        WHERE k.run_id = m.run_id AND k.state IN ('repaired', 'resolved')
                          AND k.category = m.category AND k.kind = m.kind AND k.trade_no = m.trade_no
                          AND k.refund_no IS NOT DISTINCT FROM m.refund_no)`);
    });
  }

  /**
   * Earlier days' payments and refunds of this account that were waiting out the carry-over:
   * found on a statement since, they were never mismatches (deleted); past the carry-over, they
   * are (open). Answers the ones that became open.
   */
  async settleCarried(run: { channelCode: string; account: string }, now: Date): Promise<MismatchRow[]> {
    return this.db.sequelize.transaction(async (transaction) => {
      await this.db.sequelize.query(
        `DELETE FROM reconciliation_mismatches m USING reconciliation_runs c
          WHERE m.run_id = c.run_id AND m.state = 'carried'
            AND c.channel_code = :channelCode AND c.account = :account
            AND EXISTS (SELECT 1 FROM reconciliation_rows s JOIN reconciliation_runs n ON n.run_id = s.run_id
                         WHERE n.channel_code = c.channel_code AND n.account = c.account
                           AND n.bill_date BETWEEN c.bill_date - 1 AND c.bill_date + ${CARRY_OVER_DAYS}
                           AND (CASE WHEN m.kind = 'payment' THEN s.trade_no = m.trade_no AND s.kind = 'payment'
                                     ELSE s.refund_no = m.refund_no END))`,
        { replacements: run, transaction },
      );
      return this.query<MismatchRow>(
        `UPDATE reconciliation_mismatches m SET state = 'open', updated_at = now()
           FROM reconciliation_runs c
          WHERE m.run_id = c.run_id AND m.state = 'carried'
            AND c.channel_code = :channelCode AND c.account = :account
            AND CAST(:now AS timestamptz) >= (c.bill_date + ${CARRY_OVER_DAYS + 1})::timestamp AT TIME ZONE 'Asia/Shanghai'
          RETURNING m.*`,
        { ...run, now: now.toISOString() },
        transaction,
      );
    });
  }

  /** The run's findings in one state and category, a page at a time (by id). */
  async mismatchesOf(
    runId: string,
    filter: { state?: string; category?: MismatchCategory; afterId?: string; limit: number },
  ) {
    return this.query<MismatchRow>(
      `SELECT * FROM reconciliation_mismatches
        WHERE run_id = :runId AND (CAST(:state AS text) IS NULL OR state = :state)
          AND (CAST(:category AS text) IS NULL OR category = :category) AND id > :afterId
        ORDER BY id LIMIT :limit`,
      {
        runId,
        state: filter.state ?? null,
        category: filter.category ?? null,
        afterId: filter.afterId ?? '0',
        limit: filter.limit,
      },
    );
  }

  async markRepaired(id: string, note: string): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE reconciliation_mismatches SET state = 'repaired', note = :note, updated_at = now()
        WHERE id = :id AND state = 'open'`,
      { replacements: { id, note } },
    );
  }

  async noteOn(id: string, note: string): Promise<void> {
    await this.db.sequelize.query(
      'UPDATE reconciliation_mismatches SET note = :note, updated_at = now() WHERE id = :id',
      { replacements: { id, note } },
    );
  }

  /** The run's summary: counts per category and both sides' totals. */
  async summarize(
    run: { runId: string; channelCode: string; account: string; billDate: string },
    statement: 'ready' | 'empty',
  ): Promise<RunSummary> {
    const from = dayStart(run.billDate).toISOString();
    const to = dayStart(addDays(run.billDate, 1)).toISOString();
    const [channel] = await this.query<{ rows: string; paid: string; refunded: string; fees: string }>(
      `SELECT count(*) AS rows,
              COALESCE(sum(amount) FILTER (WHERE kind = 'payment'), 0) AS paid,
              COALESCE(sum(amount) FILTER (WHERE kind = 'refund' AND status = 'success'), 0) AS refunded,
              COALESCE(sum(fee), 0) AS fees
         FROM reconciliation_rows WHERE run_id = :runId`,
      { runId: run.runId },
    );
    const found = await this.query<{ category: MismatchCategory; state: string; n: string }>(
      `SELECT category, state, count(*) AS n FROM reconciliation_mismatches WHERE run_id = :runId
        GROUP BY category, state`,
      { runId: run.runId },
    );
    const [{ paid }] = (await this.query<{ paid: string }>(
      `SELECT COALESCE(sum(o.amount), 0) AS paid
         FROM orders o LEFT JOIN merchant_channel_accounts a ON a.id = o.channel_account_id
        WHERE o.channel_code = :channelCode AND o.pay_time >= :from AND o.pay_time < :to
          AND o.status IN ${PAID_STATUSES} AND ${ORDER_ACCOUNT} = :account`,
      { ...run, from, to },
    )) as [{ paid: string }];
    const [{ refunded }] = (await this.query<{ refunded: string }>(
      `SELECT COALESCE(sum(r.refund_amount), 0) AS refunded
         FROM refunds r JOIN orders o ON o.trade_no = r.trade_no
         LEFT JOIN merchant_channel_accounts a ON a.id = o.channel_account_id
        WHERE o.channel_code = :channelCode AND r.created_at >= :from AND r.created_at < :to
          AND r.status = 'success' AND ${ORDER_ACCOUNT} = :account`,
      { ...run, from, to },
    )) as [{ refunded: string }];
    const categories = Object.fromEntries(RECONCILIATION_CATEGORIES.map((c) => [c, 0])) as Record<
      MismatchCategory,
      number
    >;
    let carried = 0;
    let repaired = 0;
    // Findings about a statement line carry the channel's side; what the statement lacks does not.
    for (const f of found) {
      const n = Number(f.n);
      if (f.state === 'carried') carried += n;
      else categories[f.category] += n;
      if (f.state === 'repaired') repaired += n;
    }
    const [{ lines }] = (await this.query<{ lines: string }>(
      `SELECT count(*) AS lines FROM reconciliation_mismatches WHERE run_id = :runId AND channel IS NOT NULL`,
      { runId: run.runId },
    )) as [{ lines: string }];
    const onStatement = Number(lines);
    const rows = Number(channel!.rows);
    return {
      statement,
      rows,
      matched: rows - onStatement,
      categories,
      carried,
      repaired,
      channel: {
        paid: Number(channel!.paid),
        refunded: Number(channel!.refunded),
        fees: Number(channel!.fees),
      },
      durapay: { paid: Number(paid), refunded: Number(refunded) },
    };
  }

  /**
   * The apps with orders in a run, each with the notify_url of its latest order in it and
   * whether the account is its own.
   */
  async appsOf(run: { channelCode: string; account: string; billDate: string }) {
    const from = dayStart(run.billDate).toISOString();
    const to = dayStart(addDays(run.billDate, 1)).toISOString();
    return this.query<{ app_id: string; notify_url: string; owned: boolean }>(
      `SELECT DISTINCT ON (o.app_id) o.app_id, o.notify_url,
              EXISTS (SELECT 1 FROM merchant_channel_accounts oa WHERE oa.app_id = o.app_id
                       AND oa.channel_code = o.channel_code AND oa.account_no = :account) AS owned
         FROM orders o LEFT JOIN merchant_channel_accounts a ON a.id = o.channel_account_id
        WHERE o.channel_code = :channelCode AND o.created_at >= CAST(:from AS timestamptz) - interval '1 day'
          AND o.created_at < :to AND ${ORDER_ACCOUNT} = :account
        ORDER BY o.app_id, o.created_at DESC`,
      { ...run, from, to },
    );
  }

  /**
   * The accounts of a channel that need a run for a day: those that took orders, were paid or
   * made refunds that day, and those with findings still waiting out the carry-over (a quiet
   * day's run is what turns them into mismatches once it has passed).
   */
  async accountsOn(channelCode: string, billDate: string): Promise<string[]> {
    const from = dayStart(billDate).toISOString();
    const to = dayStart(addDays(billDate, 1)).toISOString();
    const rows = await this.query<{ account: string }>(
      `SELECT ${ORDER_ACCOUNT} AS account
         FROM orders o LEFT JOIN merchant_channel_accounts a ON a.id = o.channel_account_id
        WHERE o.channel_code = :channelCode
          AND ((o.created_at >= :from AND o.created_at < :to) OR (o.pay_time >= :from AND o.pay_time < :to))
       UNION
       SELECT ${ORDER_ACCOUNT}
         FROM refunds r JOIN orders o ON o.trade_no = r.trade_no
         LEFT JOIN merchant_channel_accounts a ON a.id = o.channel_account_id
        WHERE o.channel_code = :channelCode AND r.created_at >= :from AND r.created_at < :to
       UNION
       SELECT c.account FROM reconciliation_runs c
        WHERE c.channel_code = :channelCode AND c.bill_date < CAST(:billDate AS date)
          AND EXISTS (SELECT 1 FROM reconciliation_mismatches m WHERE m.run_id = c.run_id AND m.state = 'carried')
       ORDER BY 1`,
      { channelCode, from, to, billDate },
    );
    return rows.map((r) => r.account);
  }

  /**
   * The accounts at a channel that are the app's: those attached to its merchants (now or
   * before: orders keep theirs), and those of its orders made without one (the channel's own,
   * `default`, or a number from before accounts). Read from the accounts and from the orders
   * without an account (a partial index), never from all of an app's orders.
   */
  async accountsOfApp(appId: string, channelCode: string): Promise<string[]> {
    const rows = await this.query<{ account: string }>(
      `SELECT account_no AS account FROM merchant_channel_accounts
        WHERE app_id = :appId AND channel_code = :channelCode AND account_no IS NOT NULL
       UNION
       SELECT DISTINCT COALESCE(o.sub_merchant_no, '${DEFAULT_ACCOUNT}') FROM orders o
        WHERE o.app_id = :appId AND o.channel_code = :channelCode AND o.channel_account_id IS NULL`,
      { appId, channelCode },
    );
    return rows.map((r) => r.account);
  }

  /** An order of the account to act for it at the channel with (its channel context). */
  async orderOfAccount(channelCode: string, account: string) {
    const [row] = await this.query<{
      trade_no: string;
      app_id: string;
      merchant_id: string | null;
      sub_merchant_no: string | null;
      channel_account_id: string | null;
    }>(
      `SELECT o.trade_no, o.app_id, o.merchant_id, o.sub_merchant_no, o.channel_account_id
         FROM orders o LEFT JOIN merchant_channel_accounts a ON a.id = o.channel_account_id
        WHERE o.channel_code = :channelCode AND ${ORDER_ACCOUNT} = :account
        ORDER BY o.created_at DESC LIMIT 1`,
      { channelCode, account },
    );
    return row;
  }

  /** The attached account of that number at the channel, if any (a run started for an account). */
  async accountByNumber(channelCode: string, account: string) {
    const [row] = await this.query<{ id: string; app_id: string; merchant_id: string }>(
      `SELECT id, app_id, merchant_id FROM merchant_channel_accounts
        WHERE channel_code = :channelCode AND account_no = :account AND detached_at IS NULL
        ORDER BY activated_at DESC LIMIT 1`,
      { channelCode, account },
    );
    return row;
  }

  // ---- what the API reads ----

  /** Runs with at least one of the app's orders (or any run, for no app), newest first. */
  async listRuns(f: {
    appId: string | null;
    runId?: string;
    channelCode?: string;
    billDate?: string;
    status?: string;
    limit: number;
    offset: number;
  }) {
    const where = [
      '(CAST(:channelCode AS text) IS NULL OR r.channel_code = :channelCode)',
      '(CAST(:billDate AS text) IS NULL OR r.bill_date = CAST(:billDate AS date))',
      '(CAST(:status AS text) IS NULL OR r.status = :status)',
      '(CAST(:runId AS text) IS NULL OR r.run_id = :runId)',
    ];
    if (f.appId !== null) {
      // The app's: an account attached to one of its merchants, or one its orders without an
      // account were made on (see accountsOfApp).
      where.push(`(${OWNED}
                   OR EXISTS (SELECT 1 FROM orders o WHERE o.app_id = :appId AND o.channel_code = r.channel_code
                               AND o.channel_account_id IS NULL
                               AND COALESCE(o.sub_merchant_no, '${DEFAULT_ACCOUNT}') = r.account))`);
    }
    const replacements = {
      appId: f.appId,
      channelCode: f.channelCode ?? null,
      billDate: f.billDate ?? null,
      status: f.status ?? null,
      runId: f.runId ?? null,
      limit: f.limit,
      offset: f.offset,
    };
    const rows = await this.query<RunRow & { owned: boolean }>(
      `SELECT r.*, to_char(r.bill_date, 'YYYY-MM-DD') AS bill_date,
              (CAST(:appId AS text) IS NULL OR ${OWNED}) AS owned
         FROM reconciliation_runs r
        WHERE ${where.join(' AND ')} ORDER BY r.bill_date DESC, r.run_id LIMIT :limit OFFSET :offset`,
      replacements,
    );
    const [{ total }] = (await this.query<{ total: string }>(
      `SELECT count(*) AS total FROM reconciliation_runs r WHERE ${where.join(' AND ')}`,
      replacements,
    )) as [{ total: string }];
    return { rows, total: Number(total) };
  }

  /** A run's findings about the app's orders, a page at a time. */
  async listMismatches(f: {
    runId: string;
    appId: string;
    category?: string;
    state?: string;
    limit: number;
    offset: number;
  }) {
    const where = `run_id = :runId AND app_id = :appId
      AND (CAST(:category AS text) IS NULL OR category = :category) AND (CAST(:state AS text) IS NULL OR state = :state)`;
    const replacements = { ...f, category: f.category ?? null, state: f.state ?? null };
    const rows = await this.query<MismatchRow>(
      `SELECT * FROM reconciliation_mismatches WHERE ${where} ORDER BY id LIMIT :limit OFFSET :offset`,
      replacements,
    );
    const [{ total }] = (await this.query<{ total: string }>(
      `SELECT count(*) AS total FROM reconciliation_mismatches WHERE ${where}`,
      replacements,
    )) as [{ total: string }];
    return { rows, total: Number(total) };
  }

  // ---- what the operator console reads, across apps ----

  /** Runs of every account, newest first by (created_at, run_id), a keyset page at a time. */
  async searchRuns(
    f: { channelCode?: string; billDate?: string; status?: RunStatus },
    page: KeysetPage,
  ): Promise<KeysetResult<RunRow>> {
    const where = new SearchConditions({ limit: page.limit + 1 })
      .equals('r.channel_code', 'channelCode', f.channelCode)
      .equals('r.bill_date', 'billDate', f.billDate, 'date')
      .equals('r.status', 'status', f.status)
      .after('r.created_at', [{ column: 'r.run_id', value: page.after?.key ?? '' }], page.after?.at);
    const rows = await this.query<RunRow & { cursor_at: string }>(
      `SELECT r.*, to_char(r.bill_date, 'YYYY-MM-DD') AS bill_date, ${keysetAt('r.created_at')} AS cursor_at
         FROM reconciliation_runs r ${where.sql()}
        ORDER BY r.created_at DESC, r.run_id DESC LIMIT :limit`,
      where.replacements,
    );
    const found = keysetPageOf(rows, page.limit, (r) => ({ at: r.cursor_at, key: r.run_id }));
    return { rows: found.rows.map(({ cursor_at: _cursor, ...r }) => r), next: found.next };
  }

  /**
   * A run's findings about every app's orders, newest first by (created_at, id), a keyset page
   * at a time; a position's key is the finding's id (digits).
   */
  async searchMismatches(
    runId: string,
    f: { category?: MismatchCategory; state?: MismatchRow['state'] },
    page: KeysetPage,
  ): Promise<KeysetResult<MismatchRow>> {
    const where = new SearchConditions({ runId, limit: page.limit + 1 })
      .where('m.run_id = :runId')
      .equals('m.category', 'category', f.category)
      .equals('m.state', 'state', f.state)
      .after(
        'm.created_at',
        [{ column: 'm.id', value: page.after?.key ?? '', type: 'bigint' }],
        page.after?.at,
      );
    const rows = await this.query<MismatchRow & { cursor_at: string }>(
      `SELECT m.*, ${keysetAt('m.created_at')} AS cursor_at FROM reconciliation_mismatches m ${where.sql()}
        ORDER BY m.created_at DESC, m.id DESC LIMIT :limit`,
      where.replacements,
    );
    const found = keysetPageOf(rows, page.limit, (m) => ({ at: m.cursor_at, key: String(m.id) }));
    return { rows: found.rows.map(({ cursor_at: _cursor, ...m }) => m), next: found.next };
  }

  /** How many findings wait for a person (state `open`; the console's exceptions). */
  async countOpenMismatches(): Promise<number> {
    const [row] = await this.query<{ n: string }>(
      "SELECT count(*) AS n FROM reconciliation_mismatches WHERE state = 'open'",
      {},
    );
    return Number(row?.n ?? 0);
  }

  async mismatch(id: string): Promise<MismatchRow | undefined> {
    const [row] = await this.query<MismatchRow>('SELECT * FROM reconciliation_mismatches WHERE id = :id', {
      id,
    });
    return row;
  }

  /** Records a person's resolution of an open finding; answers the row as it is after. */
  async resolve(id: string, r: { resolution: Resolution; note: string | null; resolvedBy: string }) {
    const [row] = await this.query<MismatchRow>(
      `UPDATE reconciliation_mismatches
          SET state = 'resolved', resolution = :resolution, note = COALESCE(:note, note), resolved_by = :resolvedBy,
              resolved_at = now(), updated_at = now()
        WHERE id = :id AND state IN ('open', 'repaired') RETURNING *`,
      { id, ...r },
    );
    return row;
  }
}
