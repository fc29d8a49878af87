import Joi from 'joi';
import { freeFormObject } from '../../platform/http/validation';

// The request schemas of SPEC §5.6: the routes validate with them and the OpenAPI document
// is generated from them (descriptions and examples included), so the two cannot disagree.

/** SPEC §1: `submit_data` serializes to at most 64 KiB. */
const MAX_SUBMIT_DATA_BYTES = 64 * 1024;

export const applySchema = Joi.object({
  channel_code: Joi.string()
    .min(1)
    .max(32)
    .required()
    .description('The channel to onboard at; one without onboarding answers `500 internal_system`.')
    .example('sandbox'),
  submit_data: freeFormObject(MAX_SUBMIT_DATA_BYTES)
    .description(
      "The channel's application (WeChat Pay: the applyment4sub body; Alipay: the 直付通 fields; sandbox: `sandbox_outcome` `reject` or `sign`), at most 16 levels and 64 KiB. Every `file_id` in it must have been uploaded by this app.",
    )
    .example({ sandbox_outcome: 'sign' }),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .description('Where `merchant.application.updated` is posted at each change of the application.')
    .example('https://merchant.example/hooks/onboarding'),
}).required();
