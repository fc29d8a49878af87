/** The complaint workflow's messages (SPEC §16). Deterministic: workflow code imports this. */
import { defineSignal, defineUpdate } from '@temporalio/workflow';

export const complaintWorkflowId = (channelCode: string, complaintId: string) =>
  `complaint:${channelCode}:${complaintId}`;

/** The safety net's schedule (and its workflow's id) of a task queue. */
export const complaintSweepScheduleId = (taskQueue: string) => `complaint-sweep:${taskQueue}`;

export interface ComplaintWorkflowInput {
  channelCode: string;
  /** The channel account whose complaints API holds it (the service provider's). */
  account: string;
  complaintId: string;
  /** How long a processed complaint's workflow waits for the payer to complain again, scaled. */
  quietMs: number;
  /** How long a planned refund waits to be settled by its caller before the book is asked, scaled. */
  unsettledMs: number;
  /** Replies already sent (their keys), carried over continue-as-new. */
  replied?: string[];
  /** A refund being made for the complaint, carried over continue-as-new. */
  plannedRefund?: PlannedRefund | null;
  /** Refund attempts the book refused or failed, carried over continue-as-new. */
  refundAttempts?: number;
}

export interface ComplaintSweepInput {
  /** How many of the channel's days back the sweep lists (today included). */
  days: number;
  /** Where the channels post complaint notifications: `${publicBaseUrl}/api/v1/notify/complaint/{channel}`. */
  publicBaseUrl: string;
}

/** What the workflow keeps of its record between steps; times in epoch milliseconds. */
/**
 * Patch markers of the complaint workflow (`patched()`); see docs/operations.md, "Retiring a
 * workflow version".
 */
export const patches = {
  /** A complaint's refund of a refund request is approved at the channel after the book made it. */
  refundApproval: 'complaint-refund-approval',
} as const;

export interface ComplaintSummary {
  state: 'pending' | 'processing' | 'processed';
  appId: string | null;
  tradeNo: string | null;
  subMerchantNo: string;
  replyDueAt: number;
  completeDueAt: number;
  /** When `complaint.reply_due` is raised (12 h after the complaint, scaled). */
  remindAt: number;
  replied: boolean;
  reminded: boolean;
  overdue: boolean;
  refundNo: string | null;
  refundAmount: number | null;
  version: number;
  /** Absent in summaries recorded before it was kept. */
  problemType?: 'refund' | 'service_not_work' | 'other';
}

/** Who asked for an action: the app through the API, or an operator in the console. */
export type ComplaintActor = { kind: 'app'; appId: string } | { kind: 'operator'; operatorId: string };

export interface ReplyRequest {
  actor: ComplaintActor;
  content: string;
  /** The channel's ids of the images, uploaded before the update. */
  imageIds: string[];
  /** Names this reply: the same content and images again is the same reply. */
  key: string;
}

export interface PlannedRefund {
  amount: number;
  reason: string | null;
  /** The refund's number in the order's book, unique per app: a repeat is the same refund. */
  merchantRefundNo: string;
  /** When it was planned (epoch ms): one never recorded is looked for after a while. */
  at: number;
}

export interface ActionAnswer {
  /** The same action again: nothing was sent to the channel. */
  repeated: boolean;
}

/** Sent by an intake (a notification, the sweep): the channel has something new to read. */
export const complaintChangedSignal =
  defineSignal<[{ source: 'notification' | 'sweep' }]>('complaintChanged');

export const replyComplaintUpdate = defineUpdate<ActionAnswer, [ReplyRequest]>('replyComplaint');
export const completeComplaintUpdate = defineUpdate<ActionAnswer, [{ actor: ComplaintActor }]>(
  'completeComplaint',
);
/** Plans the complaint's refund; the caller then asks the order's book for it (RefundService). */
export const planComplaintRefundUpdate = defineUpdate<
  PlannedRefund & ActionAnswer & { refundNo: string | null },
  [{ actor: ComplaintActor; amount: number; reason: string | null }]
>('planComplaintRefund');
/** How the book answered the planned refund: its refund number, or its refusal (the plan is dropped). */
export const settleComplaintRefundUpdate = defineUpdate<
  void,
  [{ actor: ComplaintActor; merchantRefundNo: string; refundNo: string | null; refusal?: string }]
>('settleComplaintRefund');

/** The error types an action's refusal carries (each an SPEC error code). */
export const COMPLAINT_PROCESSED = 'complaint_processed';
