import type { Router } from 'express';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import type { CreateOrderBody, OrderService } from './service';
import { orderView } from './view';
import { closeOrderSchema, createOrderSchema } from './schemas';

/** SPEC §3.1–3.4: create, query and close an order. */
export function paymentRoutes(orders: OrderService): Router {
  const router = apiRouter();

  router.post('/api/v1/pay/unified-order', parseJsonBody(), async (req, res) => {
    const body = validate(createOrderSchema, req.body) as CreateOrderBody;
    sendData(res, await orders.create(currentApp(res).appId, body, res.locals.log as Logger));
  });

  router.get(['/api/v1/pay/query', '/api/v1/pay/query/:tradeNo'], async (req, res) => {
    const tradeNo = pathValue(req.params, 'tradeNo', 'trade_no');
    if (!tradeNo) throw new AppError('missing_param', 'trade_no is required');
    sendData(res, orderView(await orders.find(currentApp(res).appId, tradeNo)));
  });

  router.post('/api/v1/pay/close', parseJsonBody(), async (req, res) => {
    const { trade_no } = validate(closeOrderSchema, req.body) as { trade_no: string };
    await orders.close(currentApp(res).appId, trade_no, res.locals.log as Logger);
    sendData(res, null);
  });

  return router;
}
