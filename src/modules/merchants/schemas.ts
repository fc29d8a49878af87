import Joi from 'joi';
import { lenientQueryValue } from '../../platform/http/validation';
import { DEFAULT_MAX_SHARING_RATIO, MAX_SHARING_RECEIVERS, MERCHANT_ID_PATTERN } from './rules';

// The request schemas of SPEC §5.1 and §5.3: the routes validate with them and the OpenAPI
// document is generated from them (descriptions and examples included), so the two cannot
// disagree. The upload (§5.5) is multipart, read field by field in the route.

const optionalText = Joi.string().min(1).max(64).allow(null);

export const createMerchantSchema = Joi.object({
  merchant_id: Joi.string()
    .pattern(MERCHANT_ID_PATTERN, 'merchant id')
    .required()
    .description('Your id for the merchant, unique per app: 1–64 characters of `A-Z a-z 0-9 _ -`.')
    .example('shop-001'),
  merchant_name: Joi.string().min(1).max(128).required().example('Blue Bottle Roasters'),
  license_no: optionalText.description('Business license number.').example('91310000MA1FL0000X'),
  legal_person: optionalText.example('Zhang San'),
  bank_account: optionalText
    .description('Answered masked: all but the last 4 digits replaced by `*`.')
    .example('6222020200012345678'),
  profit_sharing: Joi.object({
    receivers: Joi.array()
      .items(
        Joi.object({
          type: Joi.string()
            .min(1)
            .max(32)
            .required()
            .description('As the channel names it, e.g. `MERCHANT_ID`.'),
          account: Joi.string().min(1).max(64).required(),
          name: Joi.string().min(1).max(64),
          weight: Joi.number()
            .integer()
            .positive()
            .required()
            .description(
              "Share of the order's profit-sharing amount; the remainder goes to the first receiver.",
            ),
        }),
      )
      .min(1)
      .max(MAX_SHARING_RECEIVERS)
      .required(),
    max_ratio: Joi.number()
      .greater(0)
      .max(1)
      .default(DEFAULT_MAX_SHARING_RATIO)
      .description("The largest share of an order's amount that may be shared."),
  })
    .allow(null)
    .description('Receivers of profit sharing; without them an order may not share.')
    .example({
      receivers: [{ type: 'MERCHANT_ID', account: '1900000109', name: 'Partner', weight: 1 }],
      max_ratio: 0.3,
    }),
})
  .required()
  .messages({ 'string.pattern.name': '{{#label}} must be 1-64 characters of A-Z a-z 0-9 _ -' });

export const listMerchantsQuery = Joi.object({
  status: Joi.string()
    .max(64)
    .allow('')
    .description('`created`, `auditing`, `active` or `rejected`, matched exactly; empty means every status.'),
  // Read leniently (SPEC §5.3): parsePage turns anything that is not an integer into 0.
  limit: lenientQueryValue.description(
    'Default 20, at most 100 (larger reads as 100); negative or not an integer reads as 0.',
  ),
  offset: lenientQueryValue.description('Default 0; negative or not an integer reads as 0.'),
});
