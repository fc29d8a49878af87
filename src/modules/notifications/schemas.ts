import Joi from 'joi';
import { lenientQueryValue } from '../../platform/http/validation';
import { NOTIFICATION_STATUSES } from './rules';

// The request schemas of SPEC §6: the routes validate with them and the OpenAPI document is
// generated from them (descriptions included), so the two cannot disagree.

export const listNotificationsQuery = Joi.object({
  trade_no: Joi.string().min(1).max(64).description("Only this order's notifications."),
  refund_no: Joi.string().min(1).max(64).description("Only this refund's notifications."),
  status: Joi.string()
    .valid(...NOTIFICATION_STATUSES)
    .allow('')
    .description('`pending`, `delivered` or `failed`; empty means every status.'),
  // Read leniently, as the merchant list reads them (SPEC §5.3).
  limit: lenientQueryValue.description('Default 20, at most 100; read as the merchant list reads it.'),
  offset: lenientQueryValue.description('Default 0.'),
});

export const resendNotificationBody = Joi.object({})
  .allow(null)
  .description('No fields: an empty object, or no body at all.');
