// Longer than 400 lines on purpose: the sandbox's whole wire in one place, so every state is mapped once.
/**
 * The sandbox's wire formats: what the adapter sends, and the parsing of everything the
 * simulator answers or posts back into the types of ../ports. Anything malformed becomes a
 * ChannelError('invalid_response'), so nothing downstream sees an unparsed body.
 *
 * Longer than 300 lines: one wire type and one parser per endpoint of the simulated channel,
 * kept together so that the contract between adapter and simulator reads in one place.
 */
import type { ApplicationStatus } from '../../modules/applications/rules';
import { ChannelError } from '../errors';
import type {
  AbnormalRefundInput,
  ApplicationState,
  BarcodeAnswer,
  ChannelContext,
  ChannelEvent,
  CreateContext,
  CreatePaymentInput,
  CreatePaymentResult,
  PaymentState,
  ProfitShareInput,
  ProfitShareState,
  RefundInput,
  RefundState,
  ReverseAnswer,
  ShareReturnInput,
  ShareReturnState,
  SubmitApplicationInput,
  KnownTransferState,
  TransferInput,
  UploadFileInput,
} from '../ports';

// ---- requests (adapter → simulator) ----

export interface WireCreateOrder {
  trade_no: string;
  amount: number;
  currency: string;
  pay_method: string;
  subject: string;
  expire_at: string;
  notify_url: string;
  extra: Record<string, unknown>;
  sub_merchant_no: string | null;
  profit_sharing: boolean;
}

export interface WireCreateRefund {
  refund_no: string;
  trade_no: string;
  amount: number;
  total_amount: number;
  reason: string | null;
  notify_url: string;
}

export interface WireProfitShareRequest {
  share_no: string;
  trade_no: string;
  receivers: { type: string; account: string; name: string | null; amount: number }[];
}

/** Part of a share taken back from one of its receivers (POST /v1/share-returns). */
export interface WireShareReturnRequest {
  return_no: string;
  share_no: string;
  trade_no: string;
  receiver: { type: string; account: string };
  amount: number;
  description: string;
}

/** What a payment froze for sharing, released (POST /v1/unfreezes). */
export interface WireUnfreezeRequest {
  unfreeze_no: string;
  trade_no: string;
  description: string;
}

/** How an abnormal refund is paid instead (POST /v1/refunds/{refund_no}/apply-abnormal). */
export interface WireApplyAbnormalRefund {
  method: 'user_bank_card' | 'merchant_bank_card';
  bank_type: string | null;
  bank_account: string | null;
  real_name: string | null;
}

/**
 * A payout to a person's wallet (POST /v1/transfers), idempotent on `transfer_no`. The payee's
 * name is sent as it is: the simulator seals nothing.
 */
export interface WireCreateTransfer {
  transfer_no: string;
  sub_merchant_no?: string | null;
  amount: number;
  payee: { type: string; account: string; name?: string | null };
  remark: string;
  callback_url: string;
}

export interface WireUploadFile {
  file_name: string;
  media_type: string;
  content_base64: string;
}

export interface WireSubmitApplication {
  application_id: string;
  merchant: {
    merchant_id: string;
    merchant_name: string;
    license_no: string | null;
    legal_person: string | null;
    bank_account: string | null;
  };
  submit_data: Record<string, unknown>;
}

export function toWireCreateOrder(ctx: CreateContext, input: CreatePaymentInput): WireCreateOrder {
  return {
    trade_no: input.tradeNo,
    amount: input.amount,
    currency: ctx.currency,
    pay_method: input.payMethod,
    subject: input.subject,
    expire_at: input.expireAt.toISOString(),
    notify_url: input.callbackUrl,
    extra: input.extra ?? {},
    sub_merchant_no: ctx.subMerchantNo ?? null,
    profit_sharing: input.profitSharing,
  };
}

export function toWireCreateRefund(input: RefundInput): WireCreateRefund {
  return {
    refund_no: input.refundNo,
    trade_no: input.tradeNo,
    amount: input.amount,
    total_amount: input.totalAmount,
    reason: input.reason ?? null,
    notify_url: input.callbackUrl,
  };
}

export function toWireProfitShare(input: ProfitShareInput): WireProfitShareRequest {
  return {
    share_no: input.shareNo,
    trade_no: input.tradeNo,
    receivers: input.receivers.map((r) => ({
      type: r.type,
      account: r.account,
      name: r.name ?? null,
      amount: r.amount,
    })),
  };
}

export function toWireShareReturn(input: ShareReturnInput): WireShareReturnRequest {
  return {
    return_no: input.returnNo,
    share_no: input.shareNo,
    trade_no: input.tradeNo,
    receiver: { type: input.receiver.type, account: input.receiver.account },
    amount: input.amount,
    description: input.description,
  };
}

export function toWireApplyAbnormal(input: AbnormalRefundInput): WireApplyAbnormalRefund {
  return {
    method: input.method,
    bank_type: input.bankType ?? null,
    bank_account: input.bankAccount ?? null,
    real_name: input.realName ?? null,
  };
}

export function toWireCreateTransfer(ctx: ChannelContext, input: TransferInput): WireCreateTransfer {
  const { type, account, name } = input.payee;
  return {
    transfer_no: input.transferNo,
    ...(ctx.subMerchantNo === undefined ? {} : { sub_merchant_no: ctx.subMerchantNo }),
    amount: input.amount,
    payee: { type, account, ...(name === undefined ? {} : { name }) },
    remark: input.remark,
    callback_url: input.callbackUrl,
  };
}

export function toWireUploadFile(input: UploadFileInput): WireUploadFile {
  return {
    file_name: input.fileName,
    media_type: input.mediaType,
    content_base64: input.content.toString('base64'),
  };
}

export function toWireSubmitApplication(input: SubmitApplicationInput): WireSubmitApplication {
  const m = input.merchant;
  return {
    application_id: input.applicationId,
    merchant: {
      merchant_id: m.merchantId,
      merchant_name: m.merchantName,
      license_no: m.licenseNo ?? null,
      legal_person: m.legalPerson ?? null,
      bank_account: m.bankAccount ?? null,
    },
    submit_data: input.submitData,
  };
}

// ---- answers and callbacks (simulator → adapter) ----

/** The simulator's application states, which are durapay's own. */
const WIRE_APPLICATION_STATUSES = [
  'submitted',
  'auditing',
  'to_be_confirmed',
  'to_be_signed',
  'finished',
  'rejected',
  'canceled',
] as const satisfies readonly ApplicationStatus[];

export interface WireOrderCreated {
  trade_no: string;
  channel_trade_no: string;
  pay_url: string;
  qr_code: string;
}

/** `POST /v1/barcode-payments`: a payment by the buyer's code (SPEC §14). */
export interface WireBarcodePayment {
  trade_no: string;
  amount: number;
  currency?: string;
  subject: string;
  auth_code: string;
  device_id?: string;
  store_id?: string;
  notify_url: string;
  sub_merchant_no: string | null;
  profit_sharing: boolean;
}

/** What the simulator answers a barcode payment: paid, or the buyer still confirming. */
export interface WireBarcodeAnswer {
  trade_no: string;
  channel_trade_no: string;
  status: 'paid' | 'paying';
  amount: number;
  paid_at: string | null;
}

/** What a reverse did: `reversed` (with `refunded` when the buyer had been charged), or `retry`. */
export interface WireReverseAnswer {
  trade_no: string;
  status: 'reversed' | 'retry';
  refunded: boolean;
  reason?: string;
}

export interface WireOrderState {
  trade_no: string;
  status: 'pending' | 'paid' | 'closed';
  channel_trade_no: string;
  amount: number;
  currency: string;
  paid_at: string | null;
  closed_at: string | null;
}

export interface WireRefundState {
  refund_no: string;
  trade_no: string;
  channel_refund_no: string;
  amount: number;
  status: 'processing' | 'success' | 'failed' | 'abnormal';
  reason: string | null;
  fail_reason: string | null;
  refunded_at: string | null;
}

export interface WireShareReturnState {
  return_no: string;
  share_no: string;
  status: 'processing' | 'success' | 'failed';
  channel_return_no: string | null;
  fail_reason: string | null;
}

export interface WireUnfreezeState {
  unfreeze_no: string;
  trade_no: string;
  channel_unfreeze_no: string;
  status: 'processing' | 'finished';
}

export interface WireProfitShareState {
  share_no: string;
  trade_no: string;
  status: 'processing' | 'finished' | 'failed';
  fail_reason: string | null;
}

export type WireTransferStatus = 'wait_user_confirm' | 'processing' | 'success' | 'failed' | 'cancelled';

/** A transfer as the simulator answers it (create, query, cancel) and posts it back when it ends. */
export interface WireTransferState {
  transfer_no: string;
  channel_transfer_no: string;
  sub_merchant_no: string | null;
  amount: number;
  status: WireTransferStatus;
  /** While `wait_user_confirm`: what the payee confirms with (the sandbox's confirmation page). */
  package_info: string | null;
  /** Why a transfer `failed` or was `cancelled`. */
  fail_reason: string | null;
  created_at: string;
  /** When it reached its final state. */
  finished_at: string | null;
}

export interface WireFileUploaded {
  file_id: string;
  size: number;
  sha256: string;
}

export interface WireApplicationState {
  application_id: string;
  application_no: string;
  status: ApplicationStatus;
  sub_merchant_no: string | null;
  sign_url: string | null;
  reject_reason: string | null;
  detail: Record<string, unknown>;
}

/** A sub-merchant the simulator knows (GET /v1/sub-merchants/{sub_merchant_no}). */
export interface WireSubMerchant {
  sub_merchant_no: string;
  status: 'active';
}

export interface WirePaymentCallback {
  event_id: string;
  type: 'payment.paid';
  trade_no: string;
  channel_trade_no: string;
  amount: number;
  currency: string;
  paid_at: string;
}

export interface WireRefundCallback {
  event_id: string;
  type: 'refund.success' | 'refund.failed' | 'refund.abnormal';
  trade_no: string;
  refund_no: string;
  channel_refund_no: string;
  amount: number;
  reason?: string;
  refunded_at: string | null;
}

/** A transfer's final state, posted once it is reached; `type` names the state. */
export interface WireTransferCallback extends WireTransferState {
  event_id: string;
  type: 'transfer.success' | 'transfer.failed' | 'transfer.cancelled';
}

/** Every 4xx/5xx answer of the simulator. `code` tells "unknown object" from "unknown route". */
export interface WireError {
  error: string;
  code: string;
}

function invalid(what: string, detail: string): ChannelError {
  return new ChannelError('invalid_response', `sandbox ${what}: ${detail}`);
}

/** Typed reads of one JSON object, each failing with the field's name. */
export class WireObject {
  private constructor(
    private readonly what: string,
    private readonly value: Record<string, unknown>,
  ) {}

  static of(what: string, value: unknown): WireObject {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw invalid(what, 'is not a JSON object');
    }
    return new WireObject(what, value as Record<string, unknown>);
  }

  string(key: string): string {
    const v = this.value[key];
    if (typeof v !== 'string' || v === '') throw invalid(this.what, `"${key}" must be a non-empty string`);
    return v;
  }

  optionalString(key: string): string | null {
    const v = this.value[key];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw invalid(this.what, `"${key}" must be a string or null`);
    return v;
  }

  boolean(key: string): boolean {
    const v = this.value[key];
    if (typeof v !== 'boolean') throw invalid(this.what, `"${key}" must be a boolean`);
    return v;
  }

  amount(key: string): number {
    const v = this.value[key];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw invalid(this.what, `"${key}" must be a non-negative integer`);
    }
    return v;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[]): T {
    const v = this.value[key];
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      throw invalid(this.what, `"${key}" must be one of ${allowed.join(', ')}`);
    }
    return v as T;
  }

  date(key: string): Date {
    const d = this.optionalDate(key);
    if (d === null) throw invalid(this.what, `"${key}" must be a timestamp`);
    return d;
  }

  optionalDate(key: string): Date | null {
    const v = this.optionalString(key);
    if (v === null) return null;
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw invalid(this.what, `"${key}" is not a valid timestamp`);
    return d;
  }

  object(key: string): Record<string, unknown> {
    const v = this.value[key];
    if (v === undefined || v === null) return {};
    if (typeof v !== 'object' || Array.isArray(v)) throw invalid(this.what, `"${key}" must be an object`);
    return v as Record<string, unknown>;
  }
}

/** JSON.parse that fails as an invalid response. */
export function parseJson(what: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalid(what, 'is not valid JSON');
  }
}

export function parseOrderCreated(json: unknown): CreatePaymentResult {
  const o = WireObject.of('order answer', json);
  const payUrl = o.string('pay_url');
  return {
    channelTradeNo: o.string('channel_trade_no'),
    payCredential: { pay_url: payUrl, qr_code: o.string('qr_code') },
  };
}

export function parseBarcodeAnswer(json: unknown): BarcodeAnswer {
  const o = WireObject.of('barcode payment answer', json);
  const status = o.oneOf('status', ['paid', 'paying'] as const);
  if (status === 'paying') return { status, channelTradeNo: o.string('channel_trade_no') };
  return {
    status,
    channelTradeNo: o.string('channel_trade_no'),
    paidAt: o.date('paid_at'),
    amount: o.amount('amount'),
  };
}

export function parseReverseAnswer(json: unknown): ReverseAnswer {
  const o = WireObject.of('reverse answer', json);
  const status = o.oneOf('status', ['reversed', 'retry'] as const);
  if (status === 'retry') return { status, reason: o.string('reason') };
  return { status, refunded: o.boolean('refunded') };
}

export function parsePaymentState(json: unknown): PaymentState {
  const o = WireObject.of('order state', json);
  const status = o.oneOf('status', ['pending', 'paid', 'closed'] as const);
  if (status !== 'paid') return { status };
  return {
    status,
    channelTradeNo: o.string('channel_trade_no'),
    paidAt: o.date('paid_at'),
    amount: o.amount('amount'),
  };
}

export function parseRefundState(json: unknown): RefundState {
  const o = WireObject.of('refund state', json);
  const status = o.oneOf('status', ['processing', 'success', 'failed', 'abnormal'] as const);
  const channelRefundNo = o.optionalString('channel_refund_no');
  switch (status) {
    case 'processing':
      return { status, channelRefundNo };
    case 'success':
      return { status, channelRefundNo, refundedAt: o.date('refunded_at') };
    case 'failed':
      return { status, channelRefundNo, reason: o.optionalString('fail_reason') ?? 'refund failed' };
    case 'abnormal':
      return { status, channelRefundNo, reason: o.optionalString('fail_reason') ?? 'refund abnormal' };
  }
}

export function parseShareReturnState(json: unknown): ShareReturnState {
  const o = WireObject.of('share return state', json);
  const status = o.oneOf('status', ['processing', 'success', 'failed'] as const);
  switch (status) {
    case 'processing':
      return { status };
    case 'success':
      return { status, channelReturnNo: o.optionalString('channel_return_no') };
    case 'failed':
      return { status, reason: o.optionalString('fail_reason') ?? 'share return failed' };
  }
}

export function parseUnfreezeState(json: unknown): ProfitShareState {
  const o = WireObject.of('unfreeze state', json);
  const status = o.oneOf('status', ['processing', 'finished'] as const);
  return { status };
}

export function parseProfitShareState(json: unknown): ProfitShareState {
  const o = WireObject.of('profit-share state', json);
  const status = o.oneOf('status', ['processing', 'finished', 'failed'] as const);
  if (status === 'failed')
    return { status, reason: o.optionalString('fail_reason') ?? 'profit share failed' };
  return { status };
}

const WIRE_TRANSFER_STATUSES = [
  'wait_user_confirm',
  'processing',
  'success',
  'failed',
  'cancelled',
] as const satisfies readonly WireTransferStatus[];

function transferStateOf(o: WireObject): KnownTransferState {
  const status = o.oneOf('status', WIRE_TRANSFER_STATUSES);
  const channelTransferNo = o.optionalString('channel_transfer_no');
  switch (status) {
    case 'wait_user_confirm':
      return { status, channelTransferNo, packageInfo: o.string('package_info') };
    case 'processing':
      return { status, channelTransferNo };
    case 'success':
      return { status, channelTransferNo, finishedAt: o.date('finished_at') };
    case 'failed':
      return { status, channelTransferNo, reason: o.optionalString('fail_reason') ?? 'transfer failed' };
    case 'cancelled':
      return { status, channelTransferNo, reason: o.optionalString('fail_reason') };
  }
}

/** A transfer as the simulator answers it, checked to be the transfer that was asked about. */
export function parseTransferState(json: unknown, transferNo: string): KnownTransferState {
  const o = WireObject.of('transfer state', json);
  if (o.string('transfer_no') !== transferNo) {
    throw invalid('transfer state', `names transfer ${o.string('transfer_no')}, not ${transferNo}`);
  }
  return transferStateOf(o);
}

export function parseFileUploaded(json: unknown): { fileId: string } {
  return { fileId: WireObject.of('file answer', json).string('file_id') };
}

export function parseApplicationState(json: unknown): ApplicationState {
  const o = WireObject.of('application state', json);
  const status = o.oneOf('status', WIRE_APPLICATION_STATUSES);
  const state: ApplicationState = {
    status,
    channelApplicationNo: o.string('application_no'),
    subMerchantNo: o.optionalString('sub_merchant_no'),
    signUrl: o.optionalString('sign_url'),
    rejectReason: o.optionalString('reject_reason'),
    detail: o.object('detail'),
  };
  if (status === 'finished' && state.subMerchantNo === null) {
    throw invalid('application state', 'a finished application must carry "sub_merchant_no"');
  }
  return state;
}

export function parseSubMerchant(json: unknown): { subMerchantNo: string } {
  const o = WireObject.of('sub-merchant', json);
  o.oneOf('status', ['active'] as const);
  return { subMerchantNo: o.string('sub_merchant_no') };
}

const REFUND_CALLBACK_STATUS = {
  'refund.success': 'success',
  'refund.failed': 'failed',
  'refund.abnormal': 'abnormal',
} as const;

const TRANSFER_CALLBACK_TYPES = ['transfer.success', 'transfer.failed', 'transfer.cancelled'] as const;

/** A callback body, already verified, as a ChannelEvent. */
export function parseCallbackEvent(json: unknown): ChannelEvent {
  const o = WireObject.of('callback', json);
  const type = o.oneOf('type', [
    'payment.paid',
    'refund.success',
    'refund.failed',
    'refund.abnormal',
    ...TRANSFER_CALLBACK_TYPES,
  ] as const);
  if (type === 'payment.paid') {
    return {
      kind: 'payment',
      eventId: o.string('event_id'),
      tradeNo: o.string('trade_no'),
      status: 'paid',
      channelTradeNo: o.string('channel_trade_no'),
      amount: o.amount('amount'),
      currency: o.string('currency'),
      paidAt: o.date('paid_at'),
    };
  }
  if (type === 'transfer.success' || type === 'transfer.failed' || type === 'transfer.cancelled') {
    const state = transferStateOf(o);
    if (type !== `transfer.${state.status}`) {
      throw invalid('callback', `a ${type} callback says the transfer is ${state.status}`);
    }
    const subMerchantNo = o.optionalString('sub_merchant_no');
    return {
      kind: 'transfer',
      eventId: o.string('event_id'),
      transferNo: o.string('transfer_no'),
      state,
      amount: o.amount('amount'),
      ...(subMerchantNo === null ? {} : { subMerchantNo }),
    };
  }
  const reason = o.optionalString('reason');
  return {
    kind: 'refund',
    eventId: o.string('event_id'),
    tradeNo: o.string('trade_no'),
    refundNo: o.string('refund_no'),
    status: REFUND_CALLBACK_STATUS[type],
    channelRefundNo: o.optionalString('channel_refund_no'),
    amount: o.amount('amount'),
    ...(reason === null ? {} : { reason }),
    refundedAt: o.optionalDate('refunded_at'),
  };
}

/** The simulator's error answer, or a description of whatever else came back. */
export function parseErrorBody(status: number, text: string): WireError {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const { error, code } = value as Record<string, unknown>;
      if (typeof error === 'string' && error !== '') {
        return { error, code: typeof code === 'string' ? code : 'unknown' };
      }
    }
  } catch {
    // Not the simulator's JSON: fall through to a generic description.
  }
  return { error: `sandbox answered HTTP ${status}`, code: 'unknown' };
}
