/**
 * Names shared by the API, the worker and the workflows: workflow ids, task queue, search
 * attributes. Deterministic and dependency-free so that both workflow code and Node code
 * may import it.
 */
import {
  defineSearchAttributeKey,
  SearchAttributeType,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/common';
import { defineSignal, defineUpdate } from '@temporalio/workflow';

export const DEFAULT_TASK_QUEUE = 'durapay';

/** The custom search attributes of SPEC §7, all Keyword. */
export const searchAttributes = {
  AppId: defineSearchAttributeKey('AppId', SearchAttributeType.KEYWORD),
  TradeNo: defineSearchAttributeKey('TradeNo', SearchAttributeType.KEYWORD),
  MerchantOrderNo: defineSearchAttributeKey('MerchantOrderNo', SearchAttributeType.KEYWORD),
  MerchantId: defineSearchAttributeKey('MerchantId', SearchAttributeType.KEYWORD),
  ChannelCode: defineSearchAttributeKey('ChannelCode', SearchAttributeType.KEYWORD),
  BizStatus: defineSearchAttributeKey('BizStatus', SearchAttributeType.KEYWORD),
} as const;

export const SEARCH_ATTRIBUTE_KEYS = Object.values(searchAttributes);

/**
 * Named activity option profiles (STYLE): explicit timeouts and retries for each kind of call.
 * Business failures are non-retryable ApplicationFailures whose type is the SPEC error code.
 */
export const activityProfiles = {
  /** A channel call a client is waiting for: short, at most one retry of an unreachable channel. */
  channelCall: {
    startToCloseTimeout: '8 seconds',
    retry: { maximumAttempts: 2, initialInterval: '200 milliseconds' },
  },
  /** A channel call nobody waits on (polling, closing at expiry, profit sharing). */
  channelBackground: {
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 3, initialInterval: '1 second' },
  },
  /** A read-model write: retried until the database answers. */
  dbWrite: {
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
  },
  /** One notification attempt: the HTTP deadline plus its database writes. */
  notifyDelivery: {
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
  },
} as const satisfies Record<string, ActivityOptions>;

/**
 * The same profiles for local activities: run by the worker inside the workflow task that
 * schedules them, recorded as markers, without a round trip through the server's task queues.
 * A create becomes one workflow task instead of three plus two activity tasks, a poll one
 * instead of two plus one (measured with `npm run bench`). A failed workflow task runs its local
 * activities again, so only calls whose repeat changes nothing may use them (see order.ts).
 * Longer retries than `localRetryThreshold` wait on a durable timer.
 */
export const localActivityProfiles = {
  channelCall: { ...activityProfiles.channelCall, localRetryThreshold: '10 seconds' },
  channelBackground: { ...activityProfiles.channelBackground, localRetryThreshold: '10 seconds' },
  dbWrite: { ...activityProfiles.dbWrite, localRetryThreshold: '10 seconds' },
} as const satisfies Record<string, LocalActivityOptions>;

/**
 * Patch markers (`patched()`): a workflow started before a change replays along its old path.
 * Each names the change; remove one only when no workflow that lacks it can still be running.
 */
export const patches = {
  /** The order workflow creates, polls and records a payment with local activities. */
  orderLocalActivities: 'order-local-activities',
  /** The notification workflow opens its attempt series in a local activity. */
  notificationLocalSeries: 'notification-local-series',
  /** The order's handlers and steps run one at a time through a FIFO lock (src/workflows/lock.ts). */
  orderHandlerLock: 'order-handler-lock',
  /** An application's submits run one at a time through the same lock. */
  applicationHandlerLock: 'application-handler-lock',
  /**
   * At expiry an order the channel could not be asked to close stays pending and is closed
   * later; it was closed locally, which could close an order the buyer had paid.
   */
  orderExpiryWaitsForChannel: 'order-expiry-waits-for-channel',
} as const;

export const workflowIds = {
  diagnostic: (runId: string) => `diagnostic:${runId}`,
  benchFloor: (runId: string) => `bench-floor:${runId}`,
  notification: (notificationId: string) => `notification:${notificationId}`,
  order: (appId: string, merchantOrderNo: string) => `order:${appId}:${merchantOrderNo}`,
  refund: (refundNo: string) => `refund:${refundNo}`,
  merchantApplication: (applicationId: string) => `merchant-application:${applicationId}`,
};

// ---- Merchant applications (SPEC §5.6–5.7) ----

export interface MerchantApplicationInput {
  appId: string;
  applicationId: string;
  merchantId: string;
  channelCode: string;
  /** Gaps between audit polls, already scaled; the last one repeats. */
  pollGapsMs: number[];
  /** How long to keep polling before giving up (30 days, scaled). */
  pollForMs: number;
}

/** Submits the application at the channel; answers once the channel has accepted it. */
export const submitApplicationUpdate = defineUpdate<{ application_id: string }, []>('submitApplication');

// ---- Orders (SPEC §3, §7) ----

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
}

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
  /** Profit-sharing receivers with weights; empty without profit sharing. */
  receivers: { type: string; account: string; name?: string; weight: number }[];
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
  status: 'processing' | 'success' | 'failed';
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
  status: 'success' | 'failed';
  amount: number;
}

export interface RefundSignal {
  status: 'success' | 'failed';
  channelRefundNo: string | null;
  refundedAt: string | null;
  reason: string | null;
}

export interface RefundWorkflowInput {
  appId: string;
  tradeNo: string;
  refundNo: string;
  channelCode: string;
  amount: number;
  orderWorkflowId: string;
  pollGapsMs: number[];
  pollForMs: number;
}

export const createOrderUpdate = defineUpdate<CreateOrderResult, [CreateOrderRequest]>('createOrder');
export const closeOrderUpdate = defineUpdate<null, []>('closeOrder');
export const refundOrderUpdate = defineUpdate<RefundResult, [RefundRequest]>('refundOrder');
export const paymentSignal = defineSignal<[PaymentSignal]>('paymentResult');
export const refundSettledSignal = defineSignal<[RefundSettledSignal]>('refundSettled');
export const refundResultSignal = defineSignal<[RefundSignal]>('refundResult');

export interface NotificationWorkflowInput {
  notificationId: string;
  appId: string;
  /** Waits between attempts, already scaled; attempts = gaps + 1. */
  gapsMs: number[];
}

export type NotificationOutcome = 'delivered' | 'failed';

/** Starts a fresh attempt series now (POST /api/v1/notifications/{id}/resend). */
export const resendNotificationSignal = defineSignal('resendNotification');

/** The benchmark's no-op update (see bench-floor.ts): answered at once. */
export const benchFloorUpdate = defineUpdate<{ ok: true }, []>('benchFloor');

export interface DiagnosticInput {
  runId: string;
  /** How long the workflow waits between its two steps, already scaled. */
  pauseMs: number;
}

export interface DiagnosticResult {
  runId: string;
  steps: number[];
  insertedSteps: number[];
}
