/**
 * The simulator's statement lines: its orders paid and refunds accepted on a day, as WeChat Pay's
 * tradebill lists them (./wechatpay/tradebill.ts writes the file), steered by the same markers as
 * the WeChat Pay sandbox's: `[statement:amount+1]` and `[statement:omit]` in an order's subject,
 * `[statement:refund-processing]` in a refund's reason.
 */
import type { OrderRow, RefundRow } from './store';
import {
  STATEMENT_AMOUNT_PLUS_ONE,
  STATEMENT_OMIT,
  STATEMENT_REFUND_PROCESSING,
  feeOf,
  type TradebillLine,
} from './wechatpay/tradebill';

const REFUND_STATES: Record<RefundRow['status'], 'SUCCESS' | 'PROCESSING' | 'CHANGE' | 'FAIL'> = {
  success: 'SUCCESS',
  processing: 'PROCESSING',
  abnormal: 'CHANGE',
  failed: 'FAIL',
};

function common(order: OrderRow) {
  return {
    appid: 'sandbox',
    mchid: 'sandbox',
    subMchid: order.sub_merchant_no ?? '0',
    transactionId: order.channel_trade_no,
    outTradeNo: order.trade_no,
    openid: '',
    tradeType: order.pay_method.toUpperCase(),
    description: order.subject,
    attach: '',
  };
}

export function statementLines(entries: {
  orders: readonly OrderRow[];
  refunds: readonly (RefundRow & { created_at: Date; order: OrderRow })[];
}): TradebillLine[] {
  const out: TradebillLine[] = [];
  for (const order of entries.orders) {
    if (order.paid_at === null || order.subject.includes(STATEMENT_OMIT)) continue;
    // A barcode payment its reverse gave back (WeChat Pay's REVOKED) is no money of the
    // merchant's: it is not stated, as a payment closed unpaid is not.
    if (order.reversed_at !== null && order.reverse_refunded) continue;
    const total = order.amount + (order.subject.includes(STATEMENT_AMOUNT_PLUS_ONE) ? 1 : 0);
    out.push({
      ...common(order),
      at: order.paid_at.getTime(),
      fee: feeOf(total),
      entry: { kind: 'payment', total },
    });
  }
  for (const refund of entries.refunds) {
    out.push({
      ...common(refund.order),
      at: new Date(refund.created_at).getTime(),
      fee: -feeOf(refund.amount),
      entry: {
        kind: 'refund',
        refundId: refund.channel_refund_no,
        outRefundNo: refund.refund_no,
        refund: refund.amount,
        refundStatus: (refund.reason ?? '').includes(STATEMENT_REFUND_PROCESSING)
          ? 'PROCESSING'
          : REFUND_STATES[refund.status],
      },
    });
  }
  return out.sort((a, b) => a.at - b.at);
}
