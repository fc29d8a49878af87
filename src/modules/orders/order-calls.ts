/**
 * The order workflow's activities, each proxy chosen here once: which profile (timeouts and
 * retries, platform/workflow/definitions.ts) a call runs with, and whether it is a regular or a
 * local activity. Workflow-safe: proxies and types only.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { OrderActivities as Activities } from './activities';
import { activityProfiles, localActivityProfiles } from '../../platform/workflow/definitions';
import { pollingOptions } from '../../platform/workflow/polling';
import type { OrderTimings } from './messages';

/** Calls a client waits for (a close, a refund): the channel's deadline, retried briefly. */
export const channelActivities = proxyActivities<Activities>(activityProfiles.channelCall);
/** Calls nobody waits for (a query, a share, a close at expiry): retried for longer. */
export const backgroundChannelActivities = proxyActivities<Activities>(activityProfiles.channelBackground);
/** Read-model writes. */
export const dbActivities = proxyActivities<Activities>(activityProfiles.dbWrite);

const localChannelActivities = proxyLocalActivities<Activities>(localActivityProfiles.channelCall);
const localBackgroundChannelActivities = proxyLocalActivities<Activities>(
  localActivityProfiles.channelBackground,
);
const localDbActivities = proxyLocalActivities<Activities>(localActivityProfiles.dbWrite);
// Publishing an event makes the notification's first attempt (modules/notifications/service.ts).
const publishActivities = proxyActivities<Activities>(activityProfiles.publish);
const localPublishActivities = proxyLocalActivities<Activities>(localActivityProfiles.publish);

/** The create at the channel and its row in one local activity (patches.orderCreateRecordsItself). */
export const createAtChannelActivity = proxyLocalActivities<Activities>(
  localActivityProfiles.channelCreate,
).createOrderAtChannel;

/**
 * Saving the order's state when its run ends idle, and loading it in the run that reopens it
 * (patches.orderEndsWhenIdle): local, in the task that decides it. Saving repeats harmlessly
 * (the same state again); loading reads.
 */
export const savedStateActivities = {
  save: localDbActivities.saveOrderState,
  load: localDbActivities.loadOrderState,
};

/**
 * Taking a share back: asked until the channel says how it ended, for the order's return window
 * (10 minutes, scaled; the profile's own in runs started before), then followed on its own.
 */
export const shareReturnActivity = (timings: OrderTimings) =>
  proxyActivities<Activities>({
    ...activityProfiles.channelReturn,
    ...(timings.returnAskForMs === undefined ? {} : { scheduleToCloseTimeout: timings.returnAskForMs }),
  }).returnProfitShare;

/**
 * The polling activity of a pending order (patches.orderPollsAsActivity): its retries are the
 * backoff, bounded by the order's expiry.
 */
export const paymentPollActivity = (expireAtMs: number, lastGapMs: number) =>
  proxyActivities<Activities>(pollingOptions(expireAtMs, lastGapMs)).awaitChannelPayment;

/**
 * The calls an order makes while it is created and paid (its creation, each poll, and
 * recording a payment), as local activities or, in runs started before them
 * (patches.orderLocalActivities), as regular ones. A local activity runs before its workflow
 * task is recorded, so a task that fails and runs again repeats it: only calls whose repeat has
 * the same effect whatever else arrived meanwhile may be local. The create is one per order and
 * keyed by its trade_no; a query reads; a payment the channel reported is a fact. Refunds and
 * closing stay regular activities: which of several concurrent refunds fits the order depends
 * on the order the task sees them in, so the channel must hear of a refund only once that
 * decision is recorded.
 */
export const paymentActivities = {
  regular: {
    createChannelPayment: channelActivities.createChannelPayment,
    recordOrderCreated: dbActivities.recordOrderCreated,
    queryChannelPayment: backgroundChannelActivities.queryChannelPayment,
    recordOrderPaid: dbActivities.recordOrderPaid,
    notifyOrderEvent: publishActivities.notifyOrderEvent,
  },
  local: {
    createChannelPayment: localChannelActivities.createChannelPayment,
    recordOrderCreated: localDbActivities.recordOrderCreated,
    queryChannelPayment: localBackgroundChannelActivities.queryChannelPayment,
    recordOrderPaid: localDbActivities.recordOrderPaid,
    notifyOrderEvent: localPublishActivities.notifyOrderEvent,
  },
};
export type PaymentActivities = typeof paymentActivities.regular;

/**
 * The calls of closing an order at expiry. Orders the sweeper polls make them as local
 * activities, in the one workflow task their expiry timer wakes: each repeats harmlessly (the
 * channel closes a closed order again, the write is guarded by the status it moves from, and
 * the event is keyed by the order). A close a merchant asks for stays regular.
 */
export const expiryActivities = {
  regular: {
    closeChannelPayment: backgroundChannelActivities.closeChannelPayment,
    recordOrderClosed: dbActivities.recordOrderClosed,
    notifyOrderEvent: publishActivities.notifyOrderEvent,
  },
  local: {
    closeChannelPayment: localBackgroundChannelActivities.closeChannelPayment,
    recordOrderClosed: localDbActivities.recordOrderClosed,
    notifyOrderEvent: localPublishActivities.notifyOrderEvent,
  },
};
export type ExpiryActivities = typeof expiryActivities.regular;
