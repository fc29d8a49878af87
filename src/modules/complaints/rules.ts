/**
 * Complaint rules (SPEC §16), pure: the deadlines WeChat Pay sets a merchant, when each of
 * durapay's reminders is due, and what an action may do. Used by the workflow and the service.
 */
export const COMPLAINT_STATES = ['pending', 'processing', 'processed'] as const;

const HOUR = 3_600_000;
/** WeChat Pay: a first reply within 24 hours of the complaint. */
export const REPLY_WITHIN_MS = 24 * HOUR;
/** WeChat Pay: dealt with (processed) within 72 hours. */
export const COMPLETE_WITHIN_MS = 72 * HOUR;
/** `complaint.reply_due` is raised this long after the complaint when nobody has replied. */
export const REMIND_AFTER_MS = 12 * HOUR;
/** A processed complaint's workflow waits this long for the payer to complain again. */
export const QUIET_AFTER_PROCESSED_MS = 30 * 24 * HOUR;
/** How many of the channel's days the safety net lists (today and the 6 before). */
export const SWEEP_DAYS = 7;
/** How often the safety net runs (minutes). */
export const SWEEP_EVERY_MINUTES = 10;
/** A planned refund never settled (its caller lost) is looked for in the book after this long. */
export const UNSETTLED_REFUND_MS = 10 * 60_000;

/** A reply's content: WeChat Pay takes 1 to 200 characters; at most 4 images. */
export const REPLY_MAX_CHARS = 200;
export const REPLY_MAX_IMAGES = 4;
/** WeChat Pay's image API takes files up to 2 MiB. */
export const IMAGE_MAX_BYTES = 2 * 1024 * 1024;

/**
 * The steps of the payer's latest round: from their last complaint (made or continued) on. A
 * reply to an earlier round does not answer this one.
 */
export function latestRound<S extends { type: string }>(steps: S[]): S[] {
  let since = 0;
  steps.forEach((s, i) => {
    if (s.type === 'USER_CREATE_COMPLAINT' || s.type === 'USER_CONTINUE_COMPLAINT') since = i;
  });
  return steps.slice(since);
}

/** Whether the channel already holds this reply in the latest round (sent by an attempt whose answer was lost). */
export const holdsReply = (steps: { type: string; details: string }[], content: string): boolean =>
  latestRound(steps).some((s) => s.type === 'MERCHANT_RESPONSE' && s.details === content);

/** Not processed, and past the reply deadline without a reply or past the completion deadline. */
export function isOverdue(
  c: { state: string; repliedAt: Date | null; replyDueAt: Date; completeDueAt: Date },
  now: Date,
): boolean {
  if (c.state === 'processed') return false;
  return (c.repliedAt === null && c.replyDueAt < now) || c.completeDueAt < now;
}

/**
 * The refund number a complaint's refund has in its order's book (unique per app): one per
 * attempt, the first without a suffix, so that a refund the book refused keeps its number and
 * the next is a refund of its own.
 */
export const complaintRefundNo = (channelCode: string, complaintId: string, attempt = 0) =>
  `complaint:${channelCode}:${complaintId}${attempt === 0 ? '' : `:${attempt}`}`;

/** The deadlines of a complaint the workflow is waiting on, in epoch ms (undefined: none due). */
export function nextDeadline(s: {
  state: string;
  replied: boolean;
  reminded: boolean;
  overdue: boolean;
  remindAt: number;
  replyDueAt: number;
  completeDueAt: number;
}): { kind: 'reply_due' | 'overdue'; at: number } | undefined {
  if (s.state === 'processed') return undefined;
  const due: { kind: 'reply_due' | 'overdue'; at: number }[] = [];
  if (!s.replied && !s.reminded) due.push({ kind: 'reply_due', at: s.remindAt });
  if (!s.overdue)
    due.push({ kind: 'overdue', at: s.replied ? s.completeDueAt : Math.min(s.replyDueAt, s.completeDueAt) });
  return due.sort((a, b) => a.at - b.at)[0];
}
