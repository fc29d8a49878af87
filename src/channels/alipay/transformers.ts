// Longer than 400 lines: every Alipay wire format and the one map of its states, in the one
// transformers.ts a channel has (as for WeChat Pay); the 直付通 onboarding body is in zft.ts.
/**
 * Alipay's wire, as the adapter reads and writes it: amounts in yuan strings, times in Beijing
 * time, the business content of each method, and the one map from Alipay's states to durapay's.
 * Nothing here talks to Alipay; index.ts does, through alipay-sdk.
 */
import { ChannelError } from '../errors';
import type {
  ApplicationState,
  AuthorizedToken,
  BarcodeAnswer,
  BarcodePaymentInput,
  ChannelEvent,
  CreatePaymentInput,
  PaymentState,
  ProfitShareState,
  RefundInput,
  RefundState,
  ReverseAnswer,
} from '../ports';
import type { PayMethod } from '../../modules/orders/rules';

export const ALIPAY_PAY_METHODS: readonly PayMethod[] = [
  'qr_code',
  'web',
  'h5',
  'app',
  'jsapi',
  'mini_program',
  // alipay.trade.pay with the buyer's code (./barcode.ts); never an order the buyer opens.
  'barcode',
];

/** Alipay's ceiling for one trade: 100 000 000.00 yuan. */
export const ALIPAY_MAX_AMOUNT_FEN = 10_000_000_000;

// ---- amounts ----

/** Fen as Alipay's yuan string with two decimals, in integer arithmetic (never through a float). */
export function yuanOf(fen: number): string {
  if (!Number.isSafeInteger(fen) || fen < 0) throw new RangeError(`not an amount in fen: ${fen}`);
  const whole = Math.floor(fen / 100);
  const cents = fen % 100;
  return `${whole}.${cents < 10 ? '0' : ''}${cents}`;
}

/** Alipay's yuan string ("12.3", "12.30", "12") as fen; undefined when it is not an amount. */
export function fenOf(yuan: unknown): number | undefined {
  if (typeof yuan !== 'string') return undefined;
  const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(yuan.trim());
  if (!m) return undefined;
  const fen = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(fen) ? fen : undefined;
}

// ---- times (Alipay speaks Beijing time, UTC+8 all year) ----

const BEIJING_OFFSET_MS = 8 * 3_600_000;

/** `yyyy-MM-dd HH:mm:ss` in Beijing time, as time_expire wants it. */
export function beijingTime(at: Date): string {
  const iso = new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** A `yyyy-MM-dd HH:mm:ss` Beijing time from Alipay; undefined when it is not one. */
export function parseBeijingTime(text: unknown): Date | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return undefined;
  const utc = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) - BEIJING_OFFSET_MS;
  return Number.isNaN(utc) ? undefined : new Date(utc);
}

// ---- answers ----

/** An answer's business fields, after the SDK checked its signature. */
export type Answer = Record<string, unknown> & { code?: unknown; sub_code?: unknown; sub_msg?: unknown };

function text(o: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = o?.[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function required(o: Answer, key: string, what: string): string {
  const v = text(o, key);
  if (v === undefined) throw new ChannelError('invalid_response', `Alipay ${what} answered without ${key}`);
  return v;
}

function amount(o: Record<string, unknown>, key: string, what: string): number {
  const fen = fenOf(o[key]);
  if (fen === undefined)
    throw new ChannelError('invalid_response', `Alipay ${what}: ${key} is not an amount`);
  return fen;
}

// ---- payments ----

/** Where each pay method starts at Alipay. */
export const CREATE_METHOD: Record<PayMethod, string | undefined> = {
  qr_code: 'alipay.trade.precreate',
  web: 'alipay.trade.page.pay',
  h5: 'alipay.trade.wap.pay',
  app: 'alipay.trade.app.pay',
  jsapi: 'alipay.trade.create',
  mini_program: 'alipay.trade.create',
  // A barcode payment is alipay.trade.pay (the barcode port), never an order the buyer opens.
  barcode: undefined,
};

const PRODUCT_CODE: Partial<Record<PayMethod, string>> = {
  web: 'FAST_INSTANT_TRADE_PAY',
  h5: 'QUICK_WAP_WAY',
  app: 'QUICK_MSECURITY_PAY',
  jsapi: 'JSAPI_PAY',
  mini_program: 'JSAPI_PAY',
};

function extraText(extra: Record<string, unknown> | undefined, key: string): string | undefined {
  return extra && Object.hasOwn(extra, key) ? text(extra, key) : undefined;
}

/** The biz_content of a create, for every pay method. */
export function toWireCreate(input: CreatePaymentInput, subMerchantNo: string | undefined) {
  const buyerId = extraText(input.extra, 'buyer_id');
  const buyerOpenId = extraText(input.extra, 'buyer_open_id');
  const isCreate = CREATE_METHOD[input.payMethod] === 'alipay.trade.create';
  if (isCreate && !buyerId && !buyerOpenId) {
    throw new ChannelError(
      'refused',
      `extra.buyer_id or extra.buyer_open_id is required for ${input.payMethod}`,
    );
  }
  const productCode = PRODUCT_CODE[input.payMethod];
  const quitUrl = extraText(input.extra, 'quit_url');
  return {
    out_trade_no: input.tradeNo,
    total_amount: yuanOf(input.amount),
    subject: input.subject,
    time_expire: beijingTime(input.expireAt),
    ...(productCode ? { product_code: productCode } : {}),
    ...(isCreate && buyerId ? { buyer_id: buyerId } : {}),
    ...(isCreate && !buyerId && buyerOpenId ? { buyer_open_id: buyerOpenId } : {}),
    ...(isCreate && extraText(input.extra, 'op_app_id')
      ? { op_app_id: extraText(input.extra, 'op_app_id') }
      : {}),
    ...(input.payMethod === 'h5' && quitUrl ? { quit_url: quitUrl } : {}),
    // A secondary merchant (直付通) is named on each trade it is paid to.
    ...(subMerchantNo ? { sub_merchant: { merchant_id: subMerchantNo } } : {}),
    // Funds wait for settle (profit sharing) instead of going to the merchant at once.
    ...(input.profitSharing ? { extend_params: { royalty_freeze: 'true' } } : {}),
  };
}

const TRADE_STATUSES = ['WAIT_BUYER_PAY', 'TRADE_SUCCESS', 'TRADE_FINISHED', 'TRADE_CLOSED'] as const;
export type TradeStatus = (typeof TRADE_STATUSES)[number];

function tradeStatus(o: Record<string, unknown>, what: string): TradeStatus {
  const status = o.trade_status;
  if (!TRADE_STATUSES.includes(status as TradeStatus)) {
    throw new ChannelError('invalid_response', `Alipay ${what}: unknown trade_status ${String(status)}`);
  }
  return status as TradeStatus;
}

/**
 * `alipay.trade.query` as durapay's payment state. TRADE_CLOSED is also a paid trade that was
 * refunded in full: a payment time says it was paid, and a paid order must never read as closed.
 */
export function paymentStateOf(answer: Answer): PaymentState {
  const status = tradeStatus(answer, 'trade query');
  const paidAt = parseBeijingTime(answer.send_pay_date);
  if (status === 'WAIT_BUYER_PAY') return { status: 'pending' };
  if (status === 'TRADE_CLOSED' && !paidAt) return { status: 'closed' };
  return {
    status: 'paid',
    channelTradeNo: required(answer, 'trade_no', 'trade query'),
    paidAt: paidAt ?? new Date(),
    amount: amount(answer, 'total_amount', 'trade query'),
  };
}

// ---- barcode payments (当面付 条码支付) ----

/**
 * The buyer codes (付款码) of Alipay's wallet, as alipay.trade.pay documents auth_code: 16 to 24
 * digits starting 25 to 30.
 */
export const ALIPAY_AUTH_CODE = /^(2[5-9]|30)\d{14,22}$/;

/**
 * The biz_content of `alipay.trade.pay` for a code the cashier scanned: the till and the shop as
 * Alipay's terminal_id and store_id, and the sub-merchant and profit sharing as a create names
 * them. The code travels here and nowhere else: it is a credential of one payment.
 */
export function toWireBarcodePay(input: BarcodePaymentInput, subMerchantNo: string | undefined) {
  return {
    out_trade_no: input.tradeNo,
    scene: 'bar_code',
    auth_code: input.authCode,
    product_code: 'FACE_TO_FACE_PAYMENT',
    subject: input.subject,
    total_amount: yuanOf(input.amount),
    ...(input.deviceId ? { terminal_id: input.deviceId } : {}),
    ...(input.storeId ? { store_id: input.storeId } : {}),
    ...(subMerchantNo ? { sub_merchant: { merchant_id: subMerchantNo } } : {}),
    ...(input.profitSharing ? { extend_params: { royalty_freeze: 'true' } } : {}),
  };
}

/** trade.pay's code for a payment the buyer is still confirming (WAIT_BUYER_PAY). */
export const PAYING_CODE = '10003';

/**
 * `alipay.trade.pay`'s answer: 10000 is the payment taken (the answer has no trade_status, the
 * code says it: trade_no, total_amount, gmt_payment); 10003 is the buyer confirming in the
 * wallet (entering a password), to be followed by query.
 */
export function barcodeAnswerOf(answer: Answer): BarcodeAnswer {
  if (String(answer.code) === PAYING_CODE) {
    return { status: 'paying', channelTradeNo: text(answer, 'trade_no') ?? null };
  }
  return {
    status: 'paid',
    channelTradeNo: required(answer, 'trade_no', 'barcode payment'),
    paidAt: parseBeijingTime(answer.gmt_payment) ?? new Date(),
    amount: amount(answer, 'total_amount', 'barcode payment'),
  };
}

/**
 * `alipay.trade.cancel`'s answer: retry_flag Y asks for the cancel again (the buyer's payment
 * is under way); N is the trade undone, its `action` saying how: `close` (not paid), `refund`
 * (paid, and the money went back to the buyer). Without an action Alipay had no such trade.
 */
export function reverseAnswerOf(answer: Answer, tradeNo: string): ReverseAnswer {
  const retry = answer.retry_flag;
  if (retry === 'Y') {
    return { status: 'retry', reason: `Alipay asks for the cancel of ${tradeNo} to be made again` };
  }
  if (retry !== 'N') {
    throw new ChannelError('invalid_response', `Alipay trade cancel: retry_flag ${String(retry)}`);
  }
  // No action: Alipay had no such trade, and closed nothing (a trade.pay on its way may yet arrive).
  if (answer.action === undefined || answer.action === '')
    return { status: 'reversed', refunded: false, unseen: true };
  return { status: 'reversed', refunded: answer.action === 'refund' };
}

/**
 * After a cancel Alipay refused, what its query of the trade says (undefined: no such trade): a
 * trade that holds the payment (paid, not refunded in full) stands, and the refusal is the
 * answer; one closed holds nothing, given back when it had been paid; one still waiting for its
 * buyer is not decided, and the cancel is to be asked again.
 */
export function reverseStateOf(answer: Answer | undefined, refusal: ChannelError): ReverseAnswer {
  if (answer === undefined) return { status: 'reversed', refunded: false, unseen: true };
  const status = tradeStatus(answer, 'trade query');
  if (status === 'TRADE_CLOSED') {
    return { status: 'reversed', refunded: parseBeijingTime(answer.send_pay_date) !== undefined };
  }
  if (status === 'WAIT_BUYER_PAY') return { status: 'retry', reason: refusal.message };
  throw refusal;
}

// ---- refunds ----

/**
 * The biz_content of `alipay.trade.refund`: the refund's own number makes a retry the same refund.
 * Shares taken back with it go as `refund_royalty_parameters` (退分账), one per receiver: the
 * receiver is the paying side (`trans_out`), and what it gives back goes to the seller, whose
 * refund to the buyer it funds. 直付通 requires them named so; without them Alipay refunds from
 * the seller alone.
 */
export function toWireRefund(input: RefundInput) {
  const returns = input.shareReturns ?? [];
  return {
    out_trade_no: input.tradeNo,
    out_request_no: input.refundNo,
    refund_amount: yuanOf(input.amount),
    ...(input.reason ? { refund_reason: input.reason.slice(0, 256) } : {}),
    ...(returns.length > 0
      ? {
          refund_royalty_parameters: returns.map((r) => ({
            royalty_type: 'transfer',
            trans_out_type: receiverType(r.type, r.account),
            trans_out: r.account,
            amount: yuanOf(r.amount),
            desc: `profit share returned for refund ${input.refundNo}`,
          })),
        }
      : {}),
  };
}

/**
 * `alipay.trade.fastpay.refund.query`: Alipay answers 10000 without the refund when it has none,
 * and names REFUND_SUCCESS once the money moved; a refund it has without that is still moving.
 * Alipay has no number of its own for a refund: the trade's number stands for it.
 */
export function refundQueryStateOf(answer: Answer): RefundState {
  if (text(answer, 'out_request_no') === undefined && text(answer, 'refund_amount') === undefined) {
    return { status: 'not_found' };
  }
  const channelRefundNo = text(answer, 'trade_no') ?? null;
  if (answer.refund_status === 'REFUND_SUCCESS') {
    return {
      status: 'success',
      channelRefundNo,
      refundedAt: parseBeijingTime(answer.gmt_refund_pay) ?? new Date(),
    };
  }
  return { status: 'processing', channelRefundNo };
}

/** `alipay.trade.refund`: fund_change Y is money moved now; N is a refund to follow by query. */
export function refundAnswerStateOf(answer: Answer): RefundState | undefined {
  const channelRefundNo = text(answer, 'trade_no') ?? null;
  if (answer.fund_change === 'Y') {
    return {
      status: 'success',
      channelRefundNo,
      refundedAt: parseBeijingTime(answer.gmt_refund_pay) ?? new Date(),
    };
  }
  return undefined;
}

// ---- notifications ----

/** A notification's form fields, decoded. */
export type NotifyParams = Record<string, string>;

/** An `application/x-www-form-urlencoded` notification's fields; the last of a repeated name wins. */
export function notifyParamsOf(rawBody: Buffer): NotifyParams {
  const params: NotifyParams = {};
  for (const [k, v] of new URLSearchParams(rawBody.toString('utf8'))) params[k] = v;
  return params;
}

/** What a verified trade_status_sync says: a payment or closure, or a refund to look up. */
export type NotifySays =
  | { kind: 'event'; event: ChannelEvent }
  | {
      kind: 'refund';
      eventId: string;
      tradeNo: string;
      refundNo: string;
      channelTradeNo: string | null;
      /** The trade's total refunded so far (refund_fee), not this refund's own amount. */
      totalRefunded: number;
    };

export function notifySays(p: NotifyParams): NotifySays {
  if (p.notify_type !== undefined && p.notify_type !== 'trade_status_sync') {
    throw new ChannelError(
      'invalid_response',
      `Alipay notification ${p.notify_type} is not one durapay takes`,
    );
  }
  const eventId = p.notify_id ?? '';
  const tradeNo = p.out_trade_no;
  if (!eventId || !tradeNo) {
    throw new ChannelError('invalid_response', 'Alipay notification without notify_id or out_trade_no');
  }
  const status = tradeStatus(p, 'notification');
  // A refund's notification carries its out_request_no as out_biz_no, and the trade's total refunded.
  if (p.out_biz_no && p.refund_fee !== undefined) {
    return {
      kind: 'refund',
      eventId,
      tradeNo,
      refundNo: p.out_biz_no,
      channelTradeNo: p.trade_no ?? null,
      totalRefunded: amount(p, 'refund_fee', 'notification'),
    };
  }
  const total = amount(p, 'total_amount', 'notification');
  if (status === 'WAIT_BUYER_PAY') {
    throw new ChannelError('invalid_response', 'Alipay notification WAIT_BUYER_PAY says nothing to act on');
  }
  const paidAt = parseBeijingTime(p.gmt_payment) ?? null;
  const paid = status !== 'TRADE_CLOSED' || paidAt !== null;
  return {
    kind: 'event',
    event: {
      kind: 'payment',
      eventId,
      tradeNo,
      status: paid ? 'paid' : 'closed',
      channelTradeNo: p.trade_no ?? null,
      amount: total,
      currency: 'CNY',
      paidAt: paid ? (paidAt ?? new Date()) : null,
    },
  };
}

/**
 * A refund notification's event as decoded, before it is confirmed: Alipay names the trade's
 * total refunded (refund_fee), so `amount` is that total until `refundEventOf` puts the refund's
 * own amount in its place, from a refund query made with the order's context.
 */
export function unconfirmedRefundEventOf(says: Extract<NotifySays, { kind: 'refund' }>): ChannelEvent {
  return {
    kind: 'refund',
    eventId: says.eventId,
    tradeNo: says.tradeNo,
    refundNo: says.refundNo,
    status: 'success',
    channelRefundNo: says.channelTradeNo,
    amount: says.totalRefunded,
    refundedAt: null,
  };
}

/** A refund notification's event, with the refund's own amount from a refund query. */
export function refundEventOf(
  says: { eventId: string; tradeNo: string; refundNo: string },
  answer: Answer,
): ChannelEvent {
  const state = refundQueryStateOf(answer);
  if (state.status !== 'success') {
    throw new ChannelError(
      'invalid_response',
      `Alipay notified refund ${says.refundNo} that its query does not show as done`,
    );
  }
  return {
    kind: 'refund',
    eventId: says.eventId,
    tradeNo: says.tradeNo,
    refundNo: says.refundNo,
    status: 'success',
    channelRefundNo: state.channelRefundNo,
    amount: amount(answer, 'refund_amount', 'refund query'),
    refundedAt: state.refundedAt,
  };
}

// ---- profit sharing (royalty) ----

/** durapay's receiver types (free text in a merchant's profit_sharing) in Alipay's words. */
const RECEIVER_TYPES: Record<string, 'userId' | 'loginName' | 'openId'> = {
  merchant: 'userId',
  personal: 'userId',
  user_id: 'userId',
  userid: 'userId',
  login_name: 'loginName',
  loginname: 'loginName',
  open_id: 'openId',
  openid: 'openId',
};

/**
 * A receiver's Alipay account type: a 2088… PID is a userId whatever the receiver is called;
 * otherwise the type names it (an email or phone is a loginName).
 */
export function receiverType(type: string, account: string): 'userId' | 'loginName' | 'openId' {
  const key = type.toLowerCase();
  const wire = Object.hasOwn(RECEIVER_TYPES, key) ? RECEIVER_TYPES[key] : undefined;
  if (!wire) {
    throw new ChannelError(
      'refused',
      `receiver type ${type} is not one Alipay settles to (merchant, personal, user_id, login_name or open_id)`,
    );
  }
  if (wire === 'userId' && !/^2088\d{12}$/.test(account)) return 'loginName';
  return wire;
}

/** `alipay.trade.order.settle.query`: every detail SUCCESS is finished, any FAIL failed. */
export function settleStateOf(answer: Answer): ProfitShareState {
  const details = Array.isArray(answer.royalty_detail_list)
    ? (answer.royalty_detail_list as Record<string, unknown>[])
    : [];
  const failed = details.find((d) => d?.state === 'FAIL');
  if (failed) {
    return {
      status: 'failed',
      reason: `Alipay could not settle to ${String(failed.trans_in)}: ${String(failed.error_desc ?? failed.error_code ?? 'FAIL')}`,
    };
  }
  if (details.length > 0 && details.every((d) => d?.state === 'SUCCESS')) return { status: 'finished' };
  return { status: 'processing' };
}

// ---- onboarding (直付通 secondary merchants) ----

/**
 * `ant.merchant.expand.indirect.zftorder.query`'s order as an application's state: 031 is under
 * audit, 99 is done with the secondary merchant's smid, -1 refused with its reason.
 */
export function zftStateOf(order: Record<string, unknown>): ApplicationState {
  const status = String(order.status ?? '');
  const base = {
    channelApplicationNo: text(order, 'order_id') ?? null,
    subMerchantNo: null,
    signUrl: null,
    rejectReason: null,
    detail: {
      status,
      fk_audit: order.fk_audit ?? null,
      kz_audit: order.kz_audit ?? null,
      sub_confirm: order.sub_confirm ?? null,
    },
  };
  switch (status) {
    case '99': {
      const smid = text(order, 'smid');
      if (!smid) throw new ChannelError('invalid_response', 'Alipay finished an application without smid');
      return { ...base, status: 'finished', subMerchantNo: smid };
    }
    case '-1':
      return { ...base, status: 'rejected', rejectReason: text(order, 'reason') ?? 'refused by Alipay' };
    case '031':
      return { ...base, status: 'auditing' };
    default:
      return { ...base, status: 'submitted' };
  }
}

// ---- app authorisation (第三方应用授权) ----

/** Seconds as Alipay writes them, a number or a string of digits; undefined otherwise. */
function seconds(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{1,12}$/.test(value.trim()) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/**
 * `alipay.open.auth.token.app`'s token: from the newer answer's `tokens` list (its first entry,
 * the one merchant's authorisation), each field falling back to the same field flat, as older
 * answers carry them. expires_in and re_expires_in are seconds from `now`. No value is ever put
 * in an error: they are credentials.
 */
export function authorizedTokenOf(answer: Answer, now: Date): AuthorizedToken {
  const listed = Array.isArray(answer.tokens) ? (answer.tokens[0] as unknown) : undefined;
  const entry = typeof listed === 'object' && listed !== null ? (listed as Record<string, unknown>) : {};
  const what = 'app authorisation token';
  const field = (key: string) => text(entry, key) ?? required(answer, key, what);
  const expiresIn = seconds(entry.expires_in ?? answer.expires_in);
  if (expiresIn === undefined) {
    throw new ChannelError('invalid_response', `Alipay ${what} answered without expires_in in seconds`);
  }
  const reExpiresIn = seconds(entry.re_expires_in ?? answer.re_expires_in);
  return {
    appAuthToken: field('app_auth_token'),
    refreshToken: field('app_refresh_token'),
    userId: field('user_id'),
    authAppId: field('auth_app_id'),
    expiresAt: new Date(now.getTime() + expiresIn * 1000),
    refreshExpiresAt: reExpiresIn === undefined ? null : new Date(now.getTime() + reExpiresIn * 1000),
  };
}
