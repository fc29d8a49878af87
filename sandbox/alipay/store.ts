/**
 * The Alipay gateway's trades and their refunds, in memory (a restart forgets them; the keys
 * persist, see keys.ts), and the only transitions Alipay allows between their states. A trade is
 * keyed by out_trade_no. It exists at Alipay from trade.create and trade.pay (a buyer's code
 * scanned at a till), from the first visit of a page or wap payment URL and from the app's
 * submit; a precreated one only once its code is scanned (the cashier opened): until then a query
 * or a close answers ACQ.TRADE_NOT_EXIST, as Alipay's do.
 */
import type { SandboxBuyer } from '../../src/channels/sandbox/barcode';
import { beijingTime, businessFailed, newTradeNo, randomDigits, userId } from './wire';

export type TradeStatus = 'WAIT_BUYER_PAY' | 'TRADE_SUCCESS' | 'TRADE_FINISHED' | 'TRADE_CLOSED';
export type PayMethod =
  | 'alipay.trade.pay'
  | 'alipay.trade.precreate'
  | 'alipay.trade.create'
  | 'alipay.trade.page.pay'
  | 'alipay.trade.wap.pay'
  | 'alipay.trade.app.pay';
export type RefundStatus = 'PROCESSING' | 'REFUND_SUCCESS';

/** The biz_content of a paying method, as validated (documented fields beyond these pass as sent). */
export interface TradeOrder {
  out_trade_no: string;
  total_amount: string;
  subject: string;
  body?: string;
  product_code?: string;
  buyer_id?: string;
  buyer_open_id?: string;
  timeout_express?: string;
  time_expire?: string;
  passback_params?: string;
  sub_merchant?: { merchant_id: string };
  [field: string]: unknown;
}

export interface TradeContext {
  notifyUrl?: string;
  returnUrl?: string;
  /** The app_auth_token the trade was made with, as sent. */
  appAuthToken?: string;
  /** Whose trade it is (AlipayGateway.merchantOf): the token's authorisation, or the token. */
  merchant?: string;
}

export interface RefundRecord {
  outRequestNo: string;
  amountFen: number;
  reason?: string;
  status: RefundStatus;
  requestedAt: number;
  doneAt?: number;
}

/** How alipay.trade.cancel undid a trade: closed it unpaid, or gave a paid one back (退款). */
export type CancelAction = 'close' | 'refund';

/** What a barcode trade (alipay.trade.pay) keeps of its code and its buyer. */
export interface BarcodeOfTrade {
  /** The code is a credential of one payment: only its sha-256 is kept. */
  authCodeSha256: string;
  /** What the code's buyer does (sandbox/wallet-buyers.ts). */
  buyer: SandboxBuyer;
}

export interface TradeRecord {
  method: PayMethod;
  order: TradeOrder;
  context: TradeContext;
  tradeNo: string;
  totalFen: number;
  /** Whether Alipay has the trade (a precreated one: once scanned). */
  exists: boolean;
  status: TradeStatus;
  /** gmt_create: when it came to exist. */
  createdAt?: number;
  expiresAt: number;
  paidAt?: number;
  closedAt?: number;
  buyerId?: string;
  buyerOpenId?: string;
  buyerLogonId?: string;
  refunds: RefundRecord[];
  /** A barcode trade's code and buyer. */
  barcode?: BarcodeOfTrade;
  /** How and when alipay.trade.cancel undid it; a repeated cancel answers the same. */
  cancelled?: { action: CancelAction; at: number };
}

/** The fields whose change makes a repeat with the same out_trade_no another trade (篡改). */
function identity(method: PayMethod, order: TradeOrder, context: TradeContext): string {
  return JSON.stringify([
    method,
    order.total_amount,
    order.subject,
    order.buyer_id ?? null,
    order.buyer_open_id ?? null,
    order.sub_merchant?.merchant_id ?? null,
    context.merchant ?? null,
  ]);
}

/** Refunded so far (done), or accepted so far (done or still processing), in fen. */
export function refundedFen(trade: TradeRecord, includeProcessing = false): number {
  return trade.refunds
    .filter((r) => includeProcessing || r.status === 'REFUND_SUCCESS')
    .reduce((sum, r) => sum + r.amountFen, 0);
}

const tradeNotExist = () => businessFailed('ACQ.TRADE_NOT_EXIST', '交易不存在');

/** How long after its Beijing day ends a paid trade can still be cancelled. */
const CANCEL_GRACE_MS = 15 * 60_000;

export class TradeStore {
  private readonly byOutTradeNo = new Map<string, TradeRecord>();
  private readonly byTradeNo = new Map<string, TradeRecord>();

  /**
   * The trade and whether this call made it. A repeat with the same parameters is the same trade
   * while it can still be paid; a paid or closed one, or other parameters, are refused.
   */
  createTrade(
    method: PayMethod,
    order: TradeOrder,
    context: TradeContext,
    totalFen: number,
    expiresAt: number,
    now: number,
  ): { trade: TradeRecord; created: boolean } {
    const existing = this.byOutTradeNo.get(order.out_trade_no);
    if (existing) {
      if (existing.status === 'TRADE_SUCCESS' || existing.status === 'TRADE_FINISHED')
        throw businessFailed('ACQ.TRADE_HAS_SUCCESS', '交易已被支付');
      if (existing.status === 'TRADE_CLOSED') throw businessFailed('ACQ.TRADE_HAS_CLOSE', '交易已经关闭');
      if (identity(existing.method, existing.order, existing.context) !== identity(method, order, context)) {
        throw businessFailed(
          'ACQ.CONTEXT_INCONSISTENT',
          `交易信息被篡改: out_trade_no ${order.out_trade_no} was used with other parameters`,
        );
      }
      return { trade: existing, created: false };
    }
    const exists = method !== 'alipay.trade.precreate';
    const trade: TradeRecord = {
      method,
      order,
      context,
      tradeNo: newTradeNo(now),
      totalFen,
      exists,
      status: 'WAIT_BUYER_PAY',
      ...(exists ? { createdAt: now } : {}),
      expiresAt,
      ...(order.buyer_id === undefined ? {} : { buyerId: order.buyer_id }),
      ...(order.buyer_open_id === undefined ? {} : { buyerOpenId: order.buyer_open_id }),
      refunds: [],
    };
    this.byOutTradeNo.set(order.out_trade_no, trade);
    this.byTradeNo.set(trade.tradeNo, trade);
    return { trade, created: true };
  }

  /** Any trade the gateway holds, existing at Alipay or not (for the cashier and for tests). */
  peek(outTradeNo: string): TradeRecord | undefined {
    return this.byOutTradeNo.get(outTradeNo);
  }

  peekByTradeNo(tradeNo: string): TradeRecord | undefined {
    return this.byTradeNo.get(tradeNo);
  }

  /** Every trade the gateway holds, in the order they were made (a day's statement reads them). */
  all(): IterableIterator<TradeRecord> {
    return this.byOutTradeNo.values();
  }

  /**
   * The trade a method names by trade_no or else out_trade_no (trade_no wins when both are
   * given, as documented), among the merchant's own (an app_auth_token's authorisation, or the
   * app's own trades without one); or TRADE_NOT_EXIST.
   */
  find(ref: { out_trade_no?: string; trade_no?: string }, merchant: string | undefined): TradeRecord {
    const trade =
      ref.trade_no !== undefined
        ? this.byTradeNo.get(ref.trade_no)
        : this.byOutTradeNo.get(ref.out_trade_no!);
    if (!trade || !trade.exists || (trade.context.merchant ?? null) !== (merchant ?? null)) {
      throw tradeNotExist();
    }
    return trade;
  }

  /** The buyer scanned a precreated trade's code: Alipay has it from now on. */
  scan(trade: TradeRecord, now: number): void {
    if (trade.exists) return;
    trade.exists = true;
    trade.createdAt = now;
  }

  /** An unpaid trade past its expiry closes; true when this call closed it. */
  expireIfDue(trade: TradeRecord, now: number): boolean {
    if (trade.status !== 'WAIT_BUYER_PAY' || trade.expiresAt > now) return false;
    trade.status = 'TRADE_CLOSED';
    trade.closedAt = trade.expiresAt;
    return true;
  }

  /** The buyer paid; false when it already was (a double click). */
  pay(trade: TradeRecord, now: number): boolean {
    if (trade.status !== 'WAIT_BUYER_PAY') return false;
    this.scan(trade, now);
    trade.status = 'TRADE_SUCCESS';
    trade.paidAt = now;
    if (trade.buyerOpenId === undefined) trade.buyerId ??= userId();
    trade.buyerLogonId = `138****${randomDigits(4)}`;
    return true;
  }

  /** trade.close: only a trade waiting for its buyer. */
  close(trade: TradeRecord, now: number): void {
    if (trade.status !== 'WAIT_BUYER_PAY') {
      throw businessFailed(
        'ACQ.TRADE_STATUS_ERROR',
        `交易状态不合法: the trade is ${trade.status}; only WAIT_BUYER_PAY can be closed`,
      );
    }
    trade.status = 'TRADE_CLOSED';
    trade.closedAt = now;
  }

  /**
   * alipay.trade.cancel (撤销): a trade waiting for its buyer closes; a paid one of the day (its
   * Beijing day, or within 15 minutes after that day ends) is given back whole, fee and all, as if
   * it had not happened; a trade cancelled before answers as it was. A paid trade refunded in
   * part, finished, or of an earlier day is refused; so is one closed after refunds in full.
   */
  cancel(trade: TradeRecord, now: number): CancelAction {
    if (trade.cancelled) return trade.cancelled.action;
    let action: CancelAction;
    if (
      trade.status === 'WAIT_BUYER_PAY' ||
      (trade.status === 'TRADE_CLOSED' && trade.paidAt === undefined)
    ) {
      action = 'close';
    } else if (trade.status === 'TRADE_FINISHED') {
      throw businessFailed('ACQ.TRADE_HAS_FINISHED', '交易已经完结');
    } else if (trade.refunds.length > 0 || trade.status === 'TRADE_CLOSED') {
      throw businessFailed(
        'ACQ.REASON_TRADE_REFUND_FEE_ERR',
        '退款金额无效: the trade has refunds; a refunded trade cannot be cancelled',
      );
    } else if (beijingTime(now - CANCEL_GRACE_MS).slice(0, 10) > beijingTime(trade.paidAt!).slice(0, 10)) {
      throw businessFailed(
        'ACQ.TRADE_CANCEL_TIME_OUT',
        "超过撤销时间范围: only the day's trades are cancelled; refund this one",
      );
    } else {
      action = 'refund';
    }
    trade.status = 'TRADE_CLOSED';
    trade.closedAt ??= now;
    trade.cancelled = { action, at: now };
    return action;
  }

  /**
   * A refund and whether this call took it. The same out_request_no is the same refund when its
   * amount agrees; a refund is taken only from a paid trade, and never beyond what remains.
   */
  refund(
    trade: TradeRecord,
    request: { outRequestNo: string; amountFen: number; reason?: string },
    now: number,
  ): { refund: RefundRecord; created: boolean } {
    const existing = trade.refunds.find((r) => r.outRequestNo === request.outRequestNo);
    if (existing) {
      if (existing.amountFen !== request.amountFen) {
        throw businessFailed(
          'ACQ.DISCORDANT_REPEAT_REQUEST',
          `请求信息不一致: out_request_no ${request.outRequestNo} was a refund of another amount`,
        );
      }
      return { refund: existing, created: false };
    }
    if (trade.status === 'TRADE_CLOSED') {
      throw businessFailed('ACQ.TRADE_HAS_CLOSE', '交易已经关闭: unpaid and closed, or refunded in full');
    }
    if (trade.status !== 'TRADE_SUCCESS') {
      throw businessFailed(
        'ACQ.TRADE_STATUS_ERROR',
        `交易状态不合法: a ${trade.status} trade cannot be refunded`,
      );
    }
    const refundable = trade.totalFen - refundedFen(trade, true);
    if (request.amountFen > refundable) {
      throw businessFailed(
        'ACQ.REFUND_AMT_NOT_EQUAL_TOTAL',
        `退款金额超限: ${request.amountFen} fen asked, ${refundable} fen refundable`,
      );
    }
    const refund: RefundRecord = {
      outRequestNo: request.outRequestNo,
      amountFen: request.amountFen,
      ...(request.reason === undefined ? {} : { reason: request.reason }),
      status: 'PROCESSING',
      requestedAt: now,
    };
    trade.refunds.push(refund);
    return { refund, created: true };
  }

  /** PROCESSING → REFUND_SUCCESS; true when this call did it. A trade refunded in full closes. */
  completeRefund(trade: TradeRecord, refund: RefundRecord, now: number): boolean {
    if (refund.status !== 'PROCESSING') return false;
    refund.status = 'REFUND_SUCCESS';
    refund.doneAt = now;
    if (refundedFen(trade) === trade.totalFen) {
      trade.status = 'TRADE_CLOSED';
      trade.closedAt = now;
    }
    return true;
  }
}
