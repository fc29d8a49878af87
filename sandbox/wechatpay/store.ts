// Longer than 400 lines on purpose: one state machine of orders and refunds, read top to bottom.
/**
 * The WeChat Pay sandbox's state: orders by sp_mchid + out_trade_no, refunds by sub_mchid +
 * out_refund_no, and the transitions WeChat allows between their states. It lives in memory, on
 * purpose for this first version: a restart forgets every order and refund (the keys persist,
 * see keys.ts), which a development stack can live with, and a test gets a clean sandbox each time.
 * The views at the end are the JSON the query endpoints and the callbacks carry.
 *
 * Longer than 300 lines: the records, the only transitions between their states, and the JSON
 * views of them are one model; split, each part would have to export its internals to the others.
 */
import { randomBytes } from 'node:crypto';
import type { SandboxBuyer } from '../../src/channels/sandbox/barcode';
import { WechatpayError, randomAlphanumeric, randomDigits, rfc3339Cst } from './wire';

/**
 * How the order was made: a prepayment the buyer pays (jsapi … native), a code payment
 * (codepay.ts), or a deduction under a 委托代扣 contract (papay.ts).
 */
export type TradeKind = 'jsapi' | 'app' | 'h5' | 'native' | 'micropay' | 'pap';
export type TradeState = 'SUCCESS' | 'REFUND' | 'NOTPAY' | 'CLOSED' | 'REVOKED' | 'USERPAYING' | 'PAYERROR';
export type RefundStatus = 'PROCESSING' | 'SUCCESS' | 'ABNORMAL' | 'CLOSED';
export type BuyerResult = 'pay' | 'userpaying' | 'payerror';

export interface Payer {
  sp_openid?: string;
  sub_openid?: string;
}

/** The create body, as validated by the router. */
export interface CreateOrderRequest {
  sp_appid: string;
  sp_mchid: string;
  sub_appid?: string;
  sub_mchid: string;
  description: string;
  out_trade_no: string;
  time_expire?: string;
  attach?: string;
  /** Every prepayment has one; a code payment (codepay) takes none. */
  notify_url?: string;
  goods_tag?: string;
  support_fapiao?: boolean;
  settle_info?: { profit_sharing: boolean };
  amount: { total: number; currency?: 'CNY' };
  payer?: Payer;
  detail?: Record<string, unknown>;
  scene_info?: Record<string, unknown>;
}

/** The codepay body, as validated by the router: the buyer's code, never kept as it is. */
export interface CodepayRequest extends Omit<CreateOrderRequest, 'notify_url' | 'time_expire' | 'payer'> {
  payer: { auth_code: string };
}

export interface CreateRefundRequest {
  sub_mchid: string;
  transaction_id?: string;
  out_trade_no?: string;
  out_refund_no: string;
  reason?: string;
  notify_url?: string;
  funds_account?: string;
  amount: { refund: number; total: number; currency: 'CNY' };
  goods_detail?: unknown[];
}

export interface OrderRecord {
  kind: TradeKind;
  request: CreateOrderRequest;
  /** Every order has one, even native and h5, so /checkout/prepay/<id> can pay any order. */
  prepayId: string;
  /** The unguessable part of its checkout URL. */
  token: string;
  expiresAt?: number;
  state: TradeState;
  transactionId?: string;
  successAt?: number;
  payerTotal?: number;
  payer?: Payer;
  refundKeys: string[];
  /** A code payment's own state (codepay.ts). */
  codepay?: CodepayRecord;
}

/** What the offline WeChat Pay keeps of a code payment besides its order. */
export interface CodepayRecord {
  /** What its buyer does (../wallet-buyers.ts). */
  buyer: SandboxBuyer;
  /** The sha-256 of the buyer's code: the code itself is a credential and is not kept. */
  authCodeSha256: string;
  /** codepay requests for its out_trade_no, repeats and refused ones included. */
  requests: number;
  /** Reverse requests for it, refused ones included. */
  reverses: number;
  /** Whether a reverse gave the buyer's money back (the payment had been taken). */
  givenBack: boolean;
}

export interface RefundRecord {
  refundId: string;
  request: CreateRefundRequest;
  spMchid: string;
  order: OrderRecord;
  status: RefundStatus;
  /** What PROCESSING turns into: SUCCESS unless the reason injects a fault. */
  outcome: Exclude<RefundStatus, 'PROCESSING'>;
  createdAt: number;
  /** When its present PROCESSING began: its creation, or the abnormal refund's application. */
  processingSince: number;
  successAt?: number;
  /** How an ABNORMAL refund was asked to be paid instead (发起异常退款), its sealed fields opened. */
  abnormalApplication?: AbnormalRefundApplication;
}

export type AbnormalRefundType = 'USER_BANK_CARD' | 'MERCHANT_BANK_CARD';

/** The apply-abnormal-refund body, as validated by the router; bank_account and real_name sealed. */
export interface AbnormalRefundRequest {
  sub_mchid: string;
  out_refund_no: string;
  type: AbnormalRefundType;
  bank_type?: string;
  bank_account?: string;
  real_name?: string;
}

/** An abnormal refund's application as WeChat Pay keeps it: what a test checks the client sealed. */
export interface AbnormalRefundApplication {
  type: AbnormalRefundType;
  bank_type?: string;
  bank_account?: string;
  real_name?: string;
  appliedAt: number;
}

/** The trade_type WeChat Pay names each kind by, in queries and on the statement. */
export const TRADE_TYPES: Record<TradeKind, string> = {
  jsapi: 'JSAPI',
  app: 'APP',
  h5: 'MWEB',
  native: 'NATIVE',
  micropay: 'MICROPAY',
  pap: 'PAP',
};

const STATE_DESCRIPTIONS: Record<TradeState, string> = {
  SUCCESS: '支付成功',
  REFUND: '转入退款',
  NOTPAY: '未支付',
  CLOSED: '已关闭',
  REVOKED: '已撤销（付款码支付）',
  USERPAYING: '用户支付中（付款码支付）',
  PAYERROR: '支付失败(其他原因，如银行返回失败)',
};

const PAYABLE: readonly TradeState[] = ['NOTPAY', 'USERPAYING', 'PAYERROR'];
const PAID: readonly TradeState[] = ['SUCCESS', 'REFUND'];

function orderKey(spMchid: string, outTradeNo: string): string {
  return `${spMchid}\u0000${outTradeNo}`;
}

function refundKey(subMchid: string, outRefundNo: string): string {
  return `${subMchid}\u0000${outRefundNo}`;
}

/** The fields whose change makes a repeated create a different order ("201 商户订单号重复"). */
function identity(kind: TradeKind, r: CreateOrderRequest): string {
  return JSON.stringify([
    kind,
    r.sub_mchid,
    r.sub_appid ?? null,
    r.description,
    r.amount.total,
    r.payer ?? null,
  ]);
}

/** 400 INVALID_REQUEST: well-formed, but not allowed in the state things are in. */
class InvalidRequest extends WechatpayError {
  constructor(message: string) {
    super(400, 'INVALID_REQUEST', message);
  }
}

export class WechatpaySandboxStore {
  private readonly orders = new Map<string, OrderRecord>();
  private readonly byToken = new Map<string, OrderRecord>();
  private readonly byPrepayId = new Map<string, OrderRecord>();
  private readonly byTransactionId = new Map<string, OrderRecord>();
  private readonly refunds = new Map<string, RefundRecord>();

  /** An unpaid order past its time_expire reads CLOSED from then on, as WeChat's does. */
  private refresh(order: OrderRecord, now: number): OrderRecord {
    if (PAYABLE.includes(order.state) && order.expiresAt !== undefined && order.expiresAt <= now) {
      order.state = 'CLOSED';
    }
    return order;
  }

  /** The order and whether this call created it; a repeat with other parameters is refused. */
  createOrder(kind: TradeKind, request: CreateOrderRequest, expiresAt: number | undefined, now: number) {
    const key = orderKey(request.sp_mchid, request.out_trade_no);
    const existing = this.orders.get(key);
    if (existing) {
      this.refresh(existing, now);
      if (identity(existing.kind, existing.request) !== identity(kind, request)) {
        throw new InvalidRequest(
          `201 商户订单号重复: out_trade_no ${request.out_trade_no} was used with different parameters`,
        );
      }
      if (PAID.includes(existing.state)) throw new WechatpayError(400, 'ORDERPAID', '该订单已支付');
      if (existing.state === 'CLOSED') throw new WechatpayError(400, 'ORDER_CLOSED', '该订单已关闭');
      return { order: existing, created: false };
    }
    return { order: this.insert(kind, request, expiresAt), created: true };
  }

  /**
   * A code payment's order: the one of its out_trade_no when there is one (codepay.ts decides
   * what a repeat means), else a new NOTPAY one.
   */
  codepayOrder(request: CreateOrderRequest, codepay: CodepayRecord, now: number) {
    const existing = this.orders.get(orderKey(request.sp_mchid, request.out_trade_no));
    if (existing) return { order: this.refresh(existing, now), created: false };
    const order = this.insert('micropay', request, undefined);
    order.codepay = codepay;
    return { order, created: true };
  }

  private insert(kind: TradeKind, request: CreateOrderRequest, expiresAt: number | undefined): OrderRecord {
    const order: OrderRecord = {
      kind,
      request,
      prepayId: `wx${randomAlphanumeric(26).toLowerCase()}`,
      token: randomBytes(18).toString('base64url'),
      expiresAt,
      state: 'NOTPAY',
      payer: request.payer,
      refundKeys: [],
    };
    this.orders.set(orderKey(request.sp_mchid, request.out_trade_no), order);
    this.byToken.set(order.token, order);
    this.byPrepayId.set(order.prepayId, order);
    return order;
  }

  /** Any order of this out_trade_no, whoever it belongs to (what a test reads). */
  peekOrder(spMchid: string, outTradeNo: string): OrderRecord | undefined {
    return this.orders.get(orderKey(spMchid, outTradeNo));
  }

  /** The order, if it exists and belongs to that sub-merchant. */
  findOrder(spMchid: string, outTradeNo: string, subMchid: string, now: number): OrderRecord | undefined {
    const order = this.orders.get(orderKey(spMchid, outTradeNo));
    return order && order.request.sub_mchid === subMchid ? this.refresh(order, now) : undefined;
  }

  findOrderByTransactionId(spMchid: string, transactionId: string, subMchid: string, now: number) {
    const order = this.byTransactionId.get(transactionId);
    return order && order.request.sp_mchid === spMchid && order.request.sub_mchid === subMchid
      ? this.refresh(order, now)
      : undefined;
  }

  /** Every payment order (a test's view of the ledger), each brought up to date. */
  allOrders(now: number): OrderRecord[] {
    return [...this.orders.values()].map((o) => this.refresh(o, now));
  }

  findOrderByToken(token: string, now: number): OrderRecord | undefined {
    const order = this.byToken.get(token);
    return order && this.refresh(order, now);
  }

  findOrderByPrepayId(prepayId: string, now: number): OrderRecord | undefined {
    const order = this.byPrepayId.get(prepayId);
    return order && this.refresh(order, now);
  }

  /** Closes an unpaid order; closing a closed one again is fine, a paid one is ORDERPAID. */
  closeOrder(order: OrderRecord, now: number): void {
    this.refresh(order, now);
    if (PAID.includes(order.state)) throw new WechatpayError(400, 'ORDERPAID', '订单已支付');
    order.state = 'CLOSED';
  }

  /** What the buyer did at the checkout; `paid` is true only for the transition to SUCCESS. */
  buyerActs(order: OrderRecord, result: BuyerResult, now: number): { paid: boolean } {
    this.refresh(order, now);
    if (order.state === 'CLOSED') throw new WechatpayError(400, 'ORDER_CLOSED', '订单已关闭');
    if (PAID.includes(order.state)) {
      // A second "pay" (a double click) changes nothing; anything else contradicts the payment.
      if (result === 'pay') return { paid: false };
      throw new WechatpayError(400, 'ORDERPAID', '订单已支付');
    }
    if (result === 'userpaying') order.state = 'USERPAYING';
    else if (result === 'payerror') order.state = 'PAYERROR';
    else {
      order.state = 'SUCCESS';
      order.successAt = now;
      order.payerTotal = order.request.amount.total;
      order.transactionId = `4200${rfc3339Cst(now).slice(0, 10).replaceAll('-', '')}${randomDigits(16)}`;
      order.payer ??= { sp_openid: `o${randomAlphanumeric(27)}` };
      this.byTransactionId.set(order.transactionId, order);
      return { paid: true };
    }
    return { paid: false };
  }

  /** The refund and whether this call created it. */
  createRefund(spMchid: string, request: CreateRefundRequest, now: number) {
    const key = refundKey(request.sub_mchid, request.out_refund_no);
    const order = this.refundedOrder(spMchid, request, now);
    const existing = this.refunds.get(key);
    if (existing) {
      if (existing.order !== order || existing.request.amount.refund !== request.amount.refund) {
        throw new InvalidRequest(`out_refund_no ${request.out_refund_no} was used with different parameters`);
      }
      return { refund: existing, created: false };
    }
    if (order.state === 'CLOSED') throw new WechatpayError(400, 'ORDER_CLOSED', '订单已关闭');
    if (!PAID.includes(order.state)) throw new InvalidRequest('订单未支付: the order has not been paid');
    if (request.amount.total !== order.request.amount.total) {
      throw new InvalidRequest(
        `amount.total ${request.amount.total} is not the order's total ${order.request.amount.total}`,
      );
    }
    const refunded = order.refundKeys
      .map((k) => this.refunds.get(k)!)
      .filter((r) => r.status !== 'CLOSED')
      .reduce((sum, r) => sum + r.request.amount.refund, 0);
    if (refunded + request.amount.refund > order.request.amount.total) {
      throw new InvalidRequest(
        `申请退款金额超过订单可退金额: ${request.amount.refund} asked, ${order.request.amount.total - refunded} refundable`,
      );
    }
    const reason = request.reason ?? '';
    const refund: RefundRecord = {
      refundId: `50${randomDigits(27)}`,
      request,
      spMchid,
      order,
      status: 'PROCESSING',
      outcome: reason.includes('[sandbox:abnormal]')
        ? 'ABNORMAL'
        : reason.includes('[sandbox:closed]')
          ? 'CLOSED'
          : 'SUCCESS',
      createdAt: now,
      processingSince: now,
    };
    this.refunds.set(key, refund);
    order.refundKeys.push(key);
    return { refund, created: true };
  }

  private refundedOrder(spMchid: string, request: CreateRefundRequest, now: number): OrderRecord {
    const { transaction_id: transactionId, out_trade_no: outTradeNo, sub_mchid: subMchid } = request;
    const order =
      transactionId !== undefined
        ? this.findOrderByTransactionId(spMchid, transactionId, subMchid, now)
        : this.findOrder(spMchid, outTradeNo!, subMchid, now);
    if (!order || (outTradeNo !== undefined && order.request.out_trade_no !== outTradeNo)) {
      throw new WechatpayError(404, 'RESOURCE_NOT_EXISTS', '订单不存在: no paid order matches this refund');
    }
    return order;
  }

  /** A refund by the key an order's refundKeys name it by. */
  findRefundByKey(key: string): RefundRecord | undefined {
    return this.refunds.get(key);
  }

  findRefund(subMchid: string, outRefundNo: string): RefundRecord | undefined {
    return this.refunds.get(refundKey(subMchid, outRefundNo));
  }

  /** A sub-merchant's orders of this service provider, for its statement. */
  ordersOf(spMchid: string, subMchid: string): OrderRecord[] {
    return [...this.orders.values()].filter(
      (o) => o.request.sp_mchid === spMchid && o.request.sub_mchid === subMchid,
    );
  }

  /** A sub-merchant's refunds of this service provider, for its statement. */
  refundsOf(spMchid: string, subMchid: string): RefundRecord[] {
    return [...this.refunds.values()].filter(
      (r) => r.spMchid === spMchid && r.request.sub_mchid === subMchid,
    );
  }

  /**
   * 发起异常退款: an ABNORMAL refund is PROCESSING again, to be paid where the application says and
   * end SUCCESS. Applying again with the same choice answers the refund as it stands; a refund that
   * was never ABNORMAL, or another choice for one already applied for, is refused.
   */
  applyAbnormal(refund: RefundRecord, application: AbnormalRefundApplication, now: number): boolean {
    const earlier = refund.abnormalApplication;
    if (earlier) {
      if (earlier.type !== application.type || earlier.bank_account !== application.bank_account) {
        throw new InvalidRequest('异常退款已受理: this refund was already applied for with another account');
      }
      return false;
    }
    if (refund.status !== 'ABNORMAL') {
      throw new InvalidRequest(`退款单状态不是退款异常: the refund is ${refund.status}, not ABNORMAL`);
    }
    refund.abnormalApplication = application;
    refund.status = 'PROCESSING';
    refund.outcome = 'SUCCESS';
    refund.processingSince = now;
    return true;
  }

  /** PROCESSING → its outcome; true when this call changed it. A success turns the order REFUND. */
  settleRefund(refund: RefundRecord, now: number): boolean {
    if (refund.status !== 'PROCESSING') return false;
    refund.status = refund.outcome;
    if (refund.status === 'SUCCESS') {
      refund.successAt = now;
      refund.order.state = 'REFUND';
    }
    return true;
  }
}

// ---- views: the JSON of queries and callbacks ----

export function transactionView(order: OrderRecord): Record<string, unknown> {
  const r = order.request;
  const paid = order.successAt !== undefined;
  return {
    sp_appid: r.sp_appid,
    sp_mchid: r.sp_mchid,
    ...(r.sub_appid === undefined ? {} : { sub_appid: r.sub_appid }),
    sub_mchid: r.sub_mchid,
    out_trade_no: r.out_trade_no,
    ...(order.transactionId === undefined ? {} : { transaction_id: order.transactionId }),
    trade_type: TRADE_TYPES[order.kind],
    trade_state: order.state,
    trade_state_desc: STATE_DESCRIPTIONS[order.state],
    ...(paid ? { bank_type: 'OTHERS' } : {}),
    ...(r.attach === undefined ? {} : { attach: r.attach }),
    ...(paid ? { success_time: rfc3339Cst(order.successAt!) } : {}),
    ...(order.payer === undefined ? {} : { payer: order.payer }),
    amount: {
      total: r.amount.total,
      ...(order.payerTotal === undefined ? {} : { payer_total: order.payerTotal }),
      currency: 'CNY',
      payer_currency: 'CNY',
    },
  };
}

const USER_RECEIVED_ACCOUNT = '支付用户零钱';

export function refundView(refund: RefundRecord): Record<string, unknown> {
  const { request: r, order } = refund;
  const payerTotal = order.payerTotal ?? order.request.amount.total;
  return {
    refund_id: refund.refundId,
    out_refund_no: r.out_refund_no,
    transaction_id: order.transactionId,
    out_trade_no: order.request.out_trade_no,
    channel: 'ORIGINAL',
    user_received_account: USER_RECEIVED_ACCOUNT,
    ...(refund.successAt === undefined ? {} : { success_time: rfc3339Cst(refund.successAt) }),
    create_time: rfc3339Cst(refund.createdAt),
    status: refund.status,
    funds_account: r.funds_account ?? 'AVAILABLE',
    amount: {
      total: order.request.amount.total,
      refund: r.amount.refund,
      payer_total: payerTotal,
      payer_refund: r.amount.refund,
      settlement_refund: r.amount.refund,
      settlement_total: order.request.amount.total,
      discount_refund: 0,
      currency: 'CNY',
    },
  };
}

/** The plaintext of a REFUND.* callback's resource. */
export function refundNoticeView(refund: RefundRecord): Record<string, unknown> {
  const { request: r, order } = refund;
  return {
    sp_mchid: refund.spMchid,
    sub_mchid: r.sub_mchid,
    transaction_id: order.transactionId,
    out_trade_no: order.request.out_trade_no,
    refund_id: refund.refundId,
    out_refund_no: r.out_refund_no,
    refund_status: refund.status,
    ...(refund.successAt === undefined ? {} : { success_time: rfc3339Cst(refund.successAt) }),
    user_received_account: USER_RECEIVED_ACCOUNT,
    amount: {
      total: order.request.amount.total,
      refund: r.amount.refund,
      payer_total: order.payerTotal ?? order.request.amount.total,
      payer_refund: r.amount.refund,
    },
  };
}
