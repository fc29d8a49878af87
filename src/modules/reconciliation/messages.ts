// What the reconciliation workflows and their starters share (SPEC §10): ids, inputs, results.
// Workflow-safe: no Node built-ins, no I/O.

export const RECONCILIATION_CATEGORIES = [
  'missing_local_payment',
  'missing_channel_payment',
  'amount_mismatch',
  'status_mismatch',
  'unknown_at_durapay',
] as const;
export type MismatchCategory = (typeof RECONCILIATION_CATEGORIES)[number];

export const RUN_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const RESOLUTIONS = ['accepted_channel', 'accepted_durapay', 'ignored'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

/** Where a finding stands: `carried` waits out the carry-over, `repaired` was handed to its order. */
export const MISMATCH_STATES = ['open', 'carried', 'repaired', 'resolved'] as const;
export type MismatchState = (typeof MISMATCH_STATES)[number];

/**
 * The account part of a run's id for orders made without a sub-merchant (the channel's own,
 * configured account).
 */
export const DEFAULT_ACCOUNT = 'default';

/** A run's id: one per channel, account and day; its workflow's id is `reconciliation:{run_id}`. */
export const reconciliationRunId = (channelCode: string, account: string, billDate: string) =>
  `${channelCode}:${account}:${billDate}`;
export const reconciliationWorkflowId = (runId: string) => `reconciliation:${runId}`;

/** The daily schedule of a task queue and the id prefix of the workflows it starts. */
export const reconciliationScheduleId = (taskQueue: string) => `reconciliation-daily:${taskQueue}`;

export interface ReconciliationInput {
  runId: string;
  channelCode: string;
  account: string;
  /** YYYY-MM-DD, in the channel's time zone (Asia/Shanghai). */
  billDate: string;
  /** RFC 3339: a statement not ready by then fails the run (midday of the next day). */
  readyDeadline: string;
  /** Where reconciliation.completed goes instead of the apps' own order notify_url, if set. */
  notifyUrl: string | null;
  /** Multiplies the waits for a statement not ready (1 in production; tests run time faster). */
  timeScale: number;
}

/** What fetching and reading the statement found. */
export type StatementLoad =
  { status: 'not_ready'; reason: string } | { status: 'empty' } | { status: 'ready'; rows: number };

export interface RunSummary {
  statement: 'ready' | 'empty';
  rows: number;
  matched: number;
  /** Mismatches found per category (any state: open, carried, repaired, resolved). */
  categories: Record<MismatchCategory, number>;
  /** Payments waiting out the carry-over (not yet mismatches). */
  carried: number;
  repaired: number;
  channel: { paid: number; refunded: number; fees: number };
  durapay: { paid: number; refunded: number };
}

export interface ReconciliationResult {
  runId: string;
  status: 'completed' | 'failed';
  summary: RunSummary | null;
  error: string | null;
}

/** The daily schedule's run: starts the runs of the day before the one it runs on. */
export interface ReconciliationDayInput {
  /** Set by hand (a day to run again); absent: the day before today in Asia/Shanghai. */
  billDate?: string;
}
