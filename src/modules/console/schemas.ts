import Joi from 'joi';
import { createMerchantCodeSchema, createPaymentLinkSchema } from '../checkout';
import { listComplaintsQuery, refundComplaintSchema, replyComplaintSchema } from '../complaints';
import { ACCOUNT_KINDS, MERCHANT_STATUSES } from '../merchants';
import { NOTIFICATION_EVENTS, NOTIFICATION_STATUSES } from '../notifications';
import { MAX_AMOUNT, ORDER_STATUSES } from '../orders';
import { MISMATCH_STATES, RECONCILIATION_CATEGORIES, RESOLUTIONS, RUN_STATUSES } from '../reconciliation';
import { REFUND_STATUSES, abnormalRefundSchema } from '../refunds';
import { TRANSFER_STATUSES } from '../transfers';

// The console's JSON API (docs/console.md): its list filters and action bodies. Validated as the
// API validates (platform/http/validation.ts): no type coercion, unknown keys refused, the first
// problem a `400 invalid_param` whose message names the field. Query values are texts.

const text = (max = 64) => Joi.string().min(1).max(max);

/** An RFC 3339 instant with its offset (`2026-01-31T16:00:00Z`, `2026-02-01T00:00:00+08:00`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
const instant = Joi.string()
  .pattern(RFC3339)
  .custom((value: string, helpers) =>
    Number.isNaN(Date.parse(value)) ? helpers.error('string.pattern.base') : value,
  )
  .messages({ 'string.pattern.base': '{{#label}} must be an RFC 3339 instant, e.g. 2026-01-31T16:00:00Z' });

/** A whole number of fen in a query (a text of digits). */
const amount = Joi.string()
  .pattern(/^\d{1,13}$/)
  .custom((value: string, helpers) =>
    Number(value) > MAX_AMOUNT ? helpers.error('string.pattern.base') : value,
  )
  .messages({ 'string.pattern.base': `{{#label}} must be a whole number of fen from 0 to ${MAX_AMOUNT}` });

/** Every list's paging (docs/console.md: `limit` 1–100, `after` the `next` of the page before). */
export const paging = {
  limit: Joi.string()
    .pattern(/^(100|[1-9]\d?)$/)
    .messages({ 'string.pattern.base': '{{#label}} must be a whole number from 1 to 100' }),
  after: Joi.string().min(1).max(512),
};

export type { Paging } from '../../platform/http/keyset';

export const listOrdersQuery = Joi.object({
  trade_no: text(32),
  merchant_order_no: text(),
  merchant_id: text(),
  app_id: text(32),
  status: Joi.string().valid(...ORDER_STATUSES),
  channel_code: text(32),
  from: instant,
  to: instant,
  min_amount: amount,
  max_amount: amount,
  needs_refund_review: Joi.string().valid('true'),
  ...paging,
});

export const listRefundsQuery = Joi.object({
  refund_no: text(32),
  trade_no: text(32),
  app_id: text(32),
  status: Joi.string().valid(...REFUND_STATUSES),
  from: instant,
  to: instant,
  ...paging,
});

export const listTransfersQuery = Joi.object({
  transfer_no: text(32),
  app_id: text(32),
  status: Joi.string().valid(...TRANSFER_STATUSES),
  channel_code: text(32),
  from: instant,
  to: instant,
  ...paging,
});

export const listNotificationsQuery = Joi.object({
  status: Joi.string().valid(...NOTIFICATION_STATUSES),
  trade_no: text(32),
  refund_no: text(32),
  app_id: text(32),
  event: Joi.string().valid(...NOTIFICATION_EVENTS),
  ...paging,
});

export const listMerchantsQuery = Joi.object({
  merchant_id: text(),
  status: Joi.string().valid(...MERCHANT_STATUSES),
  app_id: text(32),
  ...paging,
});

/** `GET /merchants/{merchant_id}`: which app's, when more than one app has a merchant of that id. */
export const merchantQuery = Joi.object({ app_id: text(32) });

export const listRunsQuery = Joi.object({
  channel_code: text(32),
  bill_date: Joi.string()
    .pattern(/^\d{4}-\d{2}-\d{2}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be a calendar date YYYY-MM-DD' }),
  status: Joi.string().valid(...RUN_STATUSES),
  ...paging,
});

export const listMismatchesQuery = Joi.object({
  category: Joi.string().valid(...RECONCILIATION_CATEGORIES),
  // The finding's `state` (docs/console.md calls the filter `status`).
  status: Joi.string().valid(...MISMATCH_STATES),
  ...paging,
});

export const appsQuery = Joi.object(paging);

export const overviewQuery = Joi.object({});

/** The actions that take no fields: `{}`, or no body at all. */
export const emptyBody = Joi.object({}).required();

export const refundBody = Joi.object({
  // A refund from the console has a number of its own kind (console-<uuid>, one per refund the
  // page opens), apart from the numbers an app gives its own refunds.
  merchant_refund_no: text()
    .pattern(/^console-[A-Za-z0-9_-]{1,56}$/)
    .required()
    .messages({
      'string.pattern.base': '{{#label}} must start with console- (the console makes one per refund)',
    }),
  amount: Joi.number().integer().min(1).max(MAX_AMOUNT).required(),
  reason: Joi.string().allow('').max(256),
}).required();

/** The body of `POST /api/v1/pay/refund/abnormal`, the refund named by the path instead. */
export const abnormalBody = abnormalRefundSchema.keys({ refund_no: Joi.forbidden() });

export const resolveBody = Joi.object({
  note: Joi.string().min(1).max(1000).required(),
  // What was decided; a note alone records the finding `ignored` (it moves no money either way).
  resolution: Joi.string().valid(...RESOLUTIONS),
}).required();

/** The channel an attach is for, read before the channel's own fields are. */
export const attachTarget = Joi.object({
  channel_code: Joi.string()
    .valid(...Object.keys(ACCOUNT_KINDS))
    .required(),
  app_id: text(32),
})
  .unknown(true)
  .required();

/** The console's payment links (SPEC §15): every app's, or one app's, newest first. */
export const listLinksQuery = Joi.object({
  app_id: text(32),
  status: Joi.string().valid('active', 'deactivated'),
  merchant_id: text(64),
  ...paging,
});

/** A merchant's standing codes: the merchant's app, since merchant ids repeat across apps. */
export const listCodesQuery = Joi.object({ app_id: text(32).required() });

/**
 * A link an operator makes: the API's fields for the app named, `merchant_link_no` made up
 * when left out (the console's own `console-…` number).
 */
export const consoleLinkBody = createPaymentLinkSchema
  .keys({
    app_id: text(32).required(),
    merchant_link_no: createPaymentLinkSchema.extract('merchant_link_no').optional(),
  })
  .required();

/** A code an operator makes for a merchant of the app named: the API's fields. */
export const consoleCodeBody = createMerchantCodeSchema.keys({ app_id: text(32).required() }).required();

/** A change whose target belongs to the app named (`app_id`), and nothing else. */
export const appBody = Joi.object({ app_id: text(32).required() }).required();

/** The console's complaint list: the API's filters, any app's (or one), and those naming no order. */
export const consoleComplaintsQuery = listComplaintsQuery.keys({
  app_id: text(32),
  unknown_order: Joi.string().valid('true').description('Only complaints naming no order durapay has.'),
});
export const consoleComplaintReplyBody = replyComplaintSchema.required();
export const consoleComplaintRefundBody = refundComplaintSchema.required();
