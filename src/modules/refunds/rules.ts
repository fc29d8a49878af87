/** Refund rules of SPEC §3.5–3.6. */

/** `abnormal` (SPEC §3.5): the money left the order; an operator has it paid out another way. */
export const REFUND_STATUSES = ['processing', 'success', 'failed', 'abnormal'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** Why a verified refund callback is not delivered: its outcome in the callback log, and why. */
export interface RefundCallbackRefusal {
  outcome: 'unknown_refund' | 'amount_mismatch';
  message: string;
}

/**
 * SPEC §4: a refund callback names a refund of its order (`refundNo`: the channel's reference
 * to it, `eventRefundNo`: what its event says) and that refund's amount.
 */
export function refundCallbackRefusal(
  refund: { tradeNo: string; refundAmount: number | string } | null,
  asked: { tradeNo: string; refundNo: string | undefined; eventRefundNo: string; amount: number },
): RefundCallbackRefusal | null {
  if (!refund || refund.tradeNo !== asked.tradeNo) {
    return { outcome: 'unknown_refund', message: `no refund ${asked.refundNo ?? asked.eventRefundNo}` };
  }
  if (Number(refund.refundAmount) !== asked.amount) {
    return { outcome: 'amount_mismatch', message: `refund amount ${asked.amount} does not match` };
  }
  return null;
}

/**
 * Whether a channel's refund result still has a refund to settle: one still processing, or an
 * abnormal one the channel has paid out since. Any other is a repeat of what was taken.
 */
export function refundCallbackSettles(
  status: RefundStatus,
  reported: 'success' | 'failed' | 'abnormal',
): boolean {
  return status === 'processing' || (status === 'abnormal' && reported === 'success');
}
