import type { Router } from 'express';
import type { Logger } from '../../platform/logger';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import type { ApplicationService, ApplyBody } from './service';
import { applySchema } from './schemas';

/** SPEC §5.6–5.7: apply for onboarding at a channel, and read the latest application. */
export function applicationRoutes(applications: ApplicationService): Router {
  const router = apiRouter();

  router.post('/api/v1/merchant/:merchantID/apply', parseJsonBody(), async (req, res) => {
    const body = validate(applySchema, req.body) as ApplyBody;
    const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
    sendData(
      res,
      await applications.apply(currentApp(res).appId, merchantId, body, res.locals.log as Logger),
    );
  });

  router.get('/api/v1/merchant/:merchantID/audit', async (req, res) => {
    const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
    sendData(res, await applications.latest(currentApp(res).appId, merchantId, res.locals.log as Logger));
  });

  return router;
}
