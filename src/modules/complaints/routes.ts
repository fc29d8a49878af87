import type { Router } from 'express';
import { sendData } from '../../platform/http/envelope';
import { currentApp } from '../../platform/http/context';
import { parseJsonBody, requestHasBody } from '../../platform/http/body';
import { readBoundedBody } from '../../platform/http/bounded-body';
import type { CallbacksPort } from '../../channels/ports';
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

/** A complaint id as channels make them (WeChat Pay: 27 digits). */
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

/** What a complaint notification may be at most (WeChat Pay's are well under 2 KiB). */
const NOTIFICATION_MAX_BYTES = 64 * 1024;

/**
 * SPEC §16: the channels' complaint notifications, `POST /api/v1/notify/complaint/{channel}`.
 * Verified and decrypted by the channel's complaints port, then handed to the complaint's
 * workflow before the channel hears its success reply; anything else answers its failure reply,
 * and the channel sends it again. The notification says only which complaint changed: its
 * workflow reads the rest from the channel, so a forged or replayed one changes nothing.
 */
export function complaintNotificationRoutes(
  complaints: ComplaintService,
  replyOf: (channelCode: string) => CallbacksPort | undefined,
): Router {
  const router = apiRouter();
  router.post('/api/v1/notify/complaint/:channelCode', async (req, res) => {
    const log = res.locals.log as Logger;
    const channelCode = String(req.params.channelCode ?? '');
    const callbacks = /^[a-z0-9_-]{1,32}$/.test(channelCode) ? replyOf(channelCode) : undefined;
    const answer = (ok: boolean, reason?: string) => {
      const reply = callbacks
        ? callbacks.reply(ok ? { ok: true } : { ok: false, reason: reason ?? 'refused' })
        : { status: 200, contentType: 'text/plain', body: ok ? 'success' : 'fail' };
      if (!ok && requestHasBody(req) && !req.complete) res.set('Connection', 'close');
      res.status(reply.status).type(reply.contentType).send(reply.body);
    };
    if (!callbacks || !complaints.hasComplaints(channelCode)) {
      log.info('complaint notification refused', { channel_code: channelCode, outcome: 'unknown_channel' });
      return answer(false, 'no such channel takes complaint notifications');
    }
    const read = await readBoundedBody(req, NOTIFICATION_MAX_BYTES);
    if (!read.ok) return answer(false, `notification larger than ${NOTIFICATION_MAX_BYTES} bytes`);
    const headers: Record<string, string> = {};
    for (const [name, values] of Object.entries(req.headersDistinct)) {
      if (values?.[0] !== undefined) headers[name] = values[0];
    }
    try {
      const taken = await complaints.acceptNotification(channelCode, { rawBody: read.body, headers });
      log.info('complaint notification taken', {
        channel_code: channelCode,
        complaint_id: taken.complaintId,
        event_id: taken.eventId,
      });
      answer(true);
    } catch (err) {
      log.info('complaint notification refused', {
        channel_code: channelCode,
        outcome: 'rejected',
        error: err instanceof Error ? err.message : String(err),
      });
      answer(false, err instanceof Error ? err.message : 'refused');
    }
  });
  return router;
}
