import Joi from 'joi';
import { lenientQueryValue } from '../../platform/http/validation';
import { MAX_AMOUNT } from '../orders';
import { MAX_LINK_PAYMENTS } from './rules';

// The request schemas of SPEC §15's payment links: the routes validate with them and the OpenAPI
// document is generated from them, so the two cannot disagree.

const MERCHANT_LINK_NO = /^[A-Za-z0-9_\-|*.@]{1,64}$/;

export const createPaymentLinkSchema = Joi.object({
  merchant_link_no: Joi.string()
    .pattern(MERCHANT_LINK_NO, 'merchant link number')
    .required()
    .description(
      'Your number for the link, unique per app: 1–64 characters of `A-Z a-z 0-9 _ - | * . @`. A repeat with the same fields answers the same link; with other fields, `400 invalid_param`.',
    )
    .example('LINK-2026-0001'),
  merchant_id: Joi.string()
    .min(1)
    .max(64)
    .description(
      "A merchant of this app: the link's orders are that merchant's, at the channels where it has an account. Unknown: `422 order_not_found`, `merchant not found`.",
    )
    .example('shop-001'),
  amount: Joi.number()
    .integer()
    .min(1)
    .max(MAX_AMOUNT)
    .required()
    .description('What each payment is, in fen.')
    .example(9900),
  subject: Joi.string()
    .min(1)
    .max(128)
    .required()
    .description('What the buyer pays for.')
    .example('Annual membership'),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .required()
    .description(
      "Where each payment's `payment.succeeded` and `payment.closed` are posted, with `payment_link_id`.",
    )
    .example('https://merchant.example/hooks/durapay'),
  expires_at: Joi.string()
    .isoDate()
    .description('When the link stops taking payments (ISO 8601, in the future); never, when absent.')
    .example('2026-12-31T16:00:00Z'),
  max_payments: Joi.number()
    .integer()
    .min(1)
    .max(MAX_LINK_PAYMENTS)
    .description(
      'How many paid orders the link takes, however many buyers open it at once; default 1. While a buyer is paying, that payment is held for it (10 minutes at most).',
    )
    .example(1),
})
  .required()
  .messages({ 'string.pattern.name': '{{#label}} must be 1-64 characters of A-Z a-z 0-9 _ - | * . @' });

export const listPaymentLinksQuery = Joi.object({
  status: Joi.string().valid('active', 'deactivated').description('Only links of this stored status.'),
  merchant_id: Joi.string().min(1).max(64).description("Only this merchant's links."),
  limit: lenientQueryValue.description('Default 20, at most 100.'),
  offset: lenientQueryValue.description('Default 0.'),
});

export const createMerchantCodeSchema = Joi.object({
  name: Joi.string()
    .min(1)
    .max(64)
    .required()
    .description("What the code is (a till, a stall): the order's subject, shown on the buyer's page.")
    .example('Front counter'),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .required()
    .description(
      "Where each payment's `payment.succeeded` and `payment.closed` are posted, with `standing_code_id`.",
    )
    .example('https://merchant.example/hooks/durapay'),
  min_amount: Joi.number()
    .integer()
    .min(1)
    .max(MAX_AMOUNT)
    .description('The least a buyer may enter, in fen; default 1.')
    .example(100),
  max_amount: Joi.number()
    .integer()
    .min(1)
    .max(MAX_AMOUNT)
    .description(
      'The most a buyer may enter, in fen; default 5 000 000 (¥50 000). Below `min_amount`: `400 invalid_param`.',
    )
    .example(500_000),
}).required();

export const listMerchantCodesQuery = Joi.object({
  limit: lenientQueryValue.description('Default 20, at most 100.'),
  offset: lenientQueryValue.description('Default 0.'),
});
