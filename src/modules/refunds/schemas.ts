import Joi from 'joi';
import { MAX_AMOUNT } from '../orders/rules';

// The request schemas of SPEC §3.5: the routes validate with them and the OpenAPI document
// is generated from them (descriptions and examples included), so the two cannot disagree.

export const refundSchema = Joi.object({
  trade_no: Joi.string()
    .min(1)
    .max(64)
    .required()
    .description('The paid order.')
    .example('P202611220531020000000042'),
  refund_amount: Joi.number()
    .integer()
    .min(1)
    .max(MAX_AMOUNT)
    .required()
    .description(
      'Minor units; at most `amount` less the refunds succeeded or in flight, else `422 refund_amount_exceed`. Any number of partial refunds.',
    )
    .example(50),
  reason: Joi.string()
    .allow('')
    .max(256)
    .description('Shown to the buyer where the channel does.')
    .example('out of stock'),
  notify_url: Joi.string()
    .allow('')
    .max(512)
    .description(
      "Where `refund.succeeded` / `refund.failed` are posted; the order's `notify_url` when absent.",
    ),
  merchant_refund_no: Joi.string()
    .min(1)
    .max(64)
    .description(
      'Your refund number: a repeat with the same value returns the existing refund instead of refunding again.',
    )
    .example('R20261122-0001'),
}).required();
