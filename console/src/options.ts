/**
 * The values the console's filters and forms offer: generated from the console's API document
 * (./api/generated/lists.ts), which makes them from the server's own lists and each channel's
 * declaration; the server's rules decide, these only fill menus.
 */
import type { RESOLUTIONS as RESOLUTION_VALUES } from './api/generated/lists';

export {
  ACCOUNT_FIELDS,
  CHANNELS,
  MERCHANT_STATUSES,
  MISMATCH_CATEGORIES,
  MISMATCH_STATES,
  NOTIFICATION_EVENTS,
  NOTIFICATION_STATUSES,
  ORDER_STATUSES,
  REFUND_STATUSES,
  ROLES,
  RUN_STATUSES,
  TRANSFER_STATUSES,
} from './api/generated/lists';

/** What each way of settling a finding means, in words; a note alone records it `ignored`. */
const RESOLUTION_LABELS: Record<(typeof RESOLUTION_VALUES)[number], string> = {
  ignored: 'Ignored: nothing to correct',
  accepted_channel: "The channel's record is right",
  accepted_durapay: "durapay's record is right",
};

/** How a mismatch may be settled, each with its words, `ignored` first. */
export const RESOLUTIONS = (Object.keys(RESOLUTION_LABELS) as (typeof RESOLUTION_VALUES)[number][]).map(
  (value) => ({ value, label: RESOLUTION_LABELS[value] }),
);
