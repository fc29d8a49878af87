/**
 * What the gateway says about a trade: the business fields of alipay.trade.query, of a refund's
 * answer and its query, the fields of an asynchronous notification (trade_status_sync), and the
 * copy of a trade tests read; every amount a yuan string and every time Beijing time.
 */
import { formatYuan } from '../html';
import type { Params } from './wire';
import { API_VERSION, SIGN_TYPE, beijingTime, beijingTimeMillis } from './wire';
import {
  refundedFen,
  type PayMethod,
  type RefundRecord,
  type RefundStatus,
  type TradeRecord,
  type TradeStatus,
} from './store';

export const yuan = formatYuan;

/** Drops the fields that are absent, so an answer or a form carries only what it has. */
function present<T extends Record<string, string | undefined>>(fields: T): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out;
}

const time = (ms: number | undefined) => (ms === undefined ? undefined : beijingTime(ms));

/** alipay.trade.query's business fields. */
export function queryView(trade: TradeRecord): Record<string, string> {
  const paid = trade.paidAt !== undefined;
  const total = yuan(trade.totalFen);
  return present({
    trade_no: trade.tradeNo,
    out_trade_no: trade.order.out_trade_no,
    buyer_logon_id: trade.buyerLogonId,
    trade_status: trade.status,
    total_amount: total,
    receipt_amount: paid ? total : undefined,
    buyer_pay_amount: paid ? total : undefined,
    point_amount: paid ? '0.00' : undefined,
    invoice_amount: paid ? total : undefined,
    send_pay_date: time(trade.paidAt),
    buyer_user_id: trade.buyerId,
    buyer_open_id: trade.buyerOpenId,
    subject: trade.order.subject,
  });
}

/**
 * alipay.trade.pay's business fields, paid (10000) or still waiting for the buyer (10003, whose
 * amounts received are nil).
 */
export function barcodePayView(trade: TradeRecord): Record<string, unknown> {
  const paid = trade.paidAt !== undefined;
  const total = yuan(trade.totalFen);
  const received = paid ? total : '0.00';
  return {
    ...present({
      trade_no: trade.tradeNo,
      out_trade_no: trade.order.out_trade_no,
      buyer_logon_id: trade.buyerLogonId,
      total_amount: total,
      receipt_amount: received,
      buyer_pay_amount: received,
      point_amount: '0.00',
      invoice_amount: received,
      gmt_payment: time(trade.paidAt),
      buyer_user_id: trade.buyerId,
    }),
    ...(paid ? { fund_bill_list: [{ fund_channel: 'ALIPAYACCOUNT', amount: total }] } : {}),
  };
}

/** alipay.trade.refund's business fields; fund_change says whether this call moved money. */
export function refundAnswerView(
  trade: TradeRecord,
  refund: RefundRecord,
  fundChange: boolean,
): Record<string, string> {
  return present({
    trade_no: trade.tradeNo,
    out_trade_no: trade.order.out_trade_no,
    buyer_logon_id: trade.buyerLogonId,
    fund_change: fundChange ? 'Y' : 'N',
    refund_fee: yuan(refundedFen(trade)),
    gmt_refund_pay: time(refund.doneAt),
    send_back_fee: refund.doneAt === undefined ? undefined : yuan(refund.amountFen),
    buyer_user_id: trade.buyerId,
    buyer_open_id: trade.buyerOpenId,
  });
}

/** alipay.trade.fastpay.refund.query's business fields for a refund it found. */
export function refundQueryView(trade: TradeRecord, refund: RefundRecord): Record<string, string> {
  const done = refund.status === 'REFUND_SUCCESS';
  return present({
    trade_no: trade.tradeNo,
    out_trade_no: trade.order.out_trade_no,
    out_request_no: refund.outRequestNo,
    total_amount: yuan(trade.totalFen),
    refund_amount: yuan(refund.amountFen),
    refund_reason: refund.reason,
    refund_status: done ? 'REFUND_SUCCESS' : undefined,
    gmt_refund_pay: done ? time(refund.doneAt) : undefined,
    send_back_fee: done ? yuan(refund.amountFen) : undefined,
  });
}

export interface NotifyIdentity {
  appId: string;
  sellerId: string;
  notifyId: string;
}

/**
 * A trade_status_sync notification's fields, before signing: the trade as it stands now, and
 * for a refund its out_request_no as out_biz_no, the trade's total refunded and the refund time.
 */
export function notifyFields(
  trade: TradeRecord,
  who: NotifyIdentity,
  now: number,
  refund?: RefundRecord,
): Params {
  const paid = trade.paidAt !== undefined;
  const total = yuan(trade.totalFen);
  return present({
    notify_time: beijingTime(now),
    notify_type: 'trade_status_sync',
    notify_id: who.notifyId,
    app_id: who.appId,
    auth_app_id: who.appId,
    charset: 'utf-8',
    version: API_VERSION,
    sign_type: SIGN_TYPE,
    trade_no: trade.tradeNo,
    out_trade_no: trade.order.out_trade_no,
    out_biz_no: refund?.outRequestNo,
    buyer_id: trade.buyerId,
    buyer_open_id: trade.buyerOpenId,
    buyer_logon_id: trade.buyerLogonId,
    seller_id: who.sellerId,
    trade_status: trade.status,
    total_amount: total,
    receipt_amount: paid ? total : undefined,
    invoice_amount: paid ? total : undefined,
    buyer_pay_amount: paid ? total : undefined,
    point_amount: paid ? '0.00' : undefined,
    refund_fee: refund ? yuan(refundedFen(trade)) : undefined,
    subject: trade.order.subject,
    body: trade.order.body,
    gmt_create: time(trade.createdAt),
    gmt_payment: time(trade.paidAt),
    gmt_refund: refund?.doneAt === undefined ? undefined : beijingTimeMillis(refund.doneAt),
    gmt_close: time(trade.closedAt),
    fund_bill_list: paid ? JSON.stringify([{ amount: total, fundChannel: 'ALIPAYACCOUNT' }]) : undefined,
    passback_params: trade.order.passback_params,
  });
}

/**
 * A copy of a trade as tests read it: its biz_content as received, and over it the trade's state
 * in Alipay's field names, amounts in yuan.
 */
export interface AlipaySandboxTrade extends Record<string, unknown> {
  out_trade_no: string;
  trade_no: string;
  method: PayMethod;
  status: TradeStatus;
  /** Whether Alipay has the trade; a precreated one only once its code was scanned. */
  exists: boolean;
  total_amount: string;
  subject: string;
  notify_url?: string;
  return_url?: string;
  app_auth_token?: string;
  buyer_id?: string;
  buyer_open_id?: string;
  gmt_create?: string;
  gmt_payment?: string;
  gmt_close?: string;
  /** When it stops waiting for its buyer (time_expire, or from timeout_express). */
  time_expire: string;
  /** A barcode trade's (alipay.trade.pay): the sha-256 of the buyer's code, never the code. */
  auth_code_sha256?: string;
  /** A barcode trade's: what its buyer does (sandbox/wallet-buyers.ts). */
  buyer?: string;
  /** How alipay.trade.cancel undid it: `close` (unpaid) or `refund` (paid, given back whole). */
  cancel_action?: 'close' | 'refund';
  gmt_cancel?: string;
  refunds: {
    out_request_no: string;
    refund_amount: string;
    refund_reason?: string;
    refund_status: RefundStatus;
    gmt_refund_pay?: string;
  }[];
}

export function tradeSnapshot(trade: TradeRecord): AlipaySandboxTrade {
  const copy: AlipaySandboxTrade = {
    ...structuredClone(trade.order),
    out_trade_no: trade.order.out_trade_no,
    trade_no: trade.tradeNo,
    method: trade.method,
    status: trade.status,
    exists: trade.exists,
    total_amount: trade.order.total_amount,
    subject: trade.order.subject,
    notify_url: trade.context.notifyUrl,
    return_url: trade.context.returnUrl,
    app_auth_token: trade.context.appAuthToken,
    buyer_id: trade.buyerId,
    buyer_open_id: trade.buyerOpenId,
    gmt_create: time(trade.createdAt),
    gmt_payment: time(trade.paidAt),
    gmt_close: time(trade.closedAt),
    time_expire: beijingTime(trade.expiresAt),
    auth_code_sha256: trade.barcode?.authCodeSha256,
    buyer: trade.barcode?.buyer,
    cancel_action: trade.cancelled?.action,
    gmt_cancel: time(trade.cancelled?.at),
    refunds: trade.refunds.map((r) => ({
      out_request_no: r.outRequestNo,
      refund_amount: yuan(r.amountFen),
      ...(r.reason === undefined ? {} : { refund_reason: r.reason }),
      refund_status: r.status,
      ...(r.doneAt === undefined ? {} : { gmt_refund_pay: beijingTime(r.doneAt) }),
    })),
  };
  // Absent rather than undefined, so a test's toEqual reads like the wire.
  for (const key of Object.keys(copy)) if (copy[key] === undefined) delete copy[key];
  return copy;
}
