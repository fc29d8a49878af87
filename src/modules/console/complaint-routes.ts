/**
 * The console's complaints (SPEC §16, docs/console.md): every app's complaints in keyset pages
 * (filters: state, overdue, merchant, app, unknown order), one complaint with what was done about
 * it, and an operator's reply, refund and completion, each through the same ComplaintService the
 * API's routes call, and audited (the audit keeps the complaint's state, never the payer's words).
 */
import type { Response, Router } from 'express';
import { parseJsonBody } from '../../platform/http/body';
import { sendData } from '../../platform/http/envelope';
import { listOf, pageOf } from '../../platform/http/keyset';
import { apiRouter } from '../../platform/http/router';
import { pathValue, validate } from '../../platform/http/validation';
import type { Logger } from '../../platform/logger';
import { complaintView, type Complaint, type ComplaintService } from '../complaints';
import { audit, currentOperator, refusalsAudited, requireRole } from './guard';
import {
  consoleComplaintsQuery,
  consoleComplaintRefundBody,
  consoleComplaintReplyBody,
  emptyBody,
} from './schemas';

const COMPLAINT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What the audit log keeps of a complaint: where it stands, never the payer's words or phone. */
const audited = (c: Complaint | null) =>
  c && {
    complaint_id: c.complaintId,
    channel_code: c.channelCode,
    app_id: c.appId,
    trade_no: c.tradeNo,
    state: c.state,
    replied_at: c.repliedAt?.toISOString() ?? null,
    completed_at: c.completedAt?.toISOString() ?? null,
    refund_no: c.refundNo,
    refund_amount: c.refundAmount,
  };

export function consoleComplaintRoutes(complaints: ComplaintService): Router {
  const router = apiRouter();
  const { repository } = complaints;
  const idOf = (params: Record<string, unknown>) => pathValue(params, 'complaintId', 'complaint_id');

  const detail = async (c: Complaint) => ({
    ...complaintView(c),
    app_id: c.appId,
    account: c.account,
    actions: (await repository.actionsOf(c.channelCode, c.complaintId)).map((a) => ({
      actor: a.actor,
      action: a.action,
      outcome: a.outcome,
      detail: a.detail,
      at: new Date(a.at).toISOString(),
    })),
  });

  /** Runs an operator's action on a complaint, audited with where it stood before and after. */
  async function act<T>(
    res: Response,
    action: string,
    complaintId: string,
    run: () => Promise<T>,
  ): Promise<T> {
    const what = { action: `complaint.${action}`, targetType: 'complaint', targetId: complaintId };
    const now = async () => audited(await repository.findOfApp(undefined, complaintId)) ?? undefined;
    const before = await now();
    const answer = await refusalsAudited(res, run, async () => ({ ...what, before, after: await now() }));
    await audit(res, { ...what, before, after: await now() });
    return answer;
  }

  router.get('/complaints', async (req, res) => {
    const q = validate(consoleComplaintsQuery, req.query) as {
      state?: Complaint['state'];
      overdue?: 'true' | 'false';
      merchant_id?: string;
      app_id?: string;
      trade_no?: string;
      unknown_order?: 'true';
      limit?: string;
      after?: string;
    };
    const found = await complaints.list(
      {
        ...(q.app_id ? { appId: q.app_id } : {}),
        state: q.state,
        overdue: q.overdue === undefined ? undefined : q.overdue === 'true',
        merchantId: q.merchant_id,
        tradeNo: q.trade_no,
        unknownOrder: q.unknown_order === 'true',
      },
      pageOf(q, COMPLAINT_ID),
    );
    const now = new Date();
    sendData(
      res,
      listOf(found, (c) => ({ ...complaintView(c, now), app_id: c.appId })),
    );
  });

  router.get('/complaints/:complaintId', async (req, res) => {
    sendData(res, await detail(await complaints.find(undefined, idOf(req.params))));
  });

  const operator = (res: Response) => ({
    kind: 'operator' as const,
    operatorId: currentOperator(res).operatorId,
  });
  const log = (res: Response) => res.locals.log as Logger;

  router.post(
    '/complaints/:complaintId/reply',
    requireRole('operator'),
    parseJsonBody(),
    async (req, res) => {
      const id = idOf(req.params);
      await act(res, 'reply', id, async () => {
        const body = validate(consoleComplaintReplyBody, req.body ?? {}) as { content: string };
        return complaints.reply(operator(res), undefined, id, body, log(res));
      });
      sendData(res, await detail(await complaints.find(undefined, id)));
    },
  );

  router.post(
    '/complaints/:complaintId/refund',
    requireRole('operator'),
    parseJsonBody(),
    async (req, res) => {
      const id = idOf(req.params);
      const refunded = await act(res, 'refund', id, async () => {
        const body = validate(consoleComplaintRefundBody, req.body ?? {}) as {
          refund_amount: number;
          reason?: string;
        };
        return complaints.refund(operator(res), undefined, id, body, log(res));
      });
      sendData(res, { ...(await detail(await complaints.find(undefined, id))), refund: refunded.refund });
    },
  );

  router.post(
    '/complaints/:complaintId/complete',
    requireRole('operator'),
    parseJsonBody(),
    async (req, res) => {
      const id = idOf(req.params);
      await act(res, 'complete', id, async () => {
        validate(emptyBody, req.body ?? {});
        return complaints.complete(operator(res), undefined, id, log(res));
      });
      sendData(res, await detail(await complaints.find(undefined, id)));
    },
  );

  return router;
}
