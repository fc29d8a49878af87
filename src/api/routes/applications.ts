import type { Router } from 'express';
import Joi from 'joi';
import { QueryTypes } from 'sequelize';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { AppError, INTERNAL_SYSTEM_MESSAGE } from '../../domain/errors';
import { scaleDuration } from '../../domain/durations';
import { ApplicationRepository, applicationView } from '../../db/repositories/applications';
import { MerchantRepository } from '../../db/repositories/merchants';
import { AUDIT_POLL_SCHEDULE_MS, AUDIT_WINDOW_MS, fileIdCandidates } from '../../domain/merchants';
import { generateApplicationId } from '../../lib/ids';
import type { Logger } from '../../lib/logger';
import {
  submitApplicationUpdate,
  workflowIds,
  type MerchantApplicationInput,
} from '../../workflows/definitions';
import { sendData } from '../envelope';
import { currentApp } from '../middleware/authenticate';
import { parseJsonBody } from '../middleware/body';
import type { ApiServices } from '../services';
import { freeFormObject, pathValue, validate } from '../validation';
import { apiRouter } from '../router';

/** SPEC §1: `submit_data` serializes to at most 64 KiB. */
const MAX_SUBMIT_DATA_BYTES = 64 * 1024;

const applySchema = Joi.object({
  channel_code: Joi.string().min(1).max(32).required(),
  submit_data: freeFormObject(MAX_SUBMIT_DATA_BYTES),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] }),
}).required();

function merchantNotFound(): AppError {
  return new AppError('order_not_found', 'merchant not found', 404);
}

/** SPEC §5.6–5.7: apply for onboarding at a channel, and read the latest application. */
export function applicationRoutes(services: ApiServices): Router {
  const router = apiRouter();
  const repo = new ApplicationRepository(services.db);
  const merchants = new MerchantRepository(services.db);

  async function merchantExists(appId: string, merchantId: string): Promise<boolean> {
    const rows = await services.db.sequelize.query(
      'SELECT 1 FROM merchants WHERE app_id = :appId AND merchant_id = :merchantId',
      { replacements: { appId, merchantId }, type: QueryTypes.SELECT },
    );
    return rows.length === 1;
  }

  /**
   * One app never submits another's documents (SPEC §2, §5.6): every text in submit_data that
   * names a file uploaded at this channel must name one this app uploaded, and a text shaped
   * like the channel's file ids must name an upload at all.
   */
  async function checkFileReferences(
    appId: string,
    channelCode: string,
    fileIdPattern: RegExp | undefined,
    submitData: Record<string, unknown> | undefined,
  ): Promise<void> {
    const candidates = fileIdCandidates(submitData ?? {});
    if (candidates.length === 0) return;
    const owners = await merchants.fileOwners(
      channelCode,
      candidates.map((c) => c.value),
    );
    for (const { path, value } of candidates) {
      const owner = owners.get(value);
      if (owner === undefined ? fileIdPattern?.test(value) : owner !== appId) {
        throw new AppError(
          'invalid_param',
          `"submit_data.${path}" names file_id ${value}, which this app has not uploaded to channel ${channelCode}`,
        );
      }
    }
  }

  router.post('/api/v1/merchant/:merchantID/apply', parseJsonBody(), async (req, res) => {
    const body = validate(applySchema, req.body) as {
      channel_code: string;
      submit_data?: Record<string, unknown>;
      notify_url?: string;
    };
    const { appId } = currentApp(res);
    const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
    const log = res.locals.log as Logger;
    try {
      if (!(await merchantExists(appId, merchantId))) throw merchantNotFound();
      const channel = services.channels.get(body.channel_code);
      if (!channel || !channel.capabilities.onboarding) {
        throw new AppError('internal_system', `channel ${body.channel_code} does not support onboarding`);
      }
      await checkFileReferences(
        appId,
        body.channel_code,
        channel.capabilities.fileIdPattern,
        body.submit_data,
      );
      const opened = await repo.open({
        applicationId: generateApplicationId(),
        appId,
        merchantId,
        channelCode: body.channel_code,
        submitData: body.submit_data ?? {},
        notifyUrl: body.notify_url ?? null,
      });
      // An application still open at this channel is the answer; nothing is submitted again.
      if (!opened.created) return sendData(res, { application_id: opened.applicationId });

      const input: MerchantApplicationInput = {
        appId,
        applicationId: opened.applicationId,
        merchantId,
        channelCode: body.channel_code,
        pollGapsMs: AUDIT_POLL_SCHEDULE_MS.map((ms) => scaleDuration(ms, services.timeScale)),
        pollForMs: scaleDuration(AUDIT_WINDOW_MS, services.timeScale),
      };
      const result = await services.client.withDeadline(Date.now() + services.requestTimeoutMs, () =>
        services.client.workflow.executeUpdateWithStart(submitApplicationUpdate, {
          args: [],
          startWorkflowOperation: new WithStartWorkflowOperation('merchantApplicationWorkflow', {
            workflowId: workflowIds.merchantApplication(opened.applicationId),
            taskQueue: services.taskQueue,
            args: [input],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        }),
      );
      sendData(res, result);
    } catch (err) {
      if (err instanceof AppError) throw err;
      // SPEC §5.6: any other failure is 500 internal_system, with a clean message.
      const reason = err instanceof WorkflowUpdateFailedError ? err.cause?.message : undefined;
      log.error('apply failed', {
        merchant_id: merchantId,
        error: err instanceof Error ? err.message : String(err),
      });
      throw new AppError(
        'internal_system',
        reason ? `the channel did not accept the application: ${reason}` : INTERNAL_SYSTEM_MESSAGE,
      );
    }
  });

  router.get('/api/v1/merchant/:merchantID/audit', async (req, res) => {
    const { appId } = currentApp(res);
    const merchantId = pathValue(req.params, 'merchantID', 'merchant_id');
    try {
      if (!(await merchantExists(appId, merchantId))) throw merchantNotFound();
      const latest = await repo.latestFor(appId, merchantId);
      if (!latest) throw new AppError('order_not_found', 'application not found', 404);
      sendData(res, applicationView(latest));
    } catch (err) {
      if (err instanceof AppError) throw err;
      (res.locals.log as Logger).error('audit query failed', {
        error: err instanceof Error ? err.message : String(err),
      });
      throw new AppError('internal_system', INTERNAL_SYSTEM_MESSAGE);
    }
  });

  return router;
}
