import Joi from 'joi';
import { MAX_AMOUNT } from '../orders';

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
    // `complaint:…` numbers a complaint's refund (modules/complaints/rules.ts): an app's own
    // refund taking one would stand in for the refund of the complaint.
    .pattern(/^complaint:/, { invert: true })
    .messages({
      'string.pattern.invert.base':
        '"merchant_refund_no" may not begin with "complaint:" (reserved for complaints\' refunds)',
    })
    .description(
      "Your refund number: a repeat with the same value returns the existing refund instead of refunding again. Numbers beginning `complaint:` are reserved for complaints' refunds.",
    )
    .example('R20261122-0001'),
}).required();

const forBankCard = (field: Joi.StringSchema) =>
  field.when('method', { is: 'user_bank_card', then: Joi.required(), otherwise: Joi.forbidden() });

// SPEC §3.5: how an abnormal refund is paid out instead. The personal fields are sealed before
// they enter Temporal, sent to the channel sealed with its key, and never logged: a refusal names
// the field, never its value (platform/http/strict.ts).
export const abnormalRefundSchema = Joi.object({
  refund_no: Joi.string()
    .min(1)
    .max(64)
    .required()
    .description('An `abnormal` refund.')
    .example('R202611220531020000000007'),
  method: Joi.string()
    .valid('user_bank_card', 'merchant_bank_card')
    .required()
    .description(
      "`user_bank_card`: to the buyer's bank card (needs `bank_type`, `bank_account`, `real_name`); `merchant_bank_card`: to the merchant's bank card, for the merchant to pay the buyer.",
    ),
  bank_type: forBankCard(
    Joi.string()
      .min(1)
      .max(32)
      .pattern(/^[A-Za-z0-9_]+$/, 'a bank code of A-Z a-z 0-9 _')
      .description("The buyer's bank, as the channel codes it (WeChat Pay `bank_type`, e.g. `ICBC_DEBIT`)."),
  ),
  bank_account: forBankCard(
    Joi.string()
      .min(8)
      .max(32)
      .pattern(/^[0-9]+$/, 'digits')
      .description("The buyer's bank card number; sent sealed, never stored or logged."),
  ),
  real_name: forBankCard(
    Joi.string().min(1).max(64).description("The card holder's name; sent sealed, never stored or logged."),
  ),
}).required();
