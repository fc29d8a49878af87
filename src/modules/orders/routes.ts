import type { Router } from 'express';
import Joi from 'joi';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { freeFormObject, pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { MAX_AMOUNT } from './rules';
import type { CreateOrderBody, OrderService } from './service';
import { orderView } from './view';

const MERCHANT_ORDER_NO = /^[A-Za-z0-9_\-|*.@]{1,64}$/;

/** SPEC §1: `extra` serializes to at most 8 KiB. */
const MAX_EXTRA_BYTES = 8 * 1024;

const createSchema = Joi.object({
  merchant_order_no: Joi.string().pattern(MERCHANT_ORDER_NO, 'merchant order number').required(),
  pay_method: Joi.string().min(1).required(),
  amount: Joi.number().integer().min(1).max(MAX_AMOUNT).required(),
  subject: Joi.string().min(1).max(128).required(),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .required(),
  channel_code: Joi.string().min(1).max(32),
  expire_minutes: Joi.number().integer().min(1).max(1440),
  profit_sharing_amount: Joi.number().integer().min(0).max(MAX_AMOUNT),
  merchant_id: Joi.string().min(1).max(64),
  extra: freeFormObject(MAX_EXTRA_BYTES),
})
  .required()
  .messages({ 'string.pattern.name': '{{#label}} must be 1-64 characters of A-Z a-z 0-9 _ - | * . @' });

const closeSchema = Joi.object({ trade_no: Joi.string().min(1).max(64).required() }).required();

/** SPEC §3.1–3.4: create, query and close an order. */
export function paymentRoutes(orders: OrderService): Router {
  const router = apiRouter();

  router.post('/api/v1/pay/unified-order', parseJsonBody(), async (req, res) => {
    const body = validate(createSchema, req.body) as CreateOrderBody;
    sendData(res, await orders.create(currentApp(res).appId, body, res.locals.log as Logger));
  });

  router.get(['/api/v1/pay/query', '/api/v1/pay/query/:tradeNo'], async (req, res) => {
    const tradeNo = pathValue(req.params, 'tradeNo', 'trade_no');
    if (!tradeNo) throw new AppError('missing_param', 'trade_no is required');
    sendData(res, orderView(await orders.find(currentApp(res).appId, tradeNo)));
  });

  router.post('/api/v1/pay/close', parseJsonBody(), async (req, res) => {
    const { trade_no } = validate(closeSchema, req.body) as { trade_no: string };
    await orders.close(currentApp(res).appId, trade_no, res.locals.log as Logger);
    sendData(res, null);
  });

  return router;
}
