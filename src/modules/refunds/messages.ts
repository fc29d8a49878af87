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
}

export const refundResultSignal = defineSignal<[RefundSignal]>('refundResult');
