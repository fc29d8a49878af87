/**
 * The order workflow's messages (SPEC §3, §7): its id, input, updates and signals, shared by the
 * workflow and the code that talks to it. Workflow-safe: no Node built-ins, no I/O.
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';

/** Patch markers of the order workflow (`patched()`); see the platform's note on patches. */
export const patches = {
  /** The order workflow creates, polls and records a payment with local activities. */
  orderLocalActivities: 'order-local-activities',
  /** The order's handlers and steps run one at a time through a FIFO lock (platform/workflow/lock.ts). */
  orderHandlerLock: 'order-handler-lock',
  /**
   * At expiry an order the channel could not be asked to close stays pending and is closed
   * later; it was closed locally, which could close an order the buyer had paid.
   */
  orderExpiryWaitsForChannel: 'order-expiry-waits-for-channel',
  /**
   * A refund whose channel call got no answer stays in flight and is settled by what the channel
   * says when asked; it was recorded as failed, releasing an amount the channel may have refunded.
   */
  refundUnansweredStaysInFlight: 'refund-unanswered-stays-in-flight',
  /**
   * A pending order waits on one polling activity whose retries are the backoff; it woke for a
   * timer and a query at every gap (a workflow task each).
   */
  orderPollsAsActivity: 'order-polls-as-activity',
  /**
   * A pending order is polled by the payment sweeper (modules/orders/sweeper.ts), which signals
   * a payment it finds; its workflow keeps one timer, for expiry.
   */
  orderPollsBySweeper: 'order-polls-by-sweeper',
  /**
   * Refunds and profit sharing are decided against each other by the refund book
   * (refund-book.ts): a share takes at most what is unrefunded, a refund beyond the unshared
   * remainder takes the share back first, abnormal refunds stay counted, and a refund whose row
   * cannot be recorded releases its amount. Before, each was checked alone.
   */
  orderRefundBook: 'order-refund-book',
  /**
   * The create's channel call and its read-model write are one local activity that answers
   * from the order's row when an earlier run of it got that far, so a workflow task that runs
   * again never asks the channel again for an order it has; the order's workflow task timeout
   * covers that activity's whole retry budget.
   */
  orderCreateRecordsItself: 'order-create-records-itself',
  /**
   * A create, close or refund that reaches the order in the same workflow task as a payment
   * applies the payment first. Handlers run before the main loop wakes, so a refund could take
   * the lock first and be refused `order_not_paid` by an order the read model already showed
   * paid (its payment recorded by a task that then died with its worker).
   */
  orderHandlersApplyQueuedPayments: 'order-handlers-apply-queued-payments',
  /**
   * A run started before the refund book takes one from its totals at its next refund,
   * settlement or share, as a run that continues as new does at its start: an order paid before
   * must not pay out more than the buyer paid either (a share and a refund each checked alone).
   */
  orderAdoptsBook: 'order-adopts-refund-book',
  /**
   * A refund to a run started before the refund book applies a payment that reached the order in
   * the same workflow task first, as a booked run's refund does (orderHandlersApplyQueuedPayments):
   * it was refused `order_not_paid` by an order the read model already showed paid, and the
   * order adopted the book only at its next refund. A marker of its own: a run may hold the
   * other one from a create or close, and its refunds must replay as they were decided.
   */
  orderPreBookRefundsApplyQueuedPayments: 'order-pre-book-refunds-apply-queued-payments',
  /**
   * A paid order with nothing left to wait for (shared, no refund in flight) saves its state to
   * the database and ends its run after the idle period (SPEC §7); the next request for it
   * starts a new run of the same id (update-with-start) that loads that state. Runs that reached
   * their paid phase before wait as they did (a year at a time).
   */
  orderEndsWhenIdle: 'order-ends-when-idle',
  /**
   * A run started by this code asks this one patch, first, and it stands for every patch above:
   * each of those recorded a marker and an upsert of TemporalChangeVersion in every new run
   * (12 of the 36 events of a paid order that ends idle). Runs started before ask each one where
   * they did (OrderActor.has, for the patches OrderPatch lists). A patch added later is asked
   * with `patched()` in every run, until a new baseline stands for it.
   */
  orderBaseline: 'order-baseline-2026-11',
} as const;

/**
 * The patches a run that holds patches.orderBaseline takes without asking (OrderActor.has): those
 * made before the baseline, listed by hand. A patch added later must not join this list: a
 * baseline run started before that patch's code must replay without it, so it is asked with
 * `patched()` in every run, until a new baseline stands for it.
 */
export type OrderPatch =
  | typeof patches.orderLocalActivities
  | typeof patches.orderHandlerLock
  | typeof patches.orderExpiryWaitsForChannel
  | typeof patches.refundUnansweredStaysInFlight
  | typeof patches.orderPollsAsActivity
  | typeof patches.orderPollsBySweeper
  | typeof patches.orderRefundBook
  | typeof patches.orderCreateRecordsItself
  | typeof patches.orderHandlersApplyQueuedPayments
  | typeof patches.orderAdoptsBook
  | typeof patches.orderPreBookRefundsApplyQueuedPayments
  | typeof patches.orderEndsWhenIdle;

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
   * follows the return in the background (10 minutes, scaled; absent in runs started before).
   */
  returnAskForMs?: number;
  /**
   * How long a paid order with nothing left to wait for stays open before its run ends
   * (10 minutes, scaled; absent in runs started before: they wait a year at a time).
   */
  idleEndMs?: number;
}

export interface OrderInput {
  appId: string;
  merchantOrderNo: string;
  /** The trade_no this run will use if it creates the order. */
  tradeNo: string;
  channelCode: string;
  currency: string;
  /** Where the channel posts callbacks. */
  callbackUrl: string;
  createdAt: string;
  timings: OrderTimings;
  /**
   * A run that reopens an order whose last run ended idle (patches.orderEndsWhenIdle): it loads
   * the order's state from the database before it takes any request.
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
  /** The merchant's channel account the order is made with (absent in older histories: none). */
  channelAccountId?: number | null;
  /**
   * Profit-sharing receivers with weights; empty without profit sharing. `returnable`: the
   * channel can take a share back from this receiver (absent in older histories: it cannot).
   */
  receivers: { type: string; account: string; name?: string; weight: number; returnable?: boolean }[];
  /** How the channel takes a share back for a refund (ProfitSharingPort.returns); absent: never. */
  shareReturns?: 'separate' | 'with_refund';
  extra: Record<string, unknown> | null;
}

export interface CreateOrderResult {
  trade_no: string;
  pay_credential: Record<string, unknown>;
  is_idempotent: boolean;
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
export const refundOrderUpdate = defineUpdate<RefundResult, [RefundRequest]>('refundOrder');
export const paymentSignal = defineSignal<[PaymentSignal]>('paymentResult');
export const refundSettledSignal = defineSignal<[RefundSettledSignal]>('refundSettled');
