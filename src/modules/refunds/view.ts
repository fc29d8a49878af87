import { isoOrNull } from '../../platform/dates';
import type { Refund } from './model';

/** The refund as GET /api/v1/pay/refund/query shows it (SPEC §3.6). */
export function refundView(r: Refund) {
  return {
    refund_no: r.refundNo,
    trade_no: r.tradeNo,
    refund_amount: Number(r.refundAmount),
    status: r.status,
    channel_refund_no: r.channelRefundNo,
    refund_time: isoOrNull(r.refundTime),
    reason: r.reason,
    merchant_refund_no: r.merchantRefundNo,
    created_at: isoOrNull(r.createdAt),
  };
}
