import type { MismatchRow, RunRow } from './repository';

/**
 * A run as an app sees it (SPEC §10). The summary and the error are the account's as a whole:
 * shown only to the app whose account it is, not to each app sharing the channel's own account;
 * a run another app started says `app` rather than which.
 */
export function runViewFor(appId: string, r: RunRow, owned: boolean) {
  const view = runView(r);
  const ownStart = ['schedule', 'cli', appId].includes(r.started_by);
  return {
    ...view,
    summary: owned ? view.summary : null,
    error: owned ? view.error : null,
    started_by: ownStart ? r.started_by : 'app',
  };
}

/** A run as it is recorded (the CLI's and the log's). */
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
