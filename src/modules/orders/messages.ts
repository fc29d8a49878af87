/**
 * The order workflow's messages (SPEC §3, §7): its id, input, updates and signals, shared by the
 * workflow and the code that talks to it. Workflow-safe: no Node built-ins, no I/O.
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * Patch markers of the order workflow (`patched()`); see docs/operations.md, "Retiring a
 * workflow version".
 */
export const patches = {
  /**
   * Every run of 1.0 asks this one patch, first: it stands for every change made before the
   * release. A run without it was started by a build before 1.0, which this code does not
   * replay (OrderActor refuses it by name). A patch added later is asked with `patched()` in
   * every run, until a new baseline stands for it.
   */
  orderBaseline: 'order-baseline-2026-11',
} as const;

export const orderWorkflowId = (appId: string, merchantOrderNo: string) =>
  `order:${appId}:${merchantOrderNo}`;

/**
 * The id of the workflow that follows a refund the order has made (modules/refunds), which the
 * order starts as its child: named here, where the order reaches it without importing refunds.
 */
export const refundWorkflowId = (refundNo: string) => `refund:${refundNo}`;

/** Durations an order waits, already scaled by DURAPAY_TIME_SCALE. */
export interface OrderTimings {
  /** Gaps between channel queries while pending; the last one repeats. */
  pollGapsMs: number[];
  /** From creation to expiry: expire_minutes, scaled. */
  expireAfterMs: number;
  /** From payment to profit sharing. */
  profitShareDelayMs: number;
  /** Refund polling: gaps and how long to keep trying. */
  refundPollGapsMs: number[];
  refundPollForMs: number;
  /** After closing, how long a late payment is still taken (and flagged for review). */
  latePaymentWindowMs: number;
  /**
   * How long a refund asks the channel to take part of the share back before it gives up and
   * follows the return in the background (10 minutes, scaled).
   */
  returnAskForMs: number;
  /** How long a paid order with nothing left to wait for stays open before its run ends (10 minutes, scaled). */
  idleEndMs: number;
  /** A barcode order's (SPEC §14); absent for every other order. */
  barcode?: BarcodeTimings;
}

/** How a barcode order is followed (SPEC §14), scaled but for the till's answer time. */
export interface BarcodeTimings {
  /** How long a payment the buyer is confirming is followed before it is reversed (60 s). */
  waitMs: number;
  /** How long the create waits for the buyer before it answers `paying` (8 s, below the API's deadline). */
  answerMs: number;
  /** Gaps between queries while the buyer confirms; the last one repeats. */
  pollGapsMs: number[];
  /** Gaps between asks of a reverse the channel did not answer or asked to repeat; the last repeats. */
  reverseGapsMs: number[];
  /**
   * After the payment was asked, how long a reverse that finds no such payment is asked again
   * rather than taken (BARCODE_IN_FLIGHT_MS); absent in runs started before it, taken at once there.
   */
  inFlightMs?: number;
}

export interface OrderInput {
  appId: string;
  merchantOrderNo: string;
  /** The trade_no this run will use if it creates the order. */
  tradeNo: string;
  /**
   * The order's channel; empty for a `checkout` order, whose buyer picks one on the hosted page
   * (SPEC §15): the run keeps the channel chosen in its state (OrderActor.channelCode).
   */
  channelCode: string;
  currency: string;
  /** Where the channel posts callbacks. */
  callbackUrl: string;
  createdAt: string;
  timings: OrderTimings;
  /**
   * A run that reopens an order whose last run ended idle (SPEC §7): it loads the order's state
   * from the database before it takes any request.
   */
  resume?: true;
}

/**
 * What a reopened run finds (SPEC §7): `ended` when the order's last run saved no state (it
 * ended closed, failed, or before runs saved their state), for the caller to read the read
 * model; `unrestorable` when the saved state is not the read model's (a run that ended without
 * saving its last changes), which an operator must look at.
 */
export const ORDER_RUN_ENDED = 'order_run_ended';

/** One create request (POST /api/v1/pay/unified-order), already validated. */
export interface CreateOrderRequest {
  payMethod: string;
  amount: number;
  subject: string;
  notifyUrl: string;
  expireMinutes: number;
  profitSharingAmount: number;
  merchantId: string | null;
  subMerchantNo: string | null;
  /** The merchant's channel account the order is made with (null or absent: none). */
  channelAccountId?: number | null;
  /**
   * Profit-sharing receivers with weights; empty without profit sharing. `returnable`: the
   * channel can take a share back from this receiver (absent: it cannot).
   */
  receivers: { type: string; account: string; name?: string; weight: number; returnable?: boolean }[];
  /** How the channel takes a share back for a refund (ProfitSharingPort.returns); absent: never. */
  shareReturns?: 'separate' | 'with_refund';
  extra: Record<string, unknown> | null;
  /**
   * A barcode order's (SPEC §14): the buyer's code (sent to the channel once, never kept in the
   * order's state, which keeps its hash), and the till and shop.
   */
  barcode?: {
    authCode?: string;
    authCodeSha256: string;
    deviceId: string | null;
    storeId: string | null;
    /** A contract's deduction (SPEC §17), taken as a barcode payment is: the contract it is made under. */
    contract?: { contractNo: string; channelContractId: string };
  };
  /** The payment link a buyer made the order through on the hosted checkout (SPEC §15). */
  paymentLinkId?: string;
  /** The merchant's standing code a buyer paid at, and the note the buyer left (SPEC §15). */
  standingCodeId?: string;
  buyerNote?: string;
  /** A `checkout` order's (SPEC §15): the hosted page its buyer pays on. */
  checkoutUrl?: string;
}

/**
 * A `checkout` order's buyer picked a channel on the hosted page (SPEC §15): the order is made
 * there once, with what the channel needs of the buyer (`openid`, `buyer_id`, the client's IP).
 */
export interface ChooseChannelRequest {
  channelCode: string;
  /** How the buyer pays at the channel: `jsapi` in its wallet, `h5` in any other browser. */
  payMethod: 'jsapi' | 'h5';
  currency: string;
  callbackUrl: string;
  extra: Record<string, string>;
  /** Who the buyer is at the channel (the `openid` or `buyer_id`); absent for H5. */
  payer?: string;
  subMerchantNo: string | null;
  channelAccountId: number | null;
}

/** When an order of the run expires: its creation plus its expire_minutes, as an ISO instant. */
export function expireAtOf(input: OrderInput, expireMinutes: number): string {
  return new Date(Date.parse(input.createdAt) + expireMinutes * 60_000).toISOString();
}

/** The order's row in the read model as its create records it (NewOrder, less the channel's answer). */
export function orderRowOf(input: OrderInput, tradeNo: string, req: CreateOrderRequest, expireAt: string) {
  return {
    tradeNo,
    appId: input.appId,
    merchantOrderNo: input.merchantOrderNo,
    merchantId: req.merchantId,
    subMerchantNo: req.subMerchantNo,
    channelAccountId: req.channelAccountId ?? null,
    channelCode: input.channelCode === '' ? null : input.channelCode,
    payMethod: req.payMethod,
    amount: req.amount,
    currency: input.currency,
    subject: req.subject,
    notifyUrl: req.notifyUrl,
    expireTime: expireAt,
    profitSharingAmount: req.profitSharingAmount,
    extra: req.extra,
    ...(req.paymentLinkId ? { paymentLinkId: req.paymentLinkId } : {}),
    ...(req.standingCodeId ? { standingCodeId: req.standingCodeId } : {}),
    ...(req.buyerNote ? { buyerNote: req.buyerNote } : {}),
    createdAt: input.createdAt,
  };
}

export interface CreateOrderResult {
  trade_no: string;
  pay_credential: Record<string, unknown>;
  is_idempotent: boolean;
  /** A barcode order's: `paid`, or `paying` while the buyer confirms (SPEC §14). */
  status?: 'paid' | 'paying';
}

export interface RefundRequest {
  refundNo: string;
  amount: number;
  reason: string | null;
  notifyUrl: string | null;
  merchantRefundNo: string | null;
}

export interface RefundResult {
  refund_no: string;
  trade_no: string;
  refund_amount: number;
  status: 'processing' | 'success' | 'failed' | 'abnormal';
  channel_refund_no: string | null;
}

/** A payment result from a channel callback, delivered to the order's workflow. */
export interface PaymentSignal {
  status: 'paid' | 'closed';
  channelTradeNo: string | null;
  paidAt: string | null;
  amount: number;
}

export interface RefundSettledSignal {
  refundNo: string;
  /** `abnormal`: the money left the order; a later `success` of the same refund changes no amount. */
  status: 'success' | 'failed' | 'abnormal';
  amount: number;
}

export const createOrderUpdate = defineUpdate<CreateOrderResult, [CreateOrderRequest]>('createOrder');
export const closeOrderUpdate = defineUpdate<null, []>('closeOrder');
export const chooseChannelUpdate = defineUpdate<CreateOrderResult, [ChooseChannelRequest]>('chooseChannel');
export const refundOrderUpdate = defineUpdate<RefundResult, [RefundRequest]>('refundOrder');
export const paymentSignal = defineSignal<[PaymentSignal]>('paymentResult');
export const refundSettledSignal = defineSignal<[RefundSettledSignal]>('refundSettled');
/**
 * An operator's request that a paid order's run continue as new, carrying its state, once no
 * handler runs: a run that outlives the code it started on moves to the code deployed now
 * (docs/operations.md, "Retiring a workflow version").
 */
export const moveOnSignal = defineSignal<[]>('moveOn');
