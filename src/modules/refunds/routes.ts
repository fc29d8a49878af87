import type { Router } from 'express';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import type { AbnormalRefundBody, RefundBody, RefundService } from './service';
import { refundView } from './view';
import { abnormalRefundSchema, refundSchema } from './schemas';

/** SPEC §3.5–3.6: refund a paid order and query a refund. */
export function refundRoutes(refunds: RefundService): Router {
  const router = apiRouter();

  router.post('/api/v1/pay/refund', parseJsonBody(), async (req, res) => {
    const body = validate(refundSchema, req.body) as RefundBody;
    sendData(res, await refunds.refund(currentApp(res).appId, body, res.locals.log as Logger));
  });

  router.post('/api/v1/pay/refund/abnormal', parseJsonBody(), async (req, res) => {
    const body = validate(abnormalRefundSchema, req.body) as AbnormalRefundBody;
    sendData(res, await refunds.applyAbnormal(currentApp(res).appId, body, res.locals.log as Logger));
  });

  router.get(['/api/v1/pay/refund/query', '/api/v1/pay/refund/query/:refundNo'], async (req, res) => {
    const refundNo = pathValue(req.params, 'refundNo', 'refund_no');
    if (!refundNo) throw new AppError('missing_param', 'refund_no is required');
    sendData(res, refundView(await refunds.find(currentApp(res).appId, refundNo)));
  });

  return router;
}
