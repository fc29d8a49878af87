// Longer than 300 lines: both transfer methods, their book and the faults a remark steers, together.
/**
 * Transfers to Alipay accounts (单笔无密转账): alipay.fund.trans.uni.transfer (product
 * TRANS_ACCOUNT_NO_PWD, scene DIRECT_TRANSFER), idempotent on out_biz_no per merchant (the app's
 * own, or the merchant whose app_auth_token the call carries), and alipay.fund.trans.common.query
 * by out_biz_no (with product_code and biz_scene, as Alipay requires them then) or order_id. In
 * memory, like the trades.
 *
 * A transfer succeeds at once unless its remark steers it:
 * - `[transfer:fail]`: answered DEALING, then FAIL (with error_code and fail_reason) once
 *   `failDelayMs` has passed;
 * - `[transfer:refuse]`: refused at once with PAYEE_NOT_EXIST, nothing made;
 * - `[transfer:lost]`: made (SUCCESS) by the first request, but the connection of every
 *   uni.transfer naming it is dropped instead of the answer (alipay-sdk's HTTP client sends a
 *   request again once when its socket fails, so losing only the first answer would lose none);
 *   a query finds it;
 * - `[transfer:slow]`: answered DEALING, then SUCCESS once `slowDelayMs` has passed.
 * A transfer moves on when it is next read (a query, a repeat, a test's look), never by a timer.
 */
import Joi from 'joi';
import { DroppedAnswer, type AlipayGateway, type Call, type Handler } from './gateway';
import { parseBizContent, validateBiz } from './http';
import { yuan } from './views';
import {
  MAX_AMOUNT_FEN,
  PRICE,
  beijingTime,
  businessFailed,
  fenOfPrice,
  invalidArgument,
  randomDigits,
} from './wire';

export const TRANSFER_METHOD = 'alipay.fund.trans.uni.transfer';
export const TRANSFER_QUERY_METHOD = 'alipay.fund.trans.common.query';

export const TRANSFER_FAIL = '[transfer:fail]';
export const TRANSFER_REFUSE = '[transfer:refuse]';
export const TRANSFER_LOST = '[transfer:lost]';
export const TRANSFER_SLOW = '[transfer:slow]';

/** TRANS_ACCOUNT_NO_PWD: trans_amount in [0.1, 100000000]. */
const MIN_TRANSFER_FEN = 10;

export type TransferStatus = 'SUCCESS' | 'DEALING' | 'FAIL';
export type IdentityType = 'ALIPAY_USER_ID' | 'ALIPAY_LOGON_ID';

interface TransferRequest {
  out_biz_no: string;
  trans_amount: string;
  product_code: string;
  biz_scene: string;
  order_title: string;
  payee_info: { identity: string; identity_type: IdentityType; name?: string };
  remark?: string;
}

/** A transfer as tests read it. */
export interface AlipaySandboxTransfer {
  outBizNo: string;
  orderId: string;
  /** As a query would answer now. */
  status: TransferStatus;
  amountFen: number;
  payee: { identity: string; identityType: IdentityType; name?: string };
  orderTitle: string;
  remark?: string;
  /** The app_auth_token it was made with, if any. */
  appAuthToken?: string;
  createdAt: Date;
  payDate?: Date;
  errorCode?: string;
  failReason?: string;
}

interface TransferRecord {
  merchant: string;
  request: TransferRequest;
  appAuthToken?: string;
  orderId: string;
  payFundOrderId: string;
  amountFen: number;
  status: TransferStatus;
  /** What it becomes, and when, while it is DEALING. */
  settles?: { at: number; to: 'SUCCESS' | 'FAIL' };
  createdAt: number;
  payDate?: number;
  errorCode?: string;
  failReason?: string;
}

export interface TransferDelays {
  /** How long a `[transfer:fail]` transfer is DEALING before it is FAIL; 1000 ms by default. */
  failMs: number;
  /** How long a `[transfer:slow]` transfer is DEALING before it is SUCCESS; 3000 ms by default. */
  slowMs: number;
}

const transferSchema = Joi.object<TransferRequest>({
  // 只支持半角英文、数字，及“-”、“_”.
  out_biz_no: Joi.string()
    .pattern(/^[A-Za-z0-9_-]{1,64}$/)
    .required(),
  trans_amount: Joi.string().pattern(PRICE).required(),
  product_code: Joi.string().valid('TRANS_ACCOUNT_NO_PWD').required(),
  biz_scene: Joi.string().valid('DIRECT_TRANSFER').required(),
  order_title: Joi.string().min(1).max(128).required(),
  payee_info: Joi.object({
    identity: Joi.string().min(1).max(100).required(),
    identity_type: Joi.string().valid('ALIPAY_USER_ID', 'ALIPAY_LOGON_ID').required(),
    name: Joi.string().min(1).max(100),
  })
    .unknown(true)
    .required(),
  remark: Joi.string().max(200),
}).required();

const querySchema = Joi.object<{
  out_biz_no?: string;
  order_id?: string;
  product_code?: string;
  biz_scene?: string;
}>({
  out_biz_no: Joi.string().min(1).max(64),
  order_id: Joi.string().min(1).max(64),
  product_code: Joi.string().valid('TRANS_ACCOUNT_NO_PWD'),
  biz_scene: Joi.string().valid('DIRECT_TRANSFER'),
})
  .or('out_biz_no', 'order_id')
  .required();

/** An order number in Alipay's shape: the Beijing date, then 24 digits. */
function orderNo(now: number, kind: '0000' | '0015'): string {
  return `${beijingTime(now).slice(0, 10).replaceAll('-', '')}1100700${kind}${randomDigits(13)}`;
}

/** The fields whose change makes a repeat with the same out_biz_no another transfer. */
function identity(request: TransferRequest): string {
  const p = request.payee_info;
  return JSON.stringify([request.trans_amount, p.identity, p.identity_type, p.name ?? null]);
}

const key = (merchant: string, outBizNo: string) => `${merchant}\n${outBizNo}`;

export class TransferBook {
  private readonly byKey = new Map<string, TransferRecord>();
  private readonly requestCounts = new Map<string, number>();

  constructor(private readonly delays: TransferDelays) {}

  /** A uni.transfer request arrived naming `outBizNo` (valid or not). */
  counted(outBizNo: string): void {
    this.requestCounts.set(outBizNo, (this.requestCounts.get(outBizNo) ?? 0) + 1);
  }

  requests(outBizNo: string): number {
    return this.requestCounts.get(outBizNo) ?? 0;
  }

  /**
   * The transfer a request asks for and whether this request made it: the same out_biz_no of the
   * same merchant is the same transfer, another amount or payee under it is refused.
   */
  transfer(
    request: TransferRequest,
    merchant: string,
    appAuthToken: string | undefined,
    now: number,
  ): { record: TransferRecord; created: boolean } {
    const existing = this.byKey.get(key(merchant, request.out_biz_no));
    if (existing) {
      if (identity(existing.request) !== identity(request)) {
        throw businessFailed(
          'PAYMENT_INFO_INCONSISTENCY',
          `两次请求商户单号一样，但是参数不一致: out_biz_no ${request.out_biz_no} was a transfer of other parameters`,
        );
      }
      return { record: this.touch(existing, now), created: false };
    }
    const remark = request.remark ?? '';
    if (remark.includes(TRANSFER_REFUSE)) {
      throw businessFailed('PAYEE_NOT_EXIST', `收款账号不存在 (fault injection: ${TRANSFER_REFUSE})`);
    }
    const amountFen = fenOfPrice(request.trans_amount)!;
    const settles = remark.includes(TRANSFER_FAIL)
      ? { at: now + this.delays.failMs, to: 'FAIL' as const }
      : remark.includes(TRANSFER_SLOW)
        ? { at: now + this.delays.slowMs, to: 'SUCCESS' as const }
        : undefined;
    const record: TransferRecord = {
      merchant,
      request,
      ...(appAuthToken === undefined ? {} : { appAuthToken }),
      orderId: orderNo(now, '0000'),
      payFundOrderId: orderNo(now, '0015'),
      amountFen,
      status: settles ? 'DEALING' : 'SUCCESS',
      ...(settles ? { settles } : { payDate: now }),
      createdAt: now,
    };
    this.byKey.set(key(merchant, request.out_biz_no), record);
    return { record, created: true };
  }

  /** A merchant's transfer by out_biz_no or order_id, up to date; undefined when it has none. */
  find(merchant: string, ref: { out_biz_no?: string; order_id?: string }, now: number) {
    let record: TransferRecord | undefined;
    if (ref.order_id !== undefined) {
      record = [...this.byKey.values()].find((r) => r.merchant === merchant && r.orderId === ref.order_id);
    } else {
      record = this.byKey.get(key(merchant, ref.out_biz_no!));
    }
    return record && this.touch(record, now);
  }

  /** Every merchant's transfer under `outBizNo`, up to date. */
  all(outBizNo: string, now: number): TransferRecord[] {
    return [...this.byKey.values()]
      .filter((r) => r.request.out_biz_no === outBizNo)
      .map((r) => this.touch(r, now));
  }

  /** A DEALING transfer whose time has come becomes what it was steered to. */
  private touch(record: TransferRecord, now: number): TransferRecord {
    const settles = record.settles;
    if (record.status !== 'DEALING' || !settles || now < settles.at) return record;
    record.status = settles.to;
    delete record.settles;
    if (settles.to === 'SUCCESS') {
      record.payDate = settles.at;
    } else {
      record.errorCode = 'PAYEE_USER_INFO_ERROR';
      record.failReason = `支付宝账号和姓名不匹配，请确认姓名是否正确 (fault injection: ${TRANSFER_FAIL})`;
    }
    return record;
  }
}

/** uni.transfer's answer: the order, and its payment while it is paid. */
function transferView(record: TransferRecord): Record<string, string> {
  return {
    out_biz_no: record.request.out_biz_no,
    order_id: record.orderId,
    status: record.status,
    ...(record.status === 'SUCCESS'
      ? { pay_fund_order_id: record.payFundOrderId, trans_date: beijingTime(record.payDate!) }
      : {}),
  };
}

/** common.query's answer: pay_date once paid, error_code and fail_reason once failed. */
function queryView(record: TransferRecord): Record<string, string> {
  return {
    order_id: record.orderId,
    out_biz_no: record.request.out_biz_no,
    status: record.status,
    ...(record.status === 'SUCCESS'
      ? {
          pay_fund_order_id: record.payFundOrderId,
          pay_date: beijingTime(record.payDate!),
          trans_amount: yuan(record.amountFen),
        }
      : {}),
    ...(record.status === 'FAIL' ? { error_code: record.errorCode!, fail_reason: record.failReason! } : {}),
  };
}

export function transferSnapshot(record: TransferRecord): AlipaySandboxTransfer {
  const p = record.request.payee_info;
  return {
    outBizNo: record.request.out_biz_no,
    orderId: record.orderId,
    status: record.status,
    amountFen: record.amountFen,
    payee: { identity: p.identity, identityType: p.identity_type, ...(p.name ? { name: p.name } : {}) },
    orderTitle: record.request.order_title,
    ...(record.request.remark === undefined ? {} : { remark: record.request.remark }),
    ...(record.appAuthToken === undefined ? {} : { appAuthToken: record.appAuthToken }),
    createdAt: new Date(record.createdAt),
    ...(record.payDate === undefined ? {} : { payDate: new Date(record.payDate) }),
    ...(record.errorCode === undefined ? {} : { errorCode: record.errorCode }),
    ...(record.failReason === undefined ? {} : { failReason: record.failReason }),
  };
}

/** Whose transfers a call reaches: the merchant of its app_auth_token, or the app's own (''). */
const merchantOf = (gateway: AlipayGateway, call: Call) => gateway.merchantOf(call) ?? '';

export function transferHandlers(gateway: AlipayGateway, book: TransferBook): Record<string, Handler> {
  return {
    [TRANSFER_METHOD]: (call) => {
      const biz = parseBizContent(call.params);
      if (typeof biz.out_biz_no === 'string') book.counted(biz.out_biz_no);
      const request = validateBiz(transferSchema, biz);
      const amountFen = fenOfPrice(request.trans_amount)!;
      if (amountFen < MIN_TRANSFER_FEN) {
        throw businessFailed('EXCEED_LIMIT_SM_MIN_AMOUNT', '单笔最低转账金额0.1元');
      }
      if (amountFen > MAX_AMOUNT_FEN) {
        throw invalidArgument('isv.invalid-parameter', '参数无效 trans_amount: at most 100000000.00');
      }
      const payee = request.payee_info;
      if (payee.identity_type === 'ALIPAY_LOGON_ID' && payee.name === undefined) {
        throw businessFailed(
          'INVALID_PARAMETER',
          '参数有误。payee_info.name is required with ALIPAY_LOGON_ID',
        );
      }
      if (payee.identity_type === 'ALIPAY_USER_ID' && !/^2088\d{12}$/.test(payee.identity)) {
        throw businessFailed('PAYEE_NOT_EXIST', '收款账号不存在');
      }
      const token = call.params.app_auth_token;
      const { record } = book.transfer(request, merchantOf(gateway, call), token, call.now);
      if ((record.request.remark ?? '').includes(TRANSFER_LOST)) {
        throw new DroppedAnswer(`transfer ${request.out_biz_no} made, its answer lost (${TRANSFER_LOST})`);
      }
      return transferView(record);
    },

    [TRANSFER_QUERY_METHOD]: (call) => {
      const biz = parseBizContent(call.params);
      if (biz.out_biz_no === undefined && biz.order_id === undefined) {
        throw invalidArgument('isv.missing-parameter', '缺少必选参数 out_biz_no (or order_id)');
      }
      // 如果传递了out_biz_no则该字段为必传: a merchant's number names a transfer within its product.
      for (const field of ['product_code', 'biz_scene']) {
        if (biz.out_biz_no !== undefined && biz[field] === undefined) {
          throw invalidArgument('isv.missing-parameter', `缺少必选参数 ${field} (required with out_biz_no)`);
        }
      }
      const ref = validateBiz(querySchema, biz);
      const record = book.find(merchantOf(gateway, call), ref, call.now);
      if (!record) throw businessFailed('ORDER_NOT_EXIST', '转账订单不存在');
      return queryView(record);
    },
  };
}
