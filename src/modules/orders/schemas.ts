import Joi from 'joi';
import { freeFormObject } from '../../platform/http/validation';
import { MAX_AMOUNT } from './rules';

// The request schemas of SPEC §3.1–3.4: the routes validate with them and the OpenAPI document
// is generated from them, so the two cannot disagree.

const MERCHANT_ORDER_NO = /^[A-Za-z0-9_\-|*.@]{1,64}$/;

/** SPEC §1: `extra` serializes to at most 8 KiB. */
const MAX_EXTRA_BYTES = 8 * 1024;

export const createOrderSchema = Joi.object({
  merchant_order_no: Joi.string().pattern(MERCHANT_ORDER_NO, 'merchant order number').required(),
  pay_method: Joi.string().min(1).required(),
  amount: Joi.number().integer().min(1).max(MAX_AMOUNT).required(),
  subject: Joi.string().min(1).max(128).required(),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .required(),
  channel_code: Joi.string().min(1).max(32),
  expire_minutes: Joi.number().integer().min(1).max(1440),
  profit_sharing_amount: Joi.number().integer().min(0).max(MAX_AMOUNT),
  merchant_id: Joi.string().min(1).max(64),
  extra: freeFormObject(MAX_EXTRA_BYTES),
})
  .required()
  .messages({ 'string.pattern.name': '{{#label}} must be 1-64 characters of A-Z a-z 0-9 _ - | * . @' });

export const closeOrderSchema = Joi.object({ trade_no: Joi.string().min(1).max(64).required() }).required();
