import { isoOrNull } from '../../platform/dates';
import type { Order } from './model';

/** The order as GET /api/v1/pay/query shows it (SPEC §3.3). */
export function orderView(o: Order) {
  return {
    trade_no: o.tradeNo,
    merchant_order_no: o.merchantOrderNo,
    pay_method: o.payMethod,
    amount: Number(o.amount),
    status: o.status,
    channel_trade_no: o.channelTradeNo,
    pay_time: isoOrNull(o.payTime),
    created_at: isoOrNull(o.createdAt),
    channel_code: o.channelCode,
    channel_pay_method: o.channelPayMethod ?? null,
    subject: o.subject,
    merchant_id: o.merchantId,
    refunded_amount: Number(o.refundedAmount),
    profit_sharing_amount: Number(o.profitSharingAmount),
    profit_sharing_status: o.profitSharingStatus,
    profit_shared_amount: Number(o.profitSharedAmount),
    profit_returned_amount: Number(o.profitReturnedAmount),
    expire_time: isoOrNull(o.expireTime),
    closed_at: isoOrNull(o.closedAt),
    close_reason: o.closeReason ?? null,
    device_id: o.deviceId ?? null,
    store_id: o.storeId ?? null,
    payment_link_id: o.paymentLinkId ?? null,
    standing_code_id: o.standingCodeId ?? null,
    buyer_note: o.buyerNote ?? null,
  };
}
