import Joi from 'joi';
import { freeFormObject } from '../../platform/http/validation';

// The request schemas of SPEC §5.6: the routes validate with them and the OpenAPI document
// is generated from them, so the two cannot disagree.

/** SPEC §1: `submit_data` serializes to at most 64 KiB. */
const MAX_SUBMIT_DATA_BYTES = 64 * 1024;

export const applySchema = Joi.object({
  channel_code: Joi.string().min(1).max(32).required(),
  submit_data: freeFormObject(MAX_SUBMIT_DATA_BYTES),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] }),
}).required();
