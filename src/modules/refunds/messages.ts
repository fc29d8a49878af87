/** The refund workflow's messages (SPEC §3.5): its id, input and the result signal it takes. */
import { defineSignal, defineUpdate } from '@temporalio/workflow';

// The order starts a refund's workflow, so orders names its id; the refunds module uses it.
export { refundWorkflowId } from '../orders/messages';

export interface RefundSignal {
  status: 'success' | 'failed' | 'abnormal';
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
  /**
   * The refund ended `abnormal` in an earlier run, which has finished: this run was started for
   * an operator's `applyAbnormalRefund`, and follows the refund from there.
   */
  resume?: 'abnormal';
}

/** POST /api/v1/pay/refund/abnormal, validated: how the channel pays an abnormal refund out. */
export interface AbnormalRefundRequest {
  method: 'user_bank_card' | 'merchant_bank_card';
  bankType: string | null;
  /**
   * The buyer's bank account and name (user_bank_card), sealed by the service with the payload
   * keys and bound to the refund (./payee.ts); only the activity that hands them to the channel
   * opens them. The update and the activity input are kept in the history: sealed, neither the
   * codec server nor anyone reading the history sees them.
   */
  sealedPayee?: string | null;
}

/** The refund as the channel took the request: still `abnormal` until it is paid out. */
export interface AbnormalRefundResult {
  refund_no: string;
  trade_no: string;
  refund_amount: number;
  status: 'abnormal' | 'success';
  channel_refund_no: string | null;
}

export const applyAbnormalRefundUpdate = defineUpdate<AbnormalRefundResult, [AbnormalRefundRequest]>(
  'applyAbnormalRefund',
);

export const refundResultSignal = defineSignal<[RefundSignal]>('refundResult');
