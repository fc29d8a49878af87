/**
 * What every module's workflows share: the task queue, the search attributes of SPEC §7 and the
 * named activity option profiles. Each module's own workflow ids, inputs, updates, signals and
 * patch markers live in its messages.ts. Deterministic and dependency-free so that both
 * workflow code and Node code may import it.
 *
 * Patch markers (`patched()`): a workflow started before a change replays along its old path.
 * Each names the change; remove one only when no workflow that lacks it can still be running.
 */
import {
  defineSearchAttributeKey,
  SearchAttributeType,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/common';

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

/** The workflow types a durapay worker serves in production (src/workflows/index.ts exports each). */
export const WORKFLOW_TYPES = [
  'orderWorkflow',
  'refundWorkflow',
  'merchantApplicationWorkflow',
  'notificationWorkflow',
  'callbackRetentionWorkflow',
  'reconciliationWorkflow',
  'transferWorkflow',
  'complaintWorkflow',
  'contractWorkflow',
] as const;

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
  /**
   * A channel call that moves money and is sent once whatever happens (a transfer, SPEC §11): one
   * attempt; an answer that does not come is not asked for again but followed by query.
   */
  channelOnce: {
    startToCloseTimeout: '20 seconds',
    retry: { maximumAttempts: 1 },
  },
  /** A channel call nobody waits on (polling, closing at expiry, profit sharing). */
  channelBackground: {
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 3, initialInterval: '1 second' },
  },
  /**
   * Waiting on a channel (platform/polling.ts): each attempt sets its own retry delay, the next
   * gap of the schedule; this policy only spaces attempts that died without an answer (a worker
   * lost mid-query), which are noticed after the start-to-close timeout and sent again soon.
   * Bounded by a schedule-to-close timeout set per call.
   */
  channelPolling: {
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  },
  /**
   * Taking part of a profit share back before a refund (SPEC §3.7): a refund waits on it, so it
   * is asked until the channel says how it ended (each attempt follows a PROCESSING answer for
   * a while), for up to 10 minutes (the order's scaled return window); past that the refund is
   * refused and the order follows the return on its own until the channel says how it ended.
   */
  channelReturn: {
    startToCloseTimeout: '30 seconds',
    scheduleToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  },
  /**
   * A read-model write: retried until the database answers. A write the database refuses for
   * good (a constraint, a check, a type) fails at once instead
   * (activities/permanent-database-errors.ts).
   */
  dbWrite: {
    startToCloseTimeout: '10 seconds',
    retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
  },
  /**
   * A write that also publishes a merchant notification, whose first attempt the publisher
   * makes at once: the HTTP deadline (NOTIFY_TIMEOUT_MS, at most 60 s) plus the writes.
   */
  publish: {
    startToCloseTimeout: '90 seconds',
    retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
  },
  /**
   * Housekeeping over a table (raw callbacks past their retention): batch after batch in one
   * attempt, heartbeating after each, so a worker lost mid-pass is noticed within a minute and
   * another attempt goes on with what is left. Tried again for most of a day; by then the
   * schedule's next run takes over.
   */
  housekeeping: {
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: '1 minute',
    scheduleToCloseTimeout: '20 hours',
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
  },
  /**
   * A day's statement (SPEC §10): downloaded, kept and read into rows in one attempt of up to
   * an hour, heartbeating after each batch of lines; a worker lost on the way is noticed within
   * a minute and the next attempt reads the statement again from the start. Tried a few times
   * over about half an hour; past that the run fails visibly and is started again by hand.
   */
  statement: {
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: '1 minute',
    retry: {
      initialInterval: '10 seconds',
      backoffCoefficient: 2,
      maximumInterval: '5 minutes',
      maximumAttempts: 5,
    },
  },
  /**
   * Matching a day's statement against the books and recording the outcome (SPEC §10): SQL over
   * up to a million lines in one transaction, and a notification per finding. An attempt is given
   * an hour, so that a slow one is never run again beside itself; a failed one is tried twice more.
   */
  statementMatch: {
    startToCloseTimeout: '1 hour',
    retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumAttempts: 3 },
  },
  /**
   * Repairing a day's lost payments (SPEC §10): each is confirmed by one query at its channel
   * first; a channel that does not answer is asked again on this backoff, for about four
   * minutes, after which what is left stays an open finding for a person (or a run started again).
   */
  statementRepair: {
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '1 minute',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 8,
    },
  },
  /** One notification attempt: the HTTP deadline (at most 60 s) plus its database writes. */
  notifyDelivery: {
    startToCloseTimeout: '90 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
  },
} as const satisfies Record<string, ActivityOptions>;

/**
 * The workflow task timeout of an order (SPEC §3.1: N identical creates, one channel call). A
 * local activity runs inside its workflow task and is recorded only when the task completes: a
 * task that times out is run again, local activities and all. The order's create (at most 17 s
 * with its retry, localActivityProfiles.channelCreate) therefore ends well inside its task — 13 s
 * to spare for a loaded worker to complete it — and the SDK never has to heartbeat the task
 * around it (it would at 80 % of the timeout, 24 s). A task that still times out (a worker
 * stalled for longer) finds the order's row on its second run and does not ask the channel again.
 * The cost: a worker that dies in the middle of an order's task is noticed after 30 s, not 10 s.
 */
export const ORDER_WORKFLOW_TASK_TIMEOUT = '30 seconds';

/**
 * The same profiles for local activities: run by the worker inside the workflow task that
 * schedules them, recorded as markers, without a round trip through the server's task queues.
 * A create becomes one workflow task instead of three plus two activity tasks, a poll one
 * instead of two plus one (measured with `npm run bench`). A failed workflow task runs its local
 * activities again, so only calls whose repeat changes nothing may use them (see modules/orders/order-calls.ts).
 * Longer retries than `localRetryThreshold` wait on a durable timer.
 */
export const localActivityProfiles = {
  channelCall: { ...activityProfiles.channelCall, localRetryThreshold: '10 seconds' },
  /**
   * An order's create at its channel (with its read-model write): two attempts of at most 8 s
   * (the channel's deadline) 200 ms apart, bounded as a whole so that it always ends inside
   * its workflow task (ORDER_WORKFLOW_TASK_TIMEOUT).
   */
  channelCreate: {
    ...activityProfiles.channelCall,
    scheduleToCloseTimeout: '17 seconds',
    localRetryThreshold: '10 seconds',
  },
  /**
   * A barcode payment at its channel with its read-model write (SPEC §14): one attempt, within
   * the till's answer time (BARCODE_ANSWER_MS, 8 s). A payment asked and not answered is never
   * asked again: whether the buyer was charged is unknown, and the order reverses it.
   */
  barcodePay: {
    startToCloseTimeout: '8 seconds',
    retry: { maximumAttempts: 1 },
  },
  channelBackground: { ...activityProfiles.channelBackground, localRetryThreshold: '10 seconds' },
  dbWrite: { ...activityProfiles.dbWrite, localRetryThreshold: '10 seconds' },
  publish: { ...activityProfiles.publish, localRetryThreshold: '10 seconds' },
} as const satisfies Record<string, LocalActivityOptions>;
