import type { Router } from 'express';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { listOf, pageOf } from '../../platform/http/keyset';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import type { Logger } from '../../platform/logger';
import type { ContractService, CreateContractBody } from './service';
import type { ContractStatus } from './rules';
import { cancelContractSchema, createContractSchema, listContractsQuery } from './schemas';

/** A contract number as durapay makes them: K and 24 digits. */
const CONTRACT_NO = /^K\d{24}$/;

/** SPEC §17: an app's recurring contracts. */
export function contractRoutes(contracts: ContractService): Router {
  const router = apiRouter();
  const noOf = (params: Record<string, unknown>) => pathValue(params, 'contractNo', 'contract_no');

  router.post('/api/v1/contracts', parseJsonBody(), async (req, res) => {
    const body = validate(createContractSchema, req.body) as CreateContractBody;
    sendData(res, await contracts.create(currentApp(res).appId, body, res.locals.log as Logger));
  });

  router.get('/api/v1/contracts', async (req, res) => {
    const q = validate(listContractsQuery, req.query) as {
      status?: ContractStatus;
      merchant_id?: string;
      channel_code?: string;
      limit?: string;
      after?: string;
    };
    const found = await contracts.list(
      {
        appId: currentApp(res).appId,
        status: q.status,
        merchantId: q.merchant_id,
        channelCode: q.channel_code,
      },
      pageOf(q, CONTRACT_NO),
    );
    sendData(
      res,
      listOf(found, (c) => c),
    );
  });

  router.get('/api/v1/contracts/:contractNo', async (req, res) => {
    sendData(res, await contracts.find(currentApp(res).appId, noOf(req.params)));
  });

  router.post('/api/v1/contracts/:contractNo/cancel', parseJsonBody(), async (req, res) => {
    const body = validate(cancelContractSchema, req.body ?? {}) as { reason?: string };
    sendData(
      res,
      await contracts.cancel(
        currentApp(res).appId,
        noOf(req.params),
        body.reason ?? null,
        res.locals.log as Logger,
      ),
    );
  });

  return router;
}
