import Joi from 'joi';
import { lenientQueryValue } from '../../platform/http/validation';
import { NOTIFICATION_STATUSES } from './rules';

// The request schemas of SPEC §6: the routes validate with them and the OpenAPI document
// is generated from them, so the two cannot disagree.

export const listNotificationsQuery = Joi.object({
  trade_no: Joi.string().min(1).max(64),
  refund_no: Joi.string().min(1).max(64),
  status: Joi.string()
    .valid(...NOTIFICATION_STATUSES)
    .allow(''),
  // Read leniently, as the merchant list reads them (SPEC §5.3).
  limit: lenientQueryValue,
  offset: lenientQueryValue,
});

export const resendNotificationBody = Joi.object({}).allow(null);
