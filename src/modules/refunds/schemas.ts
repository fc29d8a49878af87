import Joi from 'joi';
import { MAX_AMOUNT } from '../orders/rules';

// The request schemas of SPEC §3.5: the routes validate with them and the OpenAPI document
// is generated from them, so the two cannot disagree.

export const refundSchema = Joi.object({
  trade_no: Joi.string().min(1).max(64).required(),
  refund_amount: Joi.number().integer().min(1).max(MAX_AMOUNT).required(),
  reason: Joi.string().allow('').max(256),
  notify_url: Joi.string().allow('').max(512),
  merchant_refund_no: Joi.string().min(1).max(64),
}).required();
