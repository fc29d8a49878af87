import type { MismatchRow, RunRow } from './repository';

/** A run as the API shows it (SPEC §10). */
export function runView(r: RunRow) {
  return {
    run_id: r.run_id,
    channel_code: r.channel_code,
    account: r.account,
    bill_date: r.bill_date,
    status: r.status,
    statement: r.statement,
    statement_sha256: r.statement_sha256,
    rows: Number(r.rows_read),
    summary: r.summary,
    error: r.error,
    started_by: r.started_by,
    started_at: r.started_at ? r.started_at.toISOString() : null,
    finished_at: r.finished_at ? r.finished_at.toISOString() : null,
  };
}

/** A finding as the API shows it: both sides' rows as each recorded it. */
export function mismatchView(m: MismatchRow) {
  return {
    mismatch_id: String(m.id),
    run_id: m.run_id,
    category: m.category,
    kind: m.kind,
    trade_no: m.trade_no,
    refund_no: m.refund_no,
    state: m.state,
    durapay: m.local,
    channel: m.channel,
    note: m.note,
    resolution: m.resolution,
    resolved_by: m.resolved_by,
    resolved_at: m.resolved_at ? new Date(m.resolved_at).toISOString() : null,
    created_at: new Date(m.created_at).toISOString(),
  };
}
