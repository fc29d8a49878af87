import type { Router } from 'express';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody } from '../../platform/http/body';
import { listOf, pageOf } from '../../platform/http/keyset';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import type { Logger } from '../../platform/logger';
import type { ComplaintService, RefundBodyOfComplaint, ReplyBody } from './service';
import {
  completeComplaintSchema,
  listComplaintsQuery,
  refundComplaintSchema,
  replyComplaintSchema,
} from './schemas';
import { complaintView } from './view';

/** A complaint id as channels make them (WeChat Pay: 27 digits; Alipay: 28). */
const COMPLAINT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** SPEC §16: the app's complaints (about its own orders), and its answers to them. */
export function complaintRoutes(complaints: ComplaintService): Router {
  const router = apiRouter();
  const idOf = (params: Record<string, unknown>) => pathValue(params, 'complaintId', 'complaint_id');

  router.get('/api/v1/complaints', async (req, res) => {
    const q = validate(listComplaintsQuery, req.query) as {
      state?: 'pending' | 'processing' | 'processed';
      overdue?: 'true' | 'false';
      merchant_id?: string;
      trade_no?: string;
      limit?: string;
      after?: string;
    };
    const found = await complaints.list(
      {
        appId: currentApp(res).appId,
        state: q.state,
        overdue: q.overdue === undefined ? undefined : q.overdue === 'true',
        merchantId: q.merchant_id,
        tradeNo: q.trade_no,
      },
      pageOf(q, COMPLAINT_ID),
    );
    const now = new Date();
    sendData(
      res,
      listOf(found, (c) => complaintView(c, now)),
    );
  });

  router.get('/api/v1/complaints/:complaintId', async (req, res) => {
    sendData(res, await complaints.view(currentApp(res).appId, idOf(req.params)));
  });

  router.post('/api/v1/complaints/:complaintId/reply', parseJsonBody(), async (req, res) => {
    const body = validate(replyComplaintSchema, req.body) as ReplyBody;
    const { appId } = currentApp(res);
    sendData(
      res,
      await complaints.reply({ kind: 'app', appId }, appId, idOf(req.params), body, res.locals.log as Logger),
    );
  });

  router.post('/api/v1/complaints/:complaintId/refund', parseJsonBody(), async (req, res) => {
    const body = validate(refundComplaintSchema, req.body) as RefundBodyOfComplaint;
    const { appId } = currentApp(res);
    sendData(
      res,
      await complaints.refund(
        { kind: 'app', appId },
        appId,
        idOf(req.params),
        body,
        res.locals.log as Logger,
      ),
    );
  });

  router.post('/api/v1/complaints/:complaintId/complete', parseJsonBody(), async (req, res) => {
    validate(completeComplaintSchema, req.body ?? {});
    const { appId } = currentApp(res);
    sendData(
      res,
      await complaints.complete({ kind: 'app', appId }, appId, idOf(req.params), res.locals.log as Logger),
    );
  });

  return router;
}
