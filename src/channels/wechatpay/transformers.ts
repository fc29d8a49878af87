// Longer than 400 lines on purpose: WeChat Pay's whole wire in one place, so every channel state is mapped once.
/**
 * WeChat Pay API v3's wire (service-provider, "partner" APIs): what the adapter sends, and the
 * parsing of what WeChat Pay answers or posts back into the types of ../ports. Every state of
 * the channel is mapped here, once. Anything malformed becomes ChannelError('invalid_response'),
 * so nothing downstream sees an unparsed body. Longer than 300 lines: one schema and one mapping
 * per v3 object durapay reads (transaction, refund, notification, sharing order), kept together
 * so each channel state is mapped in exactly one place.
 */
import Joi from 'joi';
import type { PayMethod } from '../../modules/orders/rules';
import { ChannelError } from '../errors';
import type {
  BarcodeAnswer,
  BarcodePaymentInput,
  ChannelEvent,
  CreatePaymentInput,
  PaymentState,
  AbnormalRefundInput,
  ProfitShareState,
  RefundInput,
  RefundState,
  ShareReturnState,
  KnownTransferState,
  TransferInput,
} from '../ports';

/** The v3 endpoint that creates each pay method's prepayment; `web` has none. */
export const CREATE_KIND: Partial<Record<PayMethod, 'jsapi' | 'app' | 'h5' | 'native'>> = {
  jsapi: 'jsapi',
  mini_program: 'jsapi',
  app: 'app',
  h5: 'h5',
  qr_code: 'native',
};

/** Every pay method WeChat Pay takes: the prepayments above, and `barcode` by codepay (./barcode.ts). */
export const WECHATPAY_PAY_METHODS = [...Object.keys(CREATE_KIND), 'barcode'] as PayMethod[];

/**
 * WeChat Pay's buyer codes (付款码): 18 digits starting 10 to 15, per its published rule. A till's
 * code of another shape is not WeChat Pay's.
 */
export const WECHATPAY_AUTH_CODE = /^1[0-5]\d{16}$/;

/** RFC 3339 in China Standard Time, as WeChat Pay writes and expects its times. */
export function toWechatTime(at: Date): string {
  const local = new Date(at.getTime() + 8 * 3_600_000).toISOString().slice(0, 19);
  return `${local}+08:00`;
}

function text(extra: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = extra?.[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export interface Account {
  spMchid: string;
  spAppid: string;
}

/** The body of `POST /v3/pay/partner/transactions/{kind}`. */
export function toWireCreate(account: Account, subMchid: string, input: CreatePaymentInput) {
  const kind = CREATE_KIND[input.payMethod];
  const extra = input.extra;
  const subAppid = text(extra, 'sub_appid');
  const spOpenid = text(extra, 'sp_openid');
  const subOpenid = text(extra, 'sub_openid');
  if (kind === 'jsapi' && !spOpenid && !subOpenid) {
    throw new ChannelError(
      'refused',
      `extra.sp_openid or extra.sub_openid is required for ${input.payMethod}`,
    );
  }
  if (subOpenid && !subAppid) {
    throw new ChannelError('refused', 'extra.sub_appid is required with extra.sub_openid');
  }
  const clientIp = text(extra, 'client_ip');
  if (kind === 'h5' && !clientIp) throw new ChannelError('refused', 'extra.client_ip is required for h5');
  return {
    sp_appid: account.spAppid,
    sp_mchid: account.spMchid,
    ...(subAppid ? { sub_appid: subAppid } : {}),
    sub_mchid: subMchid,
    // WeChat Pay takes at most 127 characters of description.
    description: [...input.subject].slice(0, 127).join(''),
    out_trade_no: input.tradeNo,
    time_expire: toWechatTime(input.expireAt),
    notify_url: input.callbackUrl,
    ...(input.profitSharing ? { settle_info: { profit_sharing: true } } : {}),
    amount: { total: input.amount, currency: 'CNY' },
    ...(kind === 'jsapi' ? { payer: subOpenid ? { sub_openid: subOpenid } : { sp_openid: spOpenid } } : {}),
    ...(clientIp
      ? { scene_info: { payer_client_ip: clientIp, ...(kind === 'h5' ? { h5_info: { type: 'Wap' } } : {}) } }
      : {}),
  };
}

/**
 * The body of `POST /v3/pay/partner/transactions/codepay`. WeChat Pay wants the shop on every
 * code payment (`scene_info.store_info.out_id`): the till's store_id, else its device, else
 * `default`.
 */
export function toWireCodepay(account: Account, subMchid: string, input: BarcodePaymentInput) {
  return {
    sp_appid: account.spAppid,
    sp_mchid: account.spMchid,
    sub_mchid: subMchid,
    description: [...input.subject].slice(0, 127).join(''),
    out_trade_no: input.tradeNo,
    payer: { auth_code: input.authCode },
    amount: { total: input.amount, currency: 'CNY' },
    scene_info: {
      ...(input.deviceId ? { device_id: input.deviceId } : {}),
      store_info: { out_id: input.storeId ?? input.deviceId ?? 'default' },
    },
    ...(input.profitSharing ? { settle_info: { profit_sharing: true } } : {}),
  };
}

/**
 * A codepay answer: 200 with the transaction (SUCCESS: paid), or 202 `USERPAYING` (the buyer
 * is entering a password in the wallet: follow it by query). A 200 whose transaction is still
 * USERPAYING is read the same way; any other state of a fresh code payment is an answer durapay
 * cannot act on, so the payment is treated as unknown and reversed.
 */
export function barcodeAnswerOf(value: unknown): BarcodeAnswer {
  const wire = (typeof value === 'object' && value !== null ? value : {}) as { code?: unknown };
  if (wire.code === 'USERPAYING') return { status: 'paying', channelTradeNo: null };
  const t = parseTransaction(value);
  if (t.trade_state === 'SUCCESS') {
    return {
      status: 'paid',
      channelTradeNo: t.transaction_id!,
      paidAt: instant('success_time', t.success_time),
      amount: t.amount.total,
    };
  }
  if (t.trade_state === 'USERPAYING' || t.trade_state === 'NOTPAY') {
    return { status: 'paying', channelTradeNo: t.transaction_id ?? null };
  }
  throw new ChannelError('invalid_response', `WeChat Pay codepay answered the trade ${t.trade_state}`);
}

/** The body of `POST /v3/refund/domestic/refunds`. */
export function toWireRefund(subMchid: string, input: RefundInput) {
  return {
    sub_mchid: subMchid,
    out_trade_no: input.tradeNo,
    out_refund_no: input.refundNo,
    ...(input.reason ? { reason: [...input.reason].slice(0, 80).join('') } : {}),
    notify_url: input.callbackUrl,
    amount: { refund: input.amount, total: input.totalAmount, currency: 'CNY' },
  };
}

function parse<T>(what: string, schema: Joi.Schema, value: unknown): T {
  const { error, value: parsed } = schema.validate(value, { allowUnknown: true, convert: false });
  if (error) throw new ChannelError('invalid_response', `WeChat Pay ${what}: ${error.message}`);
  return parsed as T;
}

function instant(what: string, value: string | undefined): Date {
  const at = value === undefined ? new Date(NaN) : new Date(value);
  if (Number.isNaN(at.getTime()))
    throw new ChannelError('invalid_response', `WeChat Pay ${what}: bad time ${value}`);
  return at;
}

export const createdSchema = Joi.object({
  prepay_id: Joi.string(),
  h5_url: Joi.string(),
  code_url: Joi.string(),
}).or('prepay_id', 'h5_url', 'code_url');

export function parseCreated(value: unknown): { prepay_id?: string; h5_url?: string; code_url?: string } {
  return parse('create answer', createdSchema, value);
}

const TRADE_STATES = ['SUCCESS', 'REFUND', 'NOTPAY', 'CLOSED', 'REVOKED', 'USERPAYING', 'PAYERROR'] as const;
type TradeState = (typeof TRADE_STATES)[number];

interface WireTransaction {
  sp_mchid: string;
  sub_mchid?: string;
  out_trade_no: string;
  transaction_id?: string;
  trade_state: TradeState;
  trade_state_desc?: string;
  success_time?: string;
  amount: { total: number; payer_total?: number; currency?: string };
}

const transactionSchema = Joi.object({
  sp_mchid: Joi.string().required(),
  sub_mchid: Joi.string(),
  out_trade_no: Joi.string().required(),
  transaction_id: Joi.string(),
  trade_state: Joi.string()
    .valid(...TRADE_STATES)
    .required(),
  trade_state_desc: Joi.string().allow(''),
  success_time: Joi.string(),
  amount: Joi.object({
    total: Joi.number().integer().min(0).required(),
    payer_total: Joi.number().integer(),
    currency: Joi.string(),
  }).required(),
});

export function parseTransaction(value: unknown): WireTransaction {
  const t = parse<WireTransaction>('transaction', transactionSchema, value);
  if ((t.trade_state === 'SUCCESS' || t.trade_state === 'REFUND') && !t.transaction_id) {
    throw new ChannelError(
      'invalid_response',
      'WeChat Pay transaction: a paid transaction without transaction_id',
    );
  }
  return t;
}

/**
 * A transaction's state in durapay's words. SUCCESS and REFUND (paid, then refunded in part or
 * whole) are paid; NOTPAY, USERPAYING (the buyer is entering a password) and PAYERROR (the bank
 * refused this attempt; the buyer may pay again) are still open: the order waits for its expiry
 * and is closed then. CLOSED and REVOKED are closed.
 */
export function paymentStateOf(t: WireTransaction): PaymentState {
  switch (t.trade_state) {
    case 'SUCCESS':
    case 'REFUND':
      return {
        status: 'paid',
        channelTradeNo: t.transaction_id!,
        paidAt: instant('success_time', t.success_time),
        amount: t.amount.total,
      };
    case 'CLOSED':
    case 'REVOKED':
      return { status: 'closed' };
    default:
      return { status: 'pending' };
  }
}

const REFUND_STATUSES = ['SUCCESS', 'CLOSED', 'PROCESSING', 'ABNORMAL'] as const;

interface WireRefund {
  refund_id: string;
  out_refund_no: string;
  out_trade_no?: string;
  status: (typeof REFUND_STATUSES)[number];
  success_time?: string;
  amount?: { refund: number };
}

const refundSchema = Joi.object({
  refund_id: Joi.string().required(),
  out_refund_no: Joi.string().required(),
  out_trade_no: Joi.string(),
  status: Joi.string()
    .valid(...REFUND_STATUSES)
    .required(),
  success_time: Joi.string(),
  amount: Joi.object({ refund: Joi.number().integer().min(0).required() }),
});

/** What an operator must do about an ABNORMAL refund: WeChat Pay holds it until told where to pay it. */
export const ABNORMAL_REFUND_REASON =
  'ABNORMAL: WeChat Pay could not pay the refund into the buyer’s account (closed card or account); ' +
  'pay it to a bank card instead (apply-abnormal-refund)';

/**
 * A refund's state: PROCESSING goes on, SUCCESS is refunded, CLOSED failed. ABNORMAL is not a
 * failure: the money has left the order and WeChat Pay holds it until it is told where to pay it.
 */
export function refundStateOf(value: unknown): RefundState {
  const r = parse<WireRefund>('refund', refundSchema, value);
  switch (r.status) {
    case 'PROCESSING':
      return { status: 'processing', channelRefundNo: r.refund_id };
    case 'SUCCESS':
      return {
        status: 'success',
        channelRefundNo: r.refund_id,
        refundedAt: r.success_time ? instant('success_time', r.success_time) : new Date(),
      };
    case 'CLOSED':
      return {
        status: 'failed',
        channelRefundNo: r.refund_id,
        reason: 'CLOSED: WeChat Pay closed the refund',
      };
    case 'ABNORMAL':
      return { status: 'abnormal', channelRefundNo: r.refund_id, reason: ABNORMAL_REFUND_REASON };
  }
}

/** The banks WeChat Pay pays an abnormal refund to a user's debit card at (its `bank_type`). */
export const ABNORMAL_REFUND_BANKS = [
  'CMB_DEBIT',
  'COMM_DEBIT',
  'ABC_DEBIT',
  'CCB_DEBIT',
  'ICBC_DEBIT',
  'BOC_DEBIT',
  'PAB_DEBIT',
  'SPDB_DEBIT',
  'CITIC_DEBIT',
  'CEB_DEBIT',
  'CMBC_DEBIT',
  'CIB_DEBIT',
  'GDB_DEBIT',
  'PSBC_DEBIT',
  'NBCB_DEBIT',
] as const;

/**
 * The body of `POST /v3/refund/domestic/refunds/{refund_id}/apply-abnormal-refund`, its personal
 * fields sealed by `seal` (RSA-OAEP under WeChat Pay's public key). A user's card needs the bank,
 * the card number and the holder's name; the merchant's own account needs nothing more.
 */
export function toWireAbnormalRefund(
  subMchid: string,
  input: AbnormalRefundInput,
  seal: (plain: string) => string,
) {
  if (input.method === 'merchant_bank_card') {
    return { sub_mchid: subMchid, out_refund_no: input.refundNo, type: 'MERCHANT_BANK_CARD' };
  }
  const { bankType, bankAccount, realName } = input;
  if (!bankType || !bankAccount || !realName) {
    throw new ChannelError(
      'refused',
      'WeChat Pay pays an abnormal refund to a user’s card only with bank_type, bank_account and real_name',
    );
  }
  if (!(ABNORMAL_REFUND_BANKS as readonly string[]).includes(bankType)) {
    throw new ChannelError(
      'refused',
      `bank_type ${bankType} is not one WeChat Pay pays abnormal refunds to (${ABNORMAL_REFUND_BANKS.join(', ')})`,
    );
  }
  return {
    sub_mchid: subMchid,
    out_refund_no: input.refundNo,
    type: 'USER_BANK_CARD',
    bank_type: bankType,
    bank_account: seal(bankAccount),
    real_name: seal(realName),
  };
}

// ---- callbacks ----

export interface WireNotification {
  id: string;
  event_type: string;
  resource_type?: string;
  resource: {
    algorithm: string;
    ciphertext: string;
    nonce: string;
    associated_data?: string;
    original_type?: string;
  };
}

const notificationSchema = Joi.object({
  id: Joi.string().required(),
  event_type: Joi.string().required(),
  resource_type: Joi.string(),
  resource: Joi.object({
    algorithm: Joi.string().valid('AEAD_AES_256_GCM').required(),
    ciphertext: Joi.string().required(),
    nonce: Joi.string().required(),
    associated_data: Joi.string().allow(''),
    original_type: Joi.string(),
  }).required(),
});

export function parseNotification(value: unknown): WireNotification {
  return parse('notification', notificationSchema, value);
}

interface WireRefundNotice {
  sp_mchid: string;
  sub_mchid?: string;
  out_trade_no: string;
  out_refund_no: string;
  refund_id: string;
  refund_status: (typeof REFUND_STATUSES)[number];
  success_time?: string;
  amount: { refund: number };
}

const refundNoticeSchema = Joi.object({
  sp_mchid: Joi.string().required(),
  sub_mchid: Joi.string(),
  out_trade_no: Joi.string().required(),
  out_refund_no: Joi.string().required(),
  refund_id: Joi.string().required(),
  refund_status: Joi.string()
    .valid(...REFUND_STATUSES)
    .required(),
  success_time: Joi.string(),
  amount: Joi.object({ refund: Joi.number().integer().min(0).required() }).required(),
});

const REFUND_EVENT_STATUS = { SUCCESS: 'success', CLOSED: 'failed', ABNORMAL: 'abnormal' } as const;

/** A decrypted resource as durapay's event, with the merchant ids it was sent for. */
export function eventOf(
  notification: WireNotification,
  plaintext: unknown,
): { event: ChannelEvent; spMchid: string; subMchid: string | undefined } {
  if (notification.event_type === 'TRANSACTION.SUCCESS') {
    const t = parseTransaction(plaintext);
    if (t.trade_state !== 'SUCCESS') {
      throw new ChannelError('invalid_response', `TRANSACTION.SUCCESS with trade_state ${t.trade_state}`);
    }
    return {
      spMchid: t.sp_mchid,
      subMchid: t.sub_mchid,
      event: {
        kind: 'payment',
        eventId: notification.id,
        tradeNo: t.out_trade_no,
        status: 'paid',
        channelTradeNo: t.transaction_id!,
        amount: t.amount.total,
        currency: t.amount.currency ?? 'CNY',
        paidAt: instant('success_time', t.success_time),
      },
    };
  }
  if (notification.event_type === TRANSFER_EVENT) {
    const notice = parse<WireTransferNotice>('transfer notification', transferNoticeSchema, plaintext);
    if (!FINAL_TRANSFER_STATES.includes(notice.state)) {
      throw new ChannelError('invalid_response', `${TRANSFER_EVENT} with state ${notice.state}`);
    }
    const state = transferStateOf(notice);
    return {
      spMchid: notice.mch_id ?? notice.sp_mchid ?? notice.mchid ?? '',
      subMchid: notice.sub_mchid,
      event: {
        kind: 'transfer',
        eventId: notification.id,
        transferNo: notice.out_bill_no,
        state,
        ...(notice.transfer_amount === undefined ? {} : { amount: notice.transfer_amount }),
      },
    };
  }
  if (/^REFUND\.(SUCCESS|ABNORMAL|CLOSED)$/.test(notification.event_type)) {
    const r = parse<WireRefundNotice>('refund notification', refundNoticeSchema, plaintext);
    if (r.refund_status === 'PROCESSING' || notification.event_type !== `REFUND.${r.refund_status}`) {
      throw new ChannelError(
        'invalid_response',
        `${notification.event_type} with refund_status ${r.refund_status}`,
      );
    }
    const status = REFUND_EVENT_STATUS[r.refund_status];
    return {
      spMchid: r.sp_mchid,
      subMchid: r.sub_mchid,
      event: {
        kind: 'refund',
        eventId: notification.id,
        tradeNo: r.out_trade_no,
        refundNo: r.out_refund_no,
        status,
        channelRefundNo: r.refund_id,
        amount: r.amount.refund,
        ...(status === 'abnormal' ? { reason: ABNORMAL_REFUND_REASON } : {}),
        ...(status === 'failed' ? { reason: 'CLOSED: WeChat Pay closed the refund' } : {}),
        refundedAt: status === 'success' && r.success_time ? instant('success_time', r.success_time) : null,
      },
    };
  }
  throw new ChannelError(
    'invalid_response',
    `WeChat Pay event ${notification.event_type} is not one durapay takes`,
  );
}

// ---- profit sharing ----

/** durapay's receiver types (free text in a merchant's profit_sharing) in WeChat Pay's words. */
const RECEIVER_TYPES: Record<string, 'MERCHANT_ID' | 'PERSONAL_OPENID' | 'PERSONAL_SUB_OPENID'> = {
  merchant: 'MERCHANT_ID',
  merchant_id: 'MERCHANT_ID',
  personal: 'PERSONAL_OPENID',
  personal_openid: 'PERSONAL_OPENID',
  personal_sub: 'PERSONAL_SUB_OPENID',
  personal_sub_openid: 'PERSONAL_SUB_OPENID',
};

export function receiverType(type: string): 'MERCHANT_ID' | 'PERSONAL_OPENID' | 'PERSONAL_SUB_OPENID' {
  const key = type.toLowerCase();
  // Own entries only: a receiver type is free text, and `constructor` is not a WeChat Pay type.
  const wire = Object.hasOwn(RECEIVER_TYPES, key) ? RECEIVER_TYPES[key] : undefined;
  if (!wire) {
    throw new ChannelError(
      'refused',
      `receiver type ${type} is not one WeChat Pay shares to (merchant, personal or personal_sub)`,
    );
  }
  return wire;
}

const SHARING_STATES = ['PROCESSING', 'FINISHED'] as const;

interface WireSharingOrder {
  state: (typeof SHARING_STATES)[number];
  receivers?: { account: string; result: 'PENDING' | 'SUCCESS' | 'CLOSED'; fail_reason?: string }[];
}

const sharingOrderSchema = Joi.object({
  state: Joi.string()
    .valid(...SHARING_STATES)
    .required(),
  receivers: Joi.array().items(
    Joi.object({
      account: Joi.string().required(),
      result: Joi.string().valid('PENDING', 'SUCCESS', 'CLOSED').required(),
      fail_reason: Joi.string(),
    }),
  ),
});

/**
 * A sharing order's state: PROCESSING goes on; FINISHED is finished when every receiver was
 * paid, failed (naming who was not, and why) when WeChat Pay closed a receiver's share.
 */
export function sharingStateOf(value: unknown): ProfitShareState {
  const order = parse<WireSharingOrder>('profit sharing order', sharingOrderSchema, value);
  if (order.state === 'PROCESSING') return { status: 'processing' };
  const closed = (order.receivers ?? []).filter((r) => r.result === 'CLOSED');
  if (closed.length === 0) return { status: 'finished' };
  return {
    status: 'failed',
    reason: `WeChat Pay closed the share of ${closed.map((r) => `${r.account} (${r.fail_reason ?? 'no reason'})`).join(', ')}`,
  };
}

// ---- share returns (分账回退) ----

const RETURN_RESULTS = ['PROCESSING', 'SUCCESS', 'FAILED'] as const;

interface WireReturnOrder {
  return_id?: string;
  out_return_no: string;
  result: (typeof RETURN_RESULTS)[number];
  fail_reason?: string;
}

const returnOrderSchema = Joi.object({
  return_id: Joi.string(),
  out_return_no: Joi.string().required(),
  result: Joi.string()
    .valid(...RETURN_RESULTS)
    .required(),
  fail_reason: Joi.string(),
});

/**
 * A return order's state: PROCESSING goes on (WeChat Pay closes one still processing after five
 * days as FAILED TIME_OUT_CLOSED), SUCCESS is back with the sub-merchant, FAILED names why.
 */
export function returnStateOf(value: unknown): ShareReturnState {
  const order = parse<WireReturnOrder>('return order', returnOrderSchema, value);
  switch (order.result) {
    case 'PROCESSING':
      return { status: 'processing' };
    case 'SUCCESS':
      return { status: 'success', channelReturnNo: order.return_id ?? null };
    case 'FAILED':
      return { status: 'failed', reason: `FAILED: ${order.fail_reason ?? 'WeChat Pay failed the return'}` };
  }
}

// ---- transfers (商家转账) ----

/** The smallest transfer WeChat Pay makes: 0.10 yuan. */
export const TRANSFER_MIN_AMOUNT_FEN = 10;
/** From 2 000 yuan on, WeChat Pay wants the payee's real name (`user_name`, sealed). */
export const TRANSFER_NAME_REQUIRED_FROM_FEN = 200_000;
/** `transfer_remark`: what the payee sees, at most 32 characters. */
export const TRANSFER_REMARK_MAX_CHARS = 32;

const TRANSFER_STATES = [
  'ACCEPTED',
  'PROCESSING',
  'WAIT_USER_CONFIRM',
  'TRANSFERING',
  'SUCCESS',
  'FAIL',
  'CANCELING',
  'CANCELLED',
] as const;
type WireTransferState = (typeof TRANSFER_STATES)[number];
const FINAL_TRANSFER_STATES: readonly WireTransferState[] = ['SUCCESS', 'FAIL', 'CANCELLED'];

/** The event WeChat Pay posts when a bill reaches SUCCESS, FAIL or CANCELLED. */
export const TRANSFER_EVENT = 'MCHTRANSFER.BILL.FINISHED';

/**
 * What each published `fail_reason` means. OVERDUE_CLOSE is how a bill the payee never confirmed
 * ends: WeChat Pay closes it (FAIL) some time after 24 h and returns the money to the payer.
 */
const TRANSFER_FAIL_REASONS: Record<string, string> = {
  ACCOUNT_FROZEN: 'the payee’s account is frozen',
  REAL_NAME_CHECK_FAIL: 'the payee has not verified their real name',
  NAME_NOT_CORRECT: 'the payee’s name does not match user_name',
  OPENID_INVALID: 'the openid failed its check',
  TRANSFER_QUOTA_EXCEED: 'above the payee’s single-transfer limit',
  DAY_RECEIVED_QUOTA_EXCEED: 'above the payee’s daily limit',
  MONTH_RECEIVED_QUOTA_EXCEED: 'above the payee’s monthly limit',
  DAY_RECEIVED_COUNT_EXCEED: 'above the payee’s daily number of transfers',
  PRODUCT_AUTH_CHECK_FAIL: 'the merchant is not allowed this transfer',
  OVERDUE_CLOSE: 'the payee did not confirm in time; WeChat Pay closed the bill and returned the money',
  ID_CARD_NOT_CORRECT: 'the payee’s identity card failed its check',
  ACCOUNT_NOT_EXIST: 'the payee has no WeChat Pay account',
  TRANSFER_RISK: 'WeChat Pay saw a risk in this transfer',
};

/**
 * Why WeChat Pay would refuse the transfer as asked, naming the field; undefined when nothing is
 * wrong. Its published rules: an openid of the app the call names, a transfer scene with its
 * report infos, a remark of 1–32 characters, at least 0.10 yuan, and the payee's name from 2 000
 * yuan on.
 */
export function transferProblem(
  input: Omit<TransferInput, 'transferNo' | 'callbackUrl'>,
): string | undefined {
  if (input.payee.type !== 'openid') {
    return `payee.type must be openid at wechatpay, not ${input.payee.type}`;
  }
  if (input.payee.account === '') return 'payee.account (the openid) is required at wechatpay';
  if (input.amount < TRANSFER_MIN_AMOUNT_FEN) {
    return `amount must be at least ${yuanOf(TRANSFER_MIN_AMOUNT_FEN)} yuan at wechatpay`;
  }
  if (!input.scene || input.scene.id === '') {
    return 'scene is required at wechatpay: its transfer_scene_id and the report infos the scene asks for';
  }
  if (input.scene.reportInfos.some((info) => info.type === '' || info.content === '')) {
    return 'scene.report_infos must each have a type and a content at wechatpay';
  }
  const remark = [...input.remark].length;
  if (remark === 0) return 'remark is required at wechatpay: the payee sees it';
  if (remark > TRANSFER_REMARK_MAX_CHARS) {
    return `remark must be at most ${TRANSFER_REMARK_MAX_CHARS} characters at wechatpay (it has ${remark})`;
  }
  if (input.amount >= TRANSFER_NAME_REQUIRED_FROM_FEN && !input.payee.name) {
    return `payee.name is required from ${yuanOf(TRANSFER_NAME_REQUIRED_FROM_FEN)} yuan at wechatpay`;
  }
  return undefined;
}

function yuanOf(fen: number): string {
  return `${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`;
}

/**
 * The body of `POST /v3/fund-app/mch-transfer/partner/transfer-bills` (with `subMchid`, the
 * merchant that pays) or of the direct `/v3/fund-app/mch-transfer/transfer-bills` (the service
 * provider pays from its own account). `appid` is the service provider's (WECHATPAY_SP_APPID): the
 * payee's openid must be of that app. The payee's name goes sealed by `seal`.
 */
export function toWireTransfer(
  account: Account,
  subMchid: string | undefined,
  input: TransferInput,
  seal: (plain: string) => string,
) {
  const scene = input.scene;
  if (!scene) throw new ChannelError('refused', 'scene is required at wechatpay');
  return {
    ...(subMchid === undefined ? {} : { sub_mchid: subMchid }),
    appid: account.spAppid,
    out_bill_no: input.transferNo,
    transfer_scene_id: scene.id,
    openid: input.payee.account,
    ...(input.payee.name ? { user_name: seal(input.payee.name) } : {}),
    transfer_amount: input.amount,
    transfer_remark: input.remark,
    notify_url: input.callbackUrl,
    ...(scene.userRecvPerception ? { user_recv_perception: scene.userRecvPerception } : {}),
    transfer_scene_report_infos: scene.reportInfos.map((info) => ({
      info_type: info.type,
      info_content: info.content,
    })),
  };
}

/** A bill as the create, query and cancel answers carry it (more fields are ignored). */
interface WireTransferBill {
  out_bill_no: string;
  transfer_bill_no?: string;
  state: WireTransferState;
  package_info?: string;
  fail_reason?: string;
  update_time?: string;
}

const transferBillSchema = Joi.object({
  out_bill_no: Joi.string().required(),
  transfer_bill_no: Joi.string(),
  state: Joi.string()
    .valid(...TRANSFER_STATES)
    .required(),
  package_info: Joi.string().allow(''),
  fail_reason: Joi.string().allow(''),
  update_time: Joi.string(),
});

/**
 * A bill's state in durapay's words. ACCEPTED, PROCESSING (funds being locked) and TRANSFERING
 * (confirmed, the money on its way) go on; WAIT_USER_CONFIRM waits for the payee in WeChat, with
 * `package_info` for `wx.requestMerchantTransfer`. The create's answer carries package_info; a
 * query's does not, so packageInfo is empty there (the same create sent again answers it). FAIL
 * names its fail_reason (OVERDUE_CLOSE: never confirmed); CANCELLED was cancelled by the merchant.
 */
export function transferStateOf(value: unknown): KnownTransferState {
  const bill = parse<WireTransferBill>('transfer bill', transferBillSchema, value);
  const channelTransferNo = bill.transfer_bill_no ?? null;
  switch (bill.state) {
    case 'ACCEPTED':
    case 'PROCESSING':
    case 'TRANSFERING':
      return { status: 'processing', channelTransferNo };
    case 'WAIT_USER_CONFIRM':
      return { status: 'wait_user_confirm', channelTransferNo, packageInfo: bill.package_info ?? '' };
    case 'CANCELING':
      return { status: 'cancelling', channelTransferNo };
    case 'SUCCESS':
      return {
        status: 'success',
        channelTransferNo,
        finishedAt: bill.update_time ? instant('update_time', bill.update_time) : new Date(),
      };
    case 'FAIL': {
      const code = bill.fail_reason || 'FAIL';
      const meaning = TRANSFER_FAIL_REASONS[code] ?? 'WeChat Pay failed the transfer';
      return { status: 'failed', channelTransferNo, reason: `${code}: ${meaning}` };
    }
    case 'CANCELLED':
      return {
        status: 'cancelled',
        channelTransferNo,
        reason: 'CANCELLED: cancelled before the payee received it',
      };
  }
}

/** The plaintext of a MCHTRANSFER.BILL.FINISHED resource: the bill, with the merchant ids. */
interface WireTransferNotice extends WireTransferBill {
  mch_id?: string;
  sp_mchid?: string;
  mchid?: string;
  sub_mchid?: string;
  transfer_amount?: number;
}

const transferNoticeSchema = transferBillSchema
  .keys({
    mch_id: Joi.string(),
    sp_mchid: Joi.string(),
    mchid: Joi.string(),
    sub_mchid: Joi.string(),
    transfer_amount: Joi.number().integer().min(0),
  })
  .or('mch_id', 'sp_mchid', 'mchid');
