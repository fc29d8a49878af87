import type { Router } from 'express';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import type { TransferBody, TransferService } from './service';
import { transferView } from './view';
import { cancelTransferSchema, transferSchema } from './schemas';

/** SPEC §11: make, query and cancel a transfer. */
export function transferRoutes(transfers: TransferService): Router {
  const router = apiRouter();

  router.post('/api/v1/transfer', parseJsonBody(), async (req, res) => {
    const body = validate(transferSchema, req.body) as TransferBody;
    sendData(res, await transfers.transfer(currentApp(res).appId, body, res.locals.log as Logger));
  });

  router.post('/api/v1/transfer/cancel', parseJsonBody(), async (req, res) => {
    const body = validate(cancelTransferSchema, req.body) as { transfer_no: string };
    sendData(res, await transfers.cancel(currentApp(res).appId, body.transfer_no, res.locals.log as Logger));
  });

  router.get(['/api/v1/transfer/query', '/api/v1/transfer/query/:transferNo'], async (req, res) => {
    const transferNo = pathValue(req.params, 'transferNo', 'transfer_no');
    if (!transferNo) throw new AppError('missing_param', 'transfer_no is required');
    sendData(res, transferView(await transfers.find(currentApp(res).appId, transferNo)));
  });

  return router;
}
