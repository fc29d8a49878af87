import type { Router } from 'express';
import { AppError } from '../../platform/errors';
import { parsePage } from '../../platform/pagination';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import type { MismatchCategory, Resolution } from './messages';
import type { ReconciliationService } from './service';
import { listMismatchesQuery, listRunsQuery, resolveMismatchBody, startRunBody } from './schemas';
import { mismatchView, runViewFor } from './view';

/** SPEC §10: start runs by hand, list runs and their findings, resolve a finding. */
export function reconciliationRoutes(service: ReconciliationService): Router {
  const router = apiRouter();
  const repo = service.repository;

  router.post('/api/v1/reconciliation/runs', parseJsonBody(), async (req, res) => {
    const body = validate(startRunBody, req.body) as {
      channel_code: string;
      bill_date: string;
      account?: string;
      notify_url?: string;
    };
    const appId = currentApp(res).appId;
    const runs = await service.start({
      channelCode: body.channel_code,
      billDate: body.bill_date,
      ...(body.account ? { account: body.account } : {}),
      ...(body.notify_url ? { notifyUrl: body.notify_url } : {}),
      startedBy: appId,
      appId,
    });
    const listed = await Promise.all(
      runs.map(async (r) => (await repo.listRuns({ appId, runId: r.run_id, limit: 1, offset: 0 })).rows[0]!),
    );
    sendData(res, { list: listed.map((r) => runViewFor(appId, r, r.owned)) });
  });

  router.get('/api/v1/reconciliation/runs', async (req, res) => {
    const q = validate(listRunsQuery, req.query) as Record<string, string | undefined>;
    const page = parsePage(q);
    const appId = currentApp(res).appId;
    const { rows, total } = await repo.listRuns({
      appId,
      ...(q.channel_code ? { channelCode: q.channel_code } : {}),
      ...(q.bill_date ? { billDate: q.bill_date } : {}),
      ...(q.status ? { status: q.status } : {}),
      ...page,
    });
    sendData(res, { list: rows.map((r) => runViewFor(appId, r, r.owned)), total, ...page });
  });

  router.get('/api/v1/reconciliation/runs/:runId/mismatches', async (req, res) => {
    const runId = pathValue(req.params, 'runId', 'run_id')!;
    const q = validate(listMismatchesQuery, req.query) as Record<string, string | undefined>;
    const page = parsePage(q);
    const appId = currentApp(res).appId;
    const visible = await repo.listRuns({ appId, runId, limit: 1, offset: 0 });
    if (visible.rows.length === 0) {
      throw new AppError('reconciliation_not_found', `reconciliation run ${runId} not found`);
    }
    const { rows, total } = await repo.listMismatches({
      runId,
      appId,
      ...(q.category ? { category: q.category as MismatchCategory } : {}),
      ...(q.state ? { state: q.state } : {}),
      ...page,
    });
    sendData(res, { list: rows.map(mismatchView), total, ...page });
  });

  router.post('/api/v1/reconciliation/mismatches/:mismatchId/resolve', parseJsonBody(), async (req, res) => {
    const id = pathValue(req.params, 'mismatchId', 'mismatch_id')!;
    const body = validate(resolveMismatchBody, req.body) as {
      resolution: Resolution;
      resolved_by: string;
      note?: string;
    };
    const row = await service.resolve(currentApp(res).appId, id, {
      resolution: body.resolution,
      resolvedBy: body.resolved_by,
      note: body.note ? body.note : null,
    });
    sendData(res, mismatchView(row));
  });

  return router;
}
