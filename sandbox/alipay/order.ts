/**
 * What the biz_content of a paying method (precreate, create, page, wap and app payments) must
 * be, and when its trade expires: time_expire (an absolute Beijing time) before timeout_express
 * (relative, and scaled like every delay of the gateway), 15 days at most and by default.
 */
import Joi from 'joi';
import { validateBiz } from './http';
import type { TradeOrder } from './store';
import {
  MAX_AMOUNT_FEN,
  PRICE,
  businessFailed,
  fenOfPrice,
  invalidArgument,
  nextBeijingMidnight,
  parseBeijingTime,
  type Params,
} from './wire';

const MINUTE_MS = 60_000;
const TIMEOUT_UNITS: Record<string, number> = { m: MINUTE_MS, h: 60 * MINUTE_MS, d: 1440 * MINUTE_MS };
/** Alipay's longest wait for a buyer, and its default: 15 days. */
const LONGEST_TIMEOUT_MS = 15 * TIMEOUT_UNITS.d!;

const beijingTimeField = Joi.string().custom((value: string, helpers) =>
  parseBeijingTime(value) === undefined
    ? helpers.error('string.pattern.base', { regex: 'yyyy-MM-dd HH:mm:ss' })
    : value,
);

/** The biz_content every paying method shares; the documented fields not named here pass as sent. */
const orderSchema = Joi.object<TradeOrder>({
  out_trade_no: Joi.string()
    .pattern(/^[A-Za-z0-9_]{1,64}$/)
    .required(),
  total_amount: Joi.string().pattern(PRICE).required(),
  subject: Joi.string().min(1).max(256).required(),
  body: Joi.string().max(128),
  product_code: Joi.string().min(1).max(64),
  buyer_id: Joi.string().pattern(/^2088\d{12}$/),
  buyer_open_id: Joi.string().min(1).max(128),
  op_app_id: Joi.string().pattern(/^\d{1,32}$/),
  timeout_express: Joi.string().pattern(/^(?:[1-9]\d{0,5}[mhd]|1c)$/),
  time_expire: beijingTimeField,
  passback_params: Joi.string().max(512),
  sub_merchant: Joi.object({ merchant_id: Joi.string().min(1).max(32).required() }).unknown(true),
  settle_info: Joi.object({
    settle_detail_infos: Joi.array()
      .items(Joi.object({ trans_in_type: Joi.string().required() }).unknown(true))
      .min(1)
      .required(),
  }).unknown(true),
  extend_params: Joi.object().unknown(true),
  goods_detail: Joi.array(),
}).required();

const HTTP_URL = /^https?:\/\/[^\s]+$/;

/** The order a paying method's call carries, checked, with its total in fen. */
export function readOrder(
  biz: Record<string, unknown>,
  params: Params,
): { order: TradeOrder; totalFen: number } {
  const order = validateBiz(orderSchema, biz);
  const totalFen = fenOfPrice(order.total_amount)!;
  if (totalFen < 1 || totalFen > MAX_AMOUNT_FEN) {
    throw businessFailed(
      'ACQ.TOTAL_FEE_EXCEED',
      '订单总金额超过限额: total_amount is 0.01 to 100000000.00 yuan',
    );
  }
  for (const name of ['notify_url', 'return_url'] as const) {
    const url = params[name];
    if (url && !HTTP_URL.test(url))
      throw invalidArgument('isv.invalid-parameter', `参数无效 ${name}: ${url}`);
  }
  return { order, totalFen };
}

/** When a trade made `now` stops waiting for its buyer. */
export function expiryOf(order: TradeOrder, now: number, scale: number): number {
  if (order.time_expire !== undefined) {
    const at = parseBeijingTime(order.time_expire)!;
    if (at <= now) {
      throw businessFailed(
        'ACQ.NOW_TIME_AFTER_EXPIRE_TIME_ERROR',
        '当前时间已超过允许支付的时间: time_expire has passed',
      );
    }
    if (at > now + LONGEST_TIMEOUT_MS + 15 * MINUTE_MS) {
      throw invalidArgument('isv.invalid-parameter', '参数无效 time_expire: more than 15 days ahead');
    }
    return at;
  }
  const express = order.timeout_express;
  // `1c`: the end of the (Beijing) day, however late the trade was made.
  if (express === '1c') return now + (nextBeijingMidnight(now) - now) * scale;
  const ms =
    express === undefined
      ? LONGEST_TIMEOUT_MS
      : Number(express.slice(0, -1)) * TIMEOUT_UNITS[express.slice(-1)]!;
  if (ms > LONGEST_TIMEOUT_MS)
    throw invalidArgument('isv.invalid-parameter', '参数无效 timeout_express: 1m to 15d');
  return now + ms * scale;
}
