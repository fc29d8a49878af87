import Joi from 'joi';
import { MAX_AMOUNT } from '../orders';
import { CONTRACT_PERIODS, CONTRACT_STATUSES } from './rules';

// The request schemas of SPEC §17's contracts: the routes validate with them and the OpenAPI
// document is generated from them, so the two cannot disagree.

/** The periods a plan may skip at most: about ten years of any period. */
const MAX_EVERY = 366;
/** A plan of at most this many periods (a daily plan of ten years). */
const MAX_COUNT = 3_660;

export const createContractSchema = Joi.object({
  merchant_contract_no: Joi.string()
    .pattern(/^[A-Za-z0-9_\-|*.@]{1,64}$/, 'merchant contract number')
    .required()
    .description(
      'Your contract number, unique per app: 1–64 characters of `A-Z a-z 0-9 _ - | * . @`. A repeat of the create returns the same contract; with other values it is `400 invalid_param`.',
    )
    .example('SUB-2026-0001'),
  channel_code: Joi.string()
    .min(1)
    .max(32)
    .required()
    .description(
      '`sandbox`, `wechatpay` or `alipay`: a channel that takes recurring contracts; else `502 channel_not_support`.',
    )
    .example('sandbox'),
  merchant_id: Joi.string()
    .min(1)
    .max(64)
    .description(
      "The merchant whose account at the channel deducts; absent: the service provider's own account.",
    )
    .example('MC-0001'),
  plan: Joi.object({
    period: Joi.string()
      .valid(...CONTRACT_PERIODS)
      .required()
      .description('`day`, `week` or `month`.'),
    every: Joi.number()
      .integer()
      .min(1)
      .max(MAX_EVERY)
      .required()
      .description('A deduction every this many periods.')
      .example(1),
    amount: Joi.number()
      .integer()
      .min(1)
      .max(MAX_AMOUNT)
      .required()
      .description("Each deduction, in minor units (fen). Above the channel's limit: `400 invalid_amount`.")
      .example(1500),
    first_at: Joi.string()
      .isoDate()
      .description(
        'When the first deduction is due (RFC 3339); it is made in the first deduction window at or after it. Default: when the buyer signs. Not in the past.',
      )
      .example('2027-01-01T02:00:00.000Z'),
    count: Joi.number()
      .integer()
      .min(1)
      .max(MAX_COUNT)
      .description(
        'How many periods the plan runs (a failed deduction is a period too); absent: until cancelled.',
      )
      .example(12),
    total_amount: Joi.number()
      .integer()
      .min(1)
      .max(MAX_AMOUNT)
      .description('The most the contract ever takes; the last deduction takes what is left of it.')
      .example(18000),
  })
    .required()
    .description("The contract's plan: what is deducted, and when."),
  subject: Joi.string()
    .min(1)
    .max(128)
    .required()
    .description('What the buyer subscribes to.')
    .example('Tea of the month'),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .required()
    .description("Where `contract.*` and every deduction's `payment.*` are posted (Standard Webhooks).")
    .example('https://merchant.example/hooks/durapay'),
  return_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .description("Where the buyer's browser goes after signing.")
    .example('https://merchant.example/subscribed'),
}).custom((value: { plan: { amount: number; total_amount?: number } }, helpers) => {
  if (value.plan.total_amount !== undefined && value.plan.total_amount < value.plan.amount)
    return helpers.message({ custom: '"plan.total_amount" must be at least "plan.amount"' });
  return value;
});

export const cancelContractSchema = Joi.object({
  reason: Joi.string()
    .min(1)
    .max(256)
    .description('Why, as the channel is told.')
    .example('the customer moved away'),
});

export const listContractsQuery = Joi.object({
  status: Joi.string()
    .valid(...CONTRACT_STATUSES)
    .description('Only contracts in this status.'),
  merchant_id: Joi.string().min(1).max(64).description("Only this merchant's contracts."),
  channel_code: Joi.string().min(1).max(32).description("Only this channel's contracts."),
  limit: Joi.string()
    .pattern(/^(100|[1-9]\d?)$/)
    .messages({ 'string.pattern.base': '{{#label}} must be a whole number from 1 to 100' })
    .description('Default 20, at most 100.'),
  after: Joi.string().min(1).max(512).description('The `next` of the page before.'),
});
