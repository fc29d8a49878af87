/**
 * The order workflow's activities, each proxy chosen here once: which profile (timeouts and
 * retries, platform/workflow/definitions.ts) a call runs with, and whether it is a regular or a
 * local activity. Workflow-safe: proxies and types only.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { OrderActivities as Activities } from './activities';
import { activityProfiles, localActivityProfiles } from '../../platform/workflow/definitions';
import type { OrderTimings } from './messages';

/** Calls a client waits for (a close, a refund): the channel's deadline, retried briefly. */
export const channelActivities = proxyActivities<Activities>(activityProfiles.channelCall);
/** Calls nobody waits for (a query, a share, a close at expiry): retried for longer. */
export const backgroundChannelActivities = proxyActivities<Activities>(activityProfiles.channelBackground);
/** Read-model writes. */
export const dbActivities = proxyActivities<Activities>(activityProfiles.dbWrite);

const localBackgroundChannelActivities = proxyLocalActivities<Activities>(
  localActivityProfiles.channelBackground,
);
const localDbActivities = proxyLocalActivities<Activities>(localActivityProfiles.dbWrite);
// Publishing an event makes the notification's first attempt (modules/notifications/service.ts).
const publishActivities = proxyActivities<Activities>(activityProfiles.publish);
const localPublishActivities = proxyLocalActivities<Activities>(localActivityProfiles.publish);

/** The create at the channel and its row in one local activity: a repeat answers from the row. */
export const createAtChannelActivity = proxyLocalActivities<Activities>(
  localActivityProfiles.channelCreate,
).createOrderAtChannel;

/**
 * A `checkout` order's (SPEC §15): its row, and its make at the channel its buyer picked with
 * the row told, each one local activity (a repeat answers from the row).
 */
export const checkoutActivities = {
  record: localDbActivities.recordCheckoutOrder,
  choose: proxyLocalActivities<Activities>(localActivityProfiles.channelCreate).chooseCheckoutChannel,
};

/**
 * A barcode order's calls (SPEC §14): its payment and row in one local activity of one attempt
 * (a repeat of it answers from the row and is reversed, never charged again); its queries while
 * the buyer confirms, one attempt each on the order's own backoff; its reverse, asked until the
 * channel answers (each ask one attempt, its outcome returned, not thrown).
 */
export const barcodeActivities = {
  pay: proxyLocalActivities<Activities>(localActivityProfiles.barcodePay).payBarcodeAtChannel,
  query: proxyActivities<Activities>({ ...activityProfiles.channelCall, retry: { maximumAttempts: 1 } })
    .queryBarcodePayment,
  reverse: proxyActivities<Activities>({ ...activityProfiles.channelCall, retry: { maximumAttempts: 1 } })
    .reverseBarcodePayment,
};

/**
 * Saving the order's state when its run ends idle, and loading it in the run that reopens it
 * (SPEC §7): local, in the task that decides it. Saving repeats harmlessly
 * (the same state again); loading reads.
 */
export const savedStateActivities = {
  save: localDbActivities.saveOrderState,
  load: localDbActivities.loadOrderState,
};

/**
 * Taking a share back: asked until the channel says how it ended, for the order's return window
 * (10 minutes, scaled), then followed on its own.
 */
export const shareReturnActivity = (timings: OrderTimings) =>
  proxyActivities<Activities>({
    ...activityProfiles.channelReturn,
    scheduleToCloseTimeout: timings.returnAskForMs,
  }).returnProfitShare;

/**
 * The calls of recording a payment, as local activities. A local activity runs before its
 * workflow task is recorded, so a task that fails and runs again repeats it: only calls whose
 * repeat has the same effect whatever else arrived meanwhile may be local. A payment the channel
 * reported is a fact, and its event is keyed by the order. Refunds and closing stay regular
 * activities: which of several concurrent refunds fits the order depends on the order the task
 * sees them in, so the channel must hear of a refund only once that decision is recorded.
 */
export const paymentActivities = {
  recordOrderPaid: localDbActivities.recordOrderPaid,
  notifyOrderEvent: localPublishActivities.notifyOrderEvent,
};

/**
 * The calls of closing an order. At expiry they are local activities, in the one workflow task
 * the expiry timer wakes: each repeats harmlessly (the channel closes a closed order again, the
 * write is guarded by the status it moves from, and the event is keyed by the order). A close a
 * merchant asks for records itself with regular ones (its channel call is channelActivities').
 */
export const closeActivities = {
  merchant: {
    recordOrderClosed: dbActivities.recordOrderClosed,
    notifyOrderEvent: publishActivities.notifyOrderEvent,
  },
  expiry: {
    closeChannelPayment: localBackgroundChannelActivities.closeChannelPayment,
    recordOrderClosed: localDbActivities.recordOrderClosed,
    notifyOrderEvent: localPublishActivities.notifyOrderEvent,
  },
};
export type CloseRecording = typeof closeActivities.merchant;
