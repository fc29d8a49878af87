import Joi from 'joi';
import { lenientQueryValue } from '../../platform/http/validation';
import { DEFAULT_MAX_SHARING_RATIO, MAX_SHARING_RECEIVERS, MERCHANT_ID_PATTERN } from './rules';

// The request schemas of SPEC §5.1 and §5.3: the routes validate with them and the OpenAPI
// document is generated from them, so the two cannot disagree. The upload (§5.5) is multipart,
// read field by field in the route.

const optionalText = Joi.string().min(1).max(64).allow(null);

export const createMerchantSchema = Joi.object({
  merchant_id: Joi.string().pattern(MERCHANT_ID_PATTERN, 'merchant id').required(),
  merchant_name: Joi.string().min(1).max(128).required(),
  license_no: optionalText,
  legal_person: optionalText,
  bank_account: optionalText,
  profit_sharing: Joi.object({
    receivers: Joi.array()
      .items(
        Joi.object({
          type: Joi.string().min(1).max(32).required(),
          account: Joi.string().min(1).max(64).required(),
          name: Joi.string().min(1).max(64),
          weight: Joi.number().integer().positive().required(),
        }),
      )
      .min(1)
      .max(MAX_SHARING_RECEIVERS)
      .required(),
    max_ratio: Joi.number().greater(0).max(1).default(DEFAULT_MAX_SHARING_RATIO),
  }).allow(null),
})
  .required()
  .messages({ 'string.pattern.name': '{{#label}} must be 1-64 characters of A-Z a-z 0-9 _ -' });

export const listMerchantsQuery = Joi.object({
  status: Joi.string().max(64).allow(''),
  // Read leniently (SPEC §5.3): parsePage turns anything that is not an integer into 0.
  limit: lenientQueryValue,
  offset: lenientQueryValue,
});
