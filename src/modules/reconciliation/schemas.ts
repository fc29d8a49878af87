import Joi from 'joi';
import { lenientQueryValue } from '../../platform/http/validation';
import { MISMATCH_STATES, RECONCILIATION_CATEGORIES, RESOLUTIONS, RUN_STATUSES } from './messages';

// The request schemas of SPEC §10: the routes validate with them and the OpenAPI document is
// generated from them.

const billDate = Joi.string()
  .pattern(/^\d{4}-\d{2}-\d{2}$/)
  .description("A day in China time (the channels' statements), YYYY-MM-DD.");

export const startRunBody = Joi.object({
  channel_code: Joi.string().min(1).max(32).required().description('The channel whose statements are read.'),
  bill_date: billDate.required(),
  account: Joi.string()
    .min(1)
    .max(64)
    .description(
      "Only this account (a WeChat Pay `sub_mchid`, an Alipay `smid` or user id, a sandbox sub-merchant number; `default` for the channel's own); absent: every account of the app that took orders on the day.",
    ),
  notify_url: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .max(512)
    .description(
      "Where `reconciliation.completed` is posted; absent: the notify_url of the account's latest order.",
    ),
});

export const listRunsQuery = Joi.object({
  channel_code: Joi.string().min(1).max(32).description("Only this channel's runs."),
  bill_date: billDate.allow('').description('Only runs of this day (YYYY-MM-DD).'),
  status: Joi.string()
    .valid(...RUN_STATUSES)
    .allow('')
    .description('`pending`, `running`, `completed` or `failed`; empty means every status.'),
  limit: lenientQueryValue.description('Default 20, at most 100.'),
  offset: lenientQueryValue.description('Default 0.'),
});

export const listMismatchesQuery = Joi.object({
  category: Joi.string()
    .valid(...RECONCILIATION_CATEGORIES)
    .allow('')
    .description('Only findings of this category.'),
  state: Joi.string()
    .valid(...MISMATCH_STATES)
    .allow('')
    .description('`open`, `carried` (waiting out the carry-over), `repaired` or `resolved`.'),
  limit: lenientQueryValue.description('Default 20, at most 100.'),
  offset: lenientQueryValue.description('Default 0.'),
});

export const resolveMismatchBody = Joi.object({
  resolution: Joi.string()
    .valid(...RESOLUTIONS)
    .required()
    .description(
      '`accepted_channel`, `accepted_durapay` or `ignored`. It records a decision and moves no money.',
    ),
  resolved_by: Joi.string()
    .min(1)
    .max(64)
    .required()
    .description('Who decided (a person, recorded as given).'),
  note: Joi.string().max(1000).allow('').description('Why.'),
});
