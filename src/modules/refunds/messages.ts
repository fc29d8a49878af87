/** The refund workflow's messages (SPEC §3.5): its id, input and the result signal it takes. */
import { defineSignal } from '@temporalio/workflow';

/** Patch markers of the refund workflow (`patched()`); see the platform's note on patches. */
export const patches = {
  /**
   * A refund waits on one polling activity whose retries are the backoff; it woke for a timer
   * and a query at every gap (a workflow task each).
   */
  refundPollsAsActivity: 'refund-polls-as-activity',
} as const;

export const refundWorkflowId = (refundNo: string) => `refund:${refundNo}`;

export interface RefundSignal {
  status: 'success' | 'failed';
  channelRefundNo: string | null;
  refundedAt: string | null;
  reason: string | null;
}

export interface RefundWorkflowInput {
  appId: string;
  tradeNo: string;
  refundNo: string;
  channelCode: string;
  amount: number;
  orderWorkflowId: string;
  pollGapsMs: number[];
  pollForMs: number;
  /**
   * The channel never answered the request for this refund: it may or may not have it. Two
   * queries in a row that find no such refund settle it as failed (a request cut off on its way
   * is not taken up by the channel later than the next query); anything else is followed as usual.
   */
  unanswered?: boolean;
}

export const refundResultSignal = defineSignal<[RefundSignal]>('refundResult');
