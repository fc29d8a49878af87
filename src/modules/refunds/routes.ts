import type { Router } from 'express';
import Joi from 'joi';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { MAX_AMOUNT } from '../orders/rules';
import type { RefundBody, RefundService } from './service';
import { refundView } from './view';

const refundSchema = Joi.object({
  trade_no: Joi.string().min(1).max(64).required(),
  refund_amount: Joi.number().integer().min(1).max(MAX_AMOUNT).required(),
  reason: Joi.string().allow('').max(256),
  notify_url: Joi.string().allow('').max(512),
  merchant_refund_no: Joi.string().min(1).max(64),
}).required();

/** SPEC §3.5–3.6: refund a paid order and query a refund. */
export function refundRoutes(refunds: RefundService): Router {
  const router = apiRouter();

  router.post('/api/v1/pay/refund', parseJsonBody(), async (req, res) => {
    const body = validate(refundSchema, req.body) as RefundBody;
    sendData(res, await refunds.refund(currentApp(res).appId, body, res.locals.log as Logger));
  });

  router.get(['/api/v1/pay/refund/query', '/api/v1/pay/refund/query/:refundNo'], async (req, res) => {
    const refundNo = pathValue(req.params, 'refundNo', 'refund_no');
    if (!refundNo) throw new AppError('missing_param', 'refund_no is required');
    sendData(res, refundView(await refunds.find(currentApp(res).appId, refundNo)));
  });

  return router;
}
