/**
 * The request schemas of the sandbox's payment, refund, profit-sharing and transfer APIs: documented fields
 * only, so that a client's misspelt field is caught here as PARAM_ERROR.
 */
import Joi from 'joi';
import {
  RECEIVER_TYPES,
  RELATION_TYPES,
  type AddReceiverRequest,
  type CreateReturnRequest,
  type CreateSharingRequest,
  type UnfreezeRequest,
} from './sharing';
import type {
  AbnormalRefundRequest,
  BuyerResult,
  CodepayRequest,
  CreateOrderRequest,
  CreateRefundRequest,
} from './store';
import type { CreateTransferRequest } from './transfers';
import { parseRfc3339 } from './wire';

const BUYER_RESULTS: readonly BuyerResult[] = ['pay', 'userpaying', 'payerror'];

const mchid = Joi.string().pattern(/^\d{1,32}$/);
const appid = Joi.string().min(1).max(32);
const openid = Joi.string().min(1).max(128);
const outTradeNo = Joi.string().pattern(/^[A-Za-z0-9_\-|*]{6,32}$/);
/** Every v3 amount is a 32-bit int of fen: 2^31 − 1 at most, or PARAM_ERROR. */
const fen = Joi.number()
  .integer()
  .min(1)
  .max(2 ** 31 - 1);
const httpUrl = Joi.string()
  .uri({ scheme: ['http', 'https'] })
  .max(256);
const rfc3339 = Joi.string().custom((value: string, helpers) =>
  parseRfc3339(value) === undefined ? helpers.error('string.isoDate') : value,
);

export const createOrderSchema = Joi.object<CreateOrderRequest>({
  sp_appid: appid.required(),
  sp_mchid: mchid.required(),
  sub_appid: appid,
  sub_mchid: mchid.required(),
  description: Joi.string().min(1).max(127).required(),
  out_trade_no: outTradeNo.required(),
  time_expire: rfc3339,
  attach: Joi.string().max(128),
  notify_url: httpUrl.required(),
  goods_tag: Joi.string().max(32),
  support_fapiao: Joi.boolean(),
  settle_info: Joi.object({ profit_sharing: Joi.boolean().required() }),
  amount: Joi.object({ total: fen.required(), currency: Joi.string().valid('CNY') }).required(),
  payer: Joi.object({ sp_openid: openid, sub_openid: openid }),
  detail: Joi.object().unknown(true),
  scene_info: Joi.object({
    payer_client_ip: Joi.string().ip({ cidr: 'forbidden' }).required(),
    device_id: Joi.string().max(32),
    store_info: Joi.object().unknown(true),
    h5_info: Joi.object({
      type: Joi.string().valid('iOS', 'Android', 'Wap').required(),
      app_name: Joi.string().max(64),
      app_url: Joi.string().max(128),
      bundle_id: Joi.string().max(128),
      package_name: Joi.string().max(128),
    }),
  }),
}).required();

/**
 * The codepay body (付款码支付): the buyer's code in `payer.auth_code`, the shop in
 * `scene_info.store_info.out_id`; no notify_url, no time_expire.
 */
export const codepaySchema = Joi.object<CodepayRequest>({
  sp_appid: appid.required(),
  sp_mchid: mchid.required(),
  sub_appid: appid,
  sub_mchid: mchid.required(),
  description: Joi.string().min(1).max(127).required(),
  out_trade_no: outTradeNo.required(),
  attach: Joi.string().max(128),
  goods_tag: Joi.string().max(32),
  support_fapiao: Joi.boolean(),
  payer: Joi.object({ auth_code: Joi.string().min(1).max(128).required() }).required(),
  amount: Joi.object({ total: fen.required(), currency: Joi.string().valid('CNY') }).required(),
  scene_info: Joi.object({
    device_id: Joi.string().max(32),
    device_ip: Joi.string().ip({ cidr: 'forbidden' }),
    store_info: Joi.object({
      out_id: Joi.string().min(1).max(32).required(),
      id: Joi.string().max(32),
    }).required(),
  }).required(),
  detail: Joi.object().unknown(true),
  settle_info: Joi.object({ profit_sharing: Joi.boolean().required() }),
}).required();

/** The reverse body (撤销订单): the service provider and the sub-merchant. */
export const reverseSchema = Joi.object<{
  sp_appid?: string;
  sp_mchid: string;
  sub_mchid: string;
  sub_appid?: string;
}>({
  sp_appid: appid,
  sp_mchid: mchid.required(),
  sub_appid: appid,
  sub_mchid: mchid.required(),
}).required();

export const closeSchema = Joi.object<{ sp_mchid: string; sub_mchid: string }>({
  sp_mchid: mchid.required(),
  sub_mchid: mchid.required(),
}).required();

export const createRefundSchema = Joi.object<CreateRefundRequest>({
  sub_mchid: mchid.required(),
  transaction_id: Joi.string().pattern(/^\d{1,32}$/),
  out_trade_no: outTradeNo,
  out_refund_no: Joi.string()
    .pattern(/^[A-Za-z0-9_\-|*@]{1,64}$/)
    .required(),
  reason: Joi.string().max(80),
  notify_url: httpUrl,
  funds_account: Joi.string().valid('AVAILABLE', 'UNSETTLED'),
  amount: Joi.object({
    refund: fen.required(),
    total: fen.required(),
    currency: Joi.string().valid('CNY').required(),
  }).required(),
  goods_detail: Joi.array(),
})
  .or('transaction_id', 'out_trade_no')
  .required();

const transactionId = Joi.string().pattern(/^\d{1,32}$/);
const outOrderNo = Joi.string().pattern(/^[A-Za-z0-9_\-|*@]{1,64}$/);
const receiverType = Joi.string().valid(...RECEIVER_TYPES);
const receiverAccount = Joi.string().min(1).max(64);
/** A field sealed with the platform public key: base64 of a 2048-bit RSA-OAEP block and more. */
const sealed = Joi.string().min(1).max(1024);
const sharingDescription = Joi.string().min(1).max(80);

export const addReceiverSchema = Joi.object<AddReceiverRequest>({
  sub_mchid: mchid.required(),
  appid: appid.required(),
  sub_appid: appid,
  type: receiverType.required(),
  account: receiverAccount.required(),
  name: sealed,
  relation_type: Joi.string()
    .valid(...RELATION_TYPES)
    .required(),
  custom_relation: Joi.string().min(1).max(10),
}).required();

export const createSharingSchema = Joi.object<CreateSharingRequest>({
  sub_mchid: mchid.required(),
  appid: appid.required(),
  sub_appid: appid,
  transaction_id: transactionId.required(),
  out_order_no: outOrderNo.required(),
  receivers: Joi.array()
    .items(
      Joi.object({
        type: receiverType.required(),
        account: receiverAccount.required(),
        name: sealed,
        amount: fen.required(),
        description: sharingDescription.required(),
      }),
    )
    .min(1)
    .max(50)
    .required(),
  unfreeze_unsplit: Joi.boolean().required(),
}).required();

export const unfreezeSchema = Joi.object<UnfreezeRequest>({
  sub_mchid: mchid.required(),
  transaction_id: transactionId.required(),
  out_order_no: outOrderNo.required(),
  description: sharingDescription.required(),
}).required();

/**
 * The debit cards WeChat Pay pays an abnormal refund to (bank_type), as its documentation lists
 * them: written here again rather than taken from durapay's adapter, which this sandbox checks.
 */
const ABNORMAL_REFUND_BANKS = [
  'CMB_DEBIT',
  'COMM_DEBIT',
  'ABC_DEBIT',
  'CCB_DEBIT',
  'ICBC_DEBIT',
  'BOC_DEBIT',
  'PAB_DEBIT',
  'SPDB_DEBIT',
  'CITIC_DEBIT',
  'CEB_DEBIT',
  'CMBC_DEBIT',
  'CIB_DEBIT',
  'GDB_DEBIT',
  'PSBC_DEBIT',
  'NBCB_DEBIT',
];

const outReturnNo = Joi.string().pattern(/^[A-Za-z0-9_\-|*@]{1,64}$/);

export const createReturnSchema = Joi.object<CreateReturnRequest>({
  sub_mchid: mchid.required(),
  order_id: Joi.string().min(1).max(64),
  out_order_no: outOrderNo,
  out_return_no: outReturnNo.required(),
  return_mchid: mchid.required(),
  amount: fen.required(),
  description: sharingDescription.required(),
})
  .or('order_id', 'out_order_no')
  .required();

export const abnormalRefundSchema = Joi.object<AbnormalRefundRequest>({
  sub_mchid: mchid.required(),
  out_refund_no: Joi.string()
    .pattern(/^[A-Za-z0-9_\-|*@]{1,64}$/)
    .required(),
  type: Joi.string().valid('USER_BANK_CARD', 'MERCHANT_BANK_CARD').required(),
  bank_type: Joi.string().valid(...ABNORMAL_REFUND_BANKS),
  bank_account: sealed,
  real_name: sealed,
}).required();

export const buyerSchema = Joi.object<{ result: BuyerResult }>({
  result: Joi.string()
    .valid(...BUYER_RESULTS)
    .required(),
}).required();

/** At most `max` characters (code points, as WeChat Pay counts a remark), at least one. */
const chars = (max: number) =>
  Joi.string().custom((value: string, helpers) =>
    [...value].length >= 1 && [...value].length <= max ? value : helpers.error('string.max', { limit: max }),
  );

/**
 * 商家转账 create, partner form (sub_mchid) and direct form (without it); user_name is sealed,
 * and opened by the route.
 */
export const createTransferSchema = Joi.object<CreateTransferRequest>({
  sub_mchid: mchid,
  appid: appid.required(),
  out_bill_no: Joi.string()
    .pattern(/^[A-Za-z0-9]{1,32}$/)
    .required(),
  transfer_scene_id: Joi.string().min(1).max(36).required(),
  openid: Joi.string().min(1).max(64).required(),
  user_name: Joi.string().min(1).max(1024),
  transfer_amount: fen.required(),
  transfer_remark: chars(32).required(),
  notify_url: httpUrl,
  user_recv_perception: Joi.string().max(32),
  transfer_scene_report_infos: Joi.array()
    .items(
      Joi.object({
        info_type: Joi.string().min(1).max(15).required(),
        info_content: Joi.string().min(1).max(32).required(),
      }),
    )
    .max(10),
});

/** The partner cancel's body; the direct cancel has none (or `{}`). */
export const cancelTransferSchema = Joi.object<{ sub_mchid?: string }>({ sub_mchid: mchid });
export const directCancelSchema = Joi.object({});

/** What the payee does on the confirmation page. */
export const transferActionSchema = Joi.object<{ action: 'confirm' | 'expire' }>({
  action: Joi.string().valid('confirm', 'expire').required(),
}).required();
