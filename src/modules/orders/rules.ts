/**
 * Order rules of SPEC §3, pure so that the order workflow and the orders service share them:
 * each rule exists once.
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import type { ErrorCode } from '../../platform/errors';

export const ORDER_STATUSES = ['pending', 'paid', 'partially_refunded', 'refunded', 'closed'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
/**
 * SPEC §3.7. `cancelled`: refunded in full before the share was due, nothing shared; `returned`:
 * everything shared came back from the receivers for refunds.
 */
export const PROFIT_SHARING_STATUSES = [
  'none',
  'pending',
  'processing',
  'finished',
  'failed',
  'cancelled',
  'returned',
] as const;
export type ProfitSharingStatus = (typeof PROFIT_SHARING_STATUSES)[number];

/**
 * How a buyer pays (SPEC §3.1); each channel lists the ones it offers in its capabilities.
 * `barcode` (SPEC §14): the cashier scans the code in the buyer's wallet (付款码).
 */
export const PAY_METHODS = ['qr_code', 'jsapi', 'mini_program', 'app', 'h5', 'web', 'barcode'] as const;
export type PayMethod = (typeof PAY_METHODS)[number];

/** What a barcode order's till is answered while the buyer decides (SPEC §14). */
export type BarcodeStatus = 'paid' | 'paying';

/** Why a barcode order closed: the channel refused the code, or durapay reversed the payment. */
export type CloseReason = 'refused' | 'reversed';

/** SPEC §14: how long a barcode order is followed before it is reversed, and the till's answer time. */
export const BARCODE_WAIT_MS = 60_000;
export const BARCODE_ANSWER_MS = 8_000;
/** The gaps between queries of a barcode payment the buyer is confirming; the last one repeats. */
export const BARCODE_POLL_GAPS_MS = [1_000, 2_000, 3_000, 5_000];
/** The gaps between asks to reverse a payment whose reverse got no answer; the last one repeats. */
export const BARCODE_REVERSE_GAPS_MS = [1_000, 2_000, 5_000, 10_000, 30_000];
/**
 * How long a barcode payment's request may still reach the channel after it was sent: its HTTP
 * call outlives the till's answer (the channel's 8 s idle timeout, the SDK's one resend of a cut
 * request; WeChat Pay asks for 15 s before a reverse). A reverse that finds no such payment within
 * this window is asked again, so a payment landing late is reversed, not left with a closed order.
 * Real time, never scaled: the HTTP calls it covers are not.
 */
export const BARCODE_IN_FLIGHT_MS = 30_000;

/** The refusal of a repeated barcode create that carries another buyer code (SPEC §14). */
export const ANOTHER_AUTH_CODE: Refusal = {
  code: 'invalid_param',
  message: 'merchant_order_no already used with another auth_code',
};

export const MAX_AMOUNT = 1_000_000_000_000;
export const DEFAULT_EXPIRE_MINUTES = 30;

export function isPaidStatus(status: OrderStatus): boolean {
  return status === 'paid' || status === 'partially_refunded' || status === 'refunded';
}

/** The status after `refunded` of `amount` has succeeded. */
export function statusAfterRefunds(amount: number, refunded: number): OrderStatus {
  if (refunded <= 0) return 'paid';
  return refunded >= amount ? 'refunded' : 'partially_refunded';
}

/** The parameters that identify a create request; a repeat must match them (SPEC §3.1). */
export interface CreateIdentity {
  amount: number;
  payMethod: string;
  channelCode: string;
  merchantId: string | null;
  profitSharingAmount: number;
  /** A barcode order's: the sha-256 of its buyer code (absent for every other order). */
  authCodeSha256?: string;
}

/** Why a request cannot be done, as the SPEC error it answers. */
export interface Refusal {
  code: ErrorCode;
  message: string;
}

export function sameCreate(a: CreateIdentity, b: CreateIdentity): boolean {
  return (
    a.amount === b.amount &&
    a.payMethod === b.payMethod &&
    a.channelCode === b.channelCode &&
    a.merchantId === b.merchantId &&
    a.profitSharingAmount === b.profitSharingAmount
  );
}

/**
 * A create repeated for an order that exists (SPEC §3.1): refused when its parameters differ or
 * the order has ended; null when the answer is the order as created.
 */
export function repeatCreateRefusal(
  known: { identity: CreateIdentity; status: OrderStatus },
  asked: CreateIdentity,
): Refusal | null {
  if (!sameCreate(known.identity, asked)) {
    return { code: 'invalid_param', message: 'merchant_order_no already used with different parameters' };
  }
  // A barcode order asked again with another code is never a second charge (SPEC §14).
  if ((known.identity.authCodeSha256 ?? null) !== (asked.authCodeSha256 ?? null)) return ANOTHER_AUTH_CODE;
  if (isPaidStatus(known.status)) return { code: 'order_already_paid', message: 'order already paid' };
  if (known.status === 'closed') return { code: 'order_closed', message: 'order closed' };
  return null;
}

/**
 * A barcode create repeated for an order that exists (SPEC §14): the same code joins the order
 * (its answer is where the payment stands), another code or other parameters are refused, and
 * an order that closed answers why it is not paid.
 */
export function barcodeRepeat(
  known: { identity: CreateIdentity; status: OrderStatus; closeReason: CloseReason | null; refusal?: string },
  asked: CreateIdentity,
): Refusal | BarcodeStatus {
  if (!sameCreate(known.identity, asked)) {
    return { code: 'invalid_param', message: 'merchant_order_no already used with different parameters' };
  }
  if ((known.identity.authCodeSha256 ?? null) !== (asked.authCodeSha256 ?? null)) return ANOTHER_AUTH_CODE;
  if (isPaidStatus(known.status)) return 'paid';
  if (known.status === 'closed')
    return barcodeClosed(known.closeReason, known.refusal, known.identity.payMethod === CONTRACT_PAY_METHOD);
  return 'paying';
}

/** What a till is answered of a barcode order that closed: `422 order_not_paid`, saying why. */
export function barcodeClosed(reason: CloseReason | null, channelWords?: string, deduction = false): Refusal {
  if (reason === 'reversed') {
    return {
      code: 'order_not_paid',
      message: 'the payment was reversed: whatever the buyer was charged was given back',
    };
  }
  const what = deduction ? 'the deduction' : "the buyer's code";
  return {
    code: 'order_not_paid',
    message: `the channel refused ${what}${channelWords ? `: ${channelWords}` : ''}`,
  };
}

/** What a create needs of its channel: the pay methods it offers and the largest amount it takes. */
export interface ChannelLimits {
  payMethods: readonly string[];
  maxAmount: number;
}

/**
 * SPEC §3.1: a create names a channel durapay has (`limits` undefined: it has none), one of the
 * channel's pay methods, and an amount within the channel's limit.
 */
export function channelRefusal(
  channelCode: string,
  limits: ChannelLimits | undefined,
  asked: { payMethod: string; amount: number },
): Refusal | null {
  if (!limits) return { code: 'channel_not_support', message: `channel ${channelCode} is not supported` };
  if (!limits.payMethods.includes(asked.payMethod)) {
    return {
      code: 'invalid_pay_method',
      message: `pay_method ${asked.payMethod} is not supported by channel ${channelCode}`,
    };
  }
  if (asked.amount > limits.maxAmount) {
    return { code: 'invalid_amount', message: `amount exceeds the channel's limit of ${limits.maxAmount}` };
  }
  return null;
}

/** SPEC §3.1: the share is part of the order's amount (checked before the merchant is read). */
export function sharingAmountRefusal(sharing: number, amount: number): Refusal | null {
  if (sharing > amount) {
    return { code: 'sharing_amount_exceed', message: 'profit_sharing_amount exceeds amount' };
  }
  return null;
}

/**
 * SPEC §3.1, in this order: a share needs a merchant with receivers, stays within the merchant's
 * `max_ratio` of the amount, and a channel that shares. Nothing to share: nothing to refuse.
 */
export function sharingRefusal(asked: {
  sharing: number;
  amount: number;
  receivers: number;
  maxRatio: number;
  channelCode: string;
  channelShares: boolean;
}): Refusal | null {
  if (asked.sharing <= 0) return null;
  if (asked.receivers === 0) {
    return {
      code: 'sharing_not_config',
      message: 'profit sharing is not configured: the order needs a merchant with receivers',
    };
  }
  const limit = Math.floor(asked.amount * asked.maxRatio);
  if (asked.sharing > limit) {
    return {
      code: 'sharing_fee_exceed',
      message: `profit_sharing_amount exceeds ${limit} (max_ratio ${asked.maxRatio} of amount)`,
    };
  }
  if (!asked.channelShares) {
    return {
      code: 'channel_not_support',
      message: `channel ${asked.channelCode} does not support profit sharing`,
    };
  }
  return null;
}

/**
 * An order for a merchant is made with the merchant's account at the order's channel (SPEC
 * §5.8): without one there, or with one whose authorisation expired, the channel is not asked.
 */
export function merchantAccountRefusal(
  merchantId: string,
  channelCode: string,
  account: { status: string } | null,
): Refusal | null {
  if (!account) {
    return {
      code: 'channel_create_fail',
      message: `merchant ${merchantId} has no account at channel ${channelCode}`,
    };
  }
  if (account.status !== 'active') {
    return {
      code: 'channel_create_fail',
      message: `merchant ${merchantId}'s account at channel ${channelCode} is ${account.status}: authorise it again`,
    };
  }
  return null;
}

/** Why a verified channel callback is not delivered: its outcome in the callback log, and why. */
export interface CallbackRefusal {
  outcome: string;
  message: string;
}

/**
 * SPEC §4: a callback is about an order of the channel that sent it. `named` is how the callback
 * names the order (its trade number, or the channel's), for the refusal.
 */
export function callbackOrderRefusal(
  order: { tradeNo: string; channelCode: string | null } | null,
  asked: { named: string; channelCode: string },
): CallbackRefusal | null {
  if (!order) return { outcome: 'unknown_order', message: `no order ${asked.named}` };
  if (order.channelCode !== asked.channelCode) {
    return {
      outcome: 'channel_mismatch',
      message: `order ${order.tradeNo} is not a ${asked.channelCode} order`,
    };
  }
  return null;
}

/**
 * SPEC §4: what a callback says of its order must be the order's: the sub-merchant (when the
 * channel names one), a payment's amount and currency. A refund's amount is its refund's
 * (refunds' rules); here it must only be a number.
 */
export function callbackEventRefusal(
  order: { amount: number | string; currency: string; subMerchantNo: string | null },
  event:
    | { kind: 'payment'; amount: number; currency: string; subMerchantNo?: string }
    | { kind: 'refund'; amount: number; subMerchantNo?: string },
): CallbackRefusal | null {
  if (event.subMerchantNo !== undefined && order.subMerchantNo !== event.subMerchantNo) {
    return {
      outcome: 'merchant_mismatch',
      message: `sub-merchant ${event.subMerchantNo} is not the order's merchant`,
    };
  }
  if (event.amount !== Number(event.kind === 'payment' ? order.amount : event.amount)) {
    return { outcome: 'amount_mismatch', message: `amount ${event.amount} does not match the order` };
  }
  if (event.kind === 'payment' && event.currency !== order.currency) {
    return { outcome: 'currency_mismatch', message: `currency ${event.currency} does not match the order` };
  }
  return null;
}

/** SPEC §3.4: a paid order cannot be closed; closing a closed one is done already. */
export function closeDecision(status: OrderStatus): 'close' | 'closed' | Refusal {
  if (isPaidStatus(status)) return { code: 'order_already_paid', message: 'order already paid' };
  return status === 'closed' ? 'closed' : 'close';
}

/** SPEC §3.5: only a paid order with something left to refund takes a refund. */
export function refundRefusal(status: OrderStatus): Refusal | null {
  if (status === 'pending') return { code: 'order_not_paid', message: 'order not paid' };
  if (status === 'closed') return { code: 'order_closed', message: 'order closed' };
  if (status === 'refunded') return REFUND_EXCEEDS;
  return null;
}

export const REFUND_EXCEEDS: Refusal = {
  code: 'refund_amount_exceed',
  message: 'refund amount exceeds the refundable amount',
};

/** The polling schedule of SPEC §3.2: 10 s, 30 s, 1 min, 2 min, 5 min, then every 5 min. */
export const PAYMENT_POLL_SCHEDULE_MS = [10_000, 30_000, 60_000, 120_000, 300_000];

/** How long a closed order still accepts a payment the channel reports late (SPEC §3.2). */
export const LATE_PAYMENT_WINDOW_MS = 24 * 3_600_000;

/**
 * How long a refund asks the channel to take part of the share back (a channel may settle a
 * return later: WeChat Pay PROCESSING) before it is refused and the return followed on its own.
 */
export const RETURN_ASK_FOR_MS = 10 * 60_000;

/**
 * SPEC §3.5: a refund is followed (same backoff as a payment) for up to 24 h. The order hands
 * the window to the refund's workflow when it starts it.
 */
export const REFUND_POLL_WINDOW_MS = 24 * 3_600_000;

// A schedule's gaps are read alike by every workflow that polls (refunds and applications too).
export { pollGap } from '../../platform/workflow/schedule';

/**
 * A record's own entry for a key a client chose (a merchant_refund_no): `constructor`,
 * `toString` or `__proto__` must find nothing rather than what every object inherits.
 */
export function ownEntry<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Sets a record's own entry, `__proto__` included (a plain assignment would set the prototype). */
export function setOwnEntry<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A refusal as the failure an update answers with: its SPEC code is the failure's type, never retried. */
export function appFailure(code: ErrorCode, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, code);
}

/**
 * What a failed activity answers a client with. The activity already mapped the channel's
 * failure to a SPEC code (channels/errors.ts, the one map from a channel failure to a code) and
 * made it the failure's type: that code is passed on as it is. A failure that carries none (a
 * timeout of the activity itself, a bug) is answered `fallback`.
 */
export function failureOf(err: unknown, fallback: ErrorCode): Refusal {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type) {
    return { code: cause.type as ErrorCode, message: cause.message };
  }
  return { code: fallback, message: cause instanceof Error ? cause.message : String(cause) };
}

/**
 * A close the channel did not make (SPEC §3.4): channels/errors.ts labels it `channel_timeout`
 * (or `channel_not_support`). A close failure recorded before it did was labelled
 * `channel_create_fail`; it still answers `channel_timeout`. Not a second map: the code an older
 * activity wrote, read as today's map writes it.
 */
export function closeFailure(f: Refusal): Refusal {
  return f.code === 'channel_create_fail' ? { code: 'channel_timeout', message: f.message } : f;
}

/**
 * `pay_method: checkout` (SPEC §15): the order names no channel; its buyer picks one on
 * durapay's hosted page, and the order is made there then.
 */
export const CHECKOUT_PAY_METHOD = 'checkout';

/**
 * A recurring contract's deduction (SPEC §17): made by the contract's workflow, never by an
 * app's create (no channel lists it among its pay methods, so a create that names it is
 * `invalid_pay_method`). It is taken like a barcode payment: asked once, followed by query,
 * reversed when its answer is lost.
 */
export const CONTRACT_PAY_METHOD = 'contract';

/** How long a deduction the channel answered `paying` is followed before it is reversed (unscaled). */
export const DEDUCTION_WAIT_MS = 10 * 60_000;
