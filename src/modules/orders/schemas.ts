import Joi from 'joi';
import { freeFormObject } from '../../platform/http/validation';
import { MAX_AMOUNT } from './rules';

// The request schemas of SPEC §3.1–3.4: the routes validate with them and the OpenAPI document
// is generated from them (descriptions and examples included), so the two cannot disagree.

const MERCHANT_ORDER_NO = /^[A-Za-z0-9_\-|*.@]{1,64}$/;

/** SPEC §1: `extra` serializes to at most 8 KiB. */
const MAX_EXTRA_BYTES = 8 * 1024;

export const createOrderSchema = Joi.object({
  merchant_order_no: Joi.string()
    .pattern(MERCHANT_ORDER_NO, 'merchant order number')
    .required()
    .description(
      "Your order number, unique per app: 1–64 characters of `A-Z a-z 0-9 _ - | * . @`. A repeat of a pending order's create returns that order.",
    )
    .example('M20261122-0001'),
  pay_method: Joi.string()
    .min(1)
    .required()
    .description(
      "One of `qr_code`, `jsapi`, `mini_program`, `app`, `h5`, `web` or `barcode` that the channel supports; else `400 invalid_pay_method`. Or `checkout`, with no `channel_code` (nor a profit share): `pay_credential` is `{checkout_url, qr_code}`, durapay's hosted page where the buyer pays with WeChat, Alipay or another browser, the channel picked by the buyer's wallet.",
    )
    .example('qr_code'),
  auth_code: Joi.string()
    .pattern(/^[0-9A-Za-z]{10,128}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be 10 to 128 characters of 0-9, A-Z and a-z' })
    .description(
      "`pay_method: barcode` only, and required there: the code the cashier scanned from the buyer's wallet. Without `channel_code` its prefix picks the channel that issued it (the sandbox's codes: `99` and 16 digits); a code no channel claims is `400 invalid_param`. A repeat of the order with another code is `400 invalid_param`, never a second charge.",
    )
    .example('134567890123456789'),
  device_id: Joi.string()
    .pattern(/^[0-9A-Za-z_-]{1,32}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be 1 to 32 characters of 0-9, A-Z, a-z, _ and -' })
    .description('`pay_method: barcode`: the till that scanned the code, passed to the channel.')
    .example('till-01'),
  store_id: Joi.string()
    .pattern(/^[0-9A-Za-z_-]{1,32}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be 1 to 32 characters of 0-9, A-Z, a-z, _ and -' })
    .description('`pay_method: barcode`: the shop, passed to the channel.')
    .example('store-0001'),
  amount: Joi.number()
    .integer()
    .min(1)
    .max(MAX_AMOUNT)
    .required()
    .description(
      "Minor units of the channel's currency (fen for CNY). Above a channel's own limit: `400 invalid_amount`.",
    )
    .example(100),
  subject: Joi.string()
    .min(1)
    .max(128)
    .required()
    .description('What the buyer pays for.')
    .example('Coffee beans 1 kg'),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .required()
    .description('Where `payment.succeeded` and `payment.closed` are posted (Standard Webhooks).')
    .example('https://merchant.example/hooks/durapay'),
  channel_code: Joi.string()
    .min(1)
    .max(32)
    .description(
      '`sandbox`, `wechatpay` or `alipay`; default from configuration. Unknown: `502 channel_not_support`.',
    )
    .example('sandbox'),
  expire_minutes: Joi.number()
    .integer()
    .min(1)
    .max(1440)
    .description(
      'Minutes until the order is closed at the channel unless paid; default 30. Not for `barcode`: a barcode order is decided within `BARCODE_WAIT_MS` (60 s) and reversed if not.',
    )
    .example(30),
  profit_sharing_amount: Joi.number()
    .integer()
    .min(0)
    .max(MAX_AMOUNT)
    .description(
      "Part of `amount` shared among the merchant's receivers after payment; default 0. Checked in this order: greater than `amount` → `422 sharing_amount_exceed`; no merchant with receivers → `422 sharing_not_config`; above `floor(amount × max_ratio)` → `422 sharing_fee_exceed`.",
    )
    .example(0),
  merchant_id: Joi.string()
    .min(1)
    .max(64)
    .description(
      'A merchant of this app (its sub-merchant number is used at the channel); else `422 order_not_found`, `merchant not found`.',
    )
    .example('shop-001'),
  extra: freeFormObject(MAX_EXTRA_BYTES)
    .description(
      'Channel-specific, at most 16 levels and 8 KiB: `sub_openid`/`sp_openid`, `sub_appid`, `client_ip` (WeChat Pay); `buyer_id`, `quit_url`, `return_url` (Alipay); `sandbox` fault injection (`callback`, `fail_create`, `latency_ms`).',
    )
    .example({ client_ip: '203.0.113.7' }),
})
  .required()
  .messages({ 'string.pattern.name': '{{#label}} must be 1-64 characters of A-Z a-z 0-9 _ - | * . @' });

export const closeOrderSchema = Joi.object({
  trade_no: Joi.string()
    .min(1)
    .max(64)
    .required()
    .description('The order to close.')
    .example('P202611220531020000000042'),
}).required();
