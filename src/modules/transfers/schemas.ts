import Joi from 'joi';
import { PAYEE_KINDS } from '../../channels/registry';
import { MAX_AMOUNT } from '../orders';

// The request schemas of SPEC §11: the routes validate with them and the OpenAPI document is
// generated from them, so the two cannot disagree. The payee's account and name are personal
// data: sealed at rest, never logged, and a refusal names the field, never its value.

const MERCHANT_TRANSFER_NO = /^[A-Za-z0-9_\-|*.@]{1,64}$/;

const sceneSchema = Joi.object({
  transfer_scene_id: Joi.string()
    .pattern(/^[0-9]{1,32}$/, 'digits')
    .required()
    .description('WeChat Pay `transfer_scene_id`, e.g. `1000` (现金营销), as opened for the merchant.')
    .example('1000'),
  report_infos: Joi.array()
    .items(
      Joi.object({
        info_type: Joi.string().min(1).max(15).required().description('e.g. `活动名称`').example('活动名称'),
        info_content: Joi.string()
          .min(1)
          .max(32)
          .required()
          .description('e.g. `新会员有礼`')
          .example('新会员有礼'),
      }),
    )
    .max(10)
    .default([])
    .description('The report infos WeChat Pay requires for the scene (`transfer_scene_report_infos`).'),
  user_recv_perception: Joi.string()
    .min(1)
    .max(32)
    .description('What the payee sees the money as (WeChat Pay `user_recv_perception`), e.g. `现金奖励`.'),
}).description(
  "WeChat Pay's transfer scene and its report infos; required at `wechatpay`, unused elsewhere.",
);

export const transferSchema = Joi.object({
  merchant_transfer_no: Joi.string()
    .pattern(MERCHANT_TRANSFER_NO, 'merchant transfer number')
    .required()
    .description(
      'Your transfer number, unique per app: 1–64 characters of `A-Z a-z 0-9 _ - | * . @`. The same request again answers the same transfer; a different request with the same number: `400 invalid_param`.',
    )
    .example('W20261127-0001'),
  channel_code: Joi.string()
    .min(1)
    .max(32)
    .required()
    .description(
      '`wechatpay`, `alipay` or `sandbox`. A channel without transfers: `502 channel_not_support`.',
    )
    .example('sandbox'),
  merchant_id: Joi.string()
    .min(1)
    .max(64)
    .description(
      "Pay from this merchant's account at the channel (WeChat Pay sub-merchant, Alipay authorised merchant); absent: the service provider's own account.",
    )
    .example('M10001'),
  amount: Joi.number()
    .integer()
    .min(1)
    .max(MAX_AMOUNT)
    .required()
    .description(
      "Minor units (fen). At least the channel's minimum (WeChat Pay and Alipay: 10, i.e. 0.10 yuan), else `400 invalid_amount`.",
    )
    .example(100),
  payee: Joi.object({
    type: Joi.string()
      .valid(...PAYEE_KINDS.map((p) => p.type))
      .required()
      .description(
        `Whom the channel pays, as each channel declares it (a channel pays only its own): ${PAYEE_KINDS.map(
          (p) => `\`${p.type}\`: ${p.description}`,
        ).join(' ')}`,
      ),
    account: Joi.string().min(1).max(128).required().description('The openid, user id or logon id.'),
    name: Joi.string()
      .min(1)
      .max(64)
      .description(
        "The payee's real name: required by WeChat Pay from 2 000 yuan and by Alipay for a logon id; sent sealed with the channel's key, never shown or logged.",
      ),
  })
    .required()
    .description('Who is paid.'),
  remark: Joi.string()
    .min(1)
    .max(200)
    .required()
    .description('Shown to the payee (WeChat Pay: at most 32 characters).')
    .example('Cashback for order 42'),
  scene: sceneSchema,
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .required()
    .description('Where `transfer.succeeded`, `transfer.failed` and `transfer.cancelled` are posted.')
    .example('https://merchant.example/hooks/durapay'),
}).required();

export const cancelTransferSchema = Joi.object({
  transfer_no: Joi.string()
    .min(1)
    .max(64)
    .required()
    .description('The transfer to cancel.')
    .example('T202611270531020000000042'),
}).required();
