/** The refund workflow's messages (SPEC §3.5): its id, input and the result signal it takes. */
import { defineSignal } from '@temporalio/workflow';

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
