import type { Complaint } from './model';
import { isOverdue } from './rules';

/** A complaint as `GET /api/v1/complaints/{complaint_id}` answers it and its notifications post it. */
export function complaintView(c: Complaint, now = new Date()) {
  return {
    complaint_id: c.complaintId,
    channel_code: c.channelCode,
    trade_no: c.tradeNo,
    order_unknown: c.tradeNo === null,
    merchant_id: c.merchantId,
    sub_merchant_no: c.subMerchantNo,
    state: c.state,
    problem_type: c.problemType,
    apply_refund_amount: c.applyRefundAmount,
    detail: c.detail,
    payer_phone: c.payerPhone,
    image_count: c.images.length,
    history: c.history.map((s) => ({
      operator: s.operator,
      at: s.at,
      type: s.type,
      details: s.details,
      image_count: s.image_count,
    })),
    complaint_times: c.complaintTimes,
    awaits_reply: c.awaitsReply,
    full_refunded: c.fullRefunded,
    complained_at: c.complainedAt.toISOString(),
    reply_due_at: c.replyDueAt.toISOString(),
    complete_due_at: c.completeDueAt.toISOString(),
    replied_at: c.repliedAt?.toISOString() ?? null,
    completed_at: c.completedAt?.toISOString() ?? null,
    overdue: isOverdue(c, now),
    refund_no: c.refundNo,
    refund_amount: c.refundAmount,
    updated_at: c.updatedAt.toISOString(),
  };
}

export type ComplaintView = ReturnType<typeof complaintView>;

/**
 * A complaint as its notifications post it: the view without the payer's words and phone, which
 * durapay keeps sealed. A notification's body is kept in clear (listed, resent, shown in the console)
 * and leaves for a URL, so the app reads the personal data with GET, over its own authenticated call.
 */
export function complaintEventView(c: Complaint, now = new Date()) {
  const { detail: _detail, payer_phone: _phone, history, ...rest } = complaintView(c, now);
  return { ...rest, history: history.map(({ details: _details, ...step }) => step) };
}
