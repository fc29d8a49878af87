import type { NextFunction, Request, Response, Router } from 'express';
import type { CallbacksPort } from '../channels/ports';
import { CallbackLog } from '../modules/callbacks';
import type { ComplaintService } from '../modules/complaints';
import { contentEncodingProblem } from '../platform/http/body';
import { readBoundedBody } from '../platform/http/bounded-body';
import { apiRouter } from '../platform/http/router';
import { SourceRateLimit, sourceOf } from '../platform/http/source-limit';
import type { Logger } from '../platform/logger';
import {
  CHANNEL_CODE,
  DEFAULT_CALLBACK_RATE_LIMIT,
  failReply,
  firstValues,
  loggableBody,
  reply,
  replyUnread,
  type CallbackRateLimit,
} from './callback-replies';
import type { ApiServices } from './services';

const NOTIFY_PATH = '/api/v1/notify/complaint';

/** What a complaint notification may be at most (WeChat Pay's are well under 2 KiB). */
const NOTIFICATION_MAX_BYTES = 64 * 1024;

/**
 * SPEC §16: the channels' complaint notifications, `POST /api/v1/notify/complaint/{channel}`,
 * bounded and kept as payment callbacks are (callbacks.ts): a source past its limit of
 * notifications that failed verification is answered unread, a path naming no channel with
 * complaints or a body past 64 KiB is refused without a row, and every other one is logged in
 * the callback log before it is checked. Verified and decrypted by the channel's complaints port,
 * it is handed to the complaint's workflow before the channel hears its success reply; anything
 * else answers its failure reply, and the channel sends it again. The notification says only
 * which complaint changed: its workflow reads the rest from the channel, so a forged or replayed
 * one changes nothing.
 */
export function complaintNotificationRoutes(
  services: ApiServices,
  complaints: ComplaintService,
  rateLimit: CallbackRateLimit = { perSecond: DEFAULT_CALLBACK_RATE_LIMIT },
): Router {
  const router = apiRouter();
  const callbackLog = new CallbackLog(services.db);
  const limit = new SourceRateLimit({ perSecond: rateLimit.perSecond, now: rateLimit.now });

  router.post(`${NOTIFY_PATH}{/:channelCode}`, async (req, res) => {
    const log = res.locals.log as Logger;
    const channelCode = String(req.params.channelCode ?? '');
    const callbacks = CHANNEL_CODE.test(channelCode)
      ? services.channels.get(channelCode)?.callbacks
      : undefined;
    res.locals.callbacks = callbacks;
    const source = sourceOf(req.ip);
    const admitted = limit.check(source);
    if (!admitted.allowed) {
      if (admitted.refusedInARow === 1) {
        log.warn('complaint notification source over its limit: its notifications are refused unread', {
          source,
          per_second: rateLimit.perSecond,
        });
      }
      return replyUnread(req, res, failReply(res, 'too many notifications that failed verification'));
    }
    const refuse = (outcome: string, error: string) => {
      limit.charge(source);
      log.info('complaint notification refused', { channel_code: channelCode, outcome, error });
      replyUnread(req, res, failReply(res, error));
    };
    if (!callbacks || !complaints.hasComplaints(channelCode)) {
      return refuse('unknown_channel', 'no such channel takes complaint notifications');
    }
    const encoded = contentEncodingProblem(req);
    if (encoded) return refuse('bad_request', encoded.message);
    const read = await readBoundedBody(req, NOTIFICATION_MAX_BYTES);
    if (!read.ok) return refuse('too_large', `notification larger than ${NOTIFICATION_MAX_BYTES} bytes`);
    const headers = firstValues(req);
    const logId = await callbackLog.record({ channelCode, headers, rawBody: loggableBody(read.body) });
    let taken;
    try {
      taken = await complaints.acceptNotification(channelCode, { rawBody: read.body, headers });
    } catch (err) {
      // Verified, and its workflow not reached: not the sender's fault, and sent again.
      const error = err instanceof Error ? err.message : String(err);
      await callbackLog.finish(logId, { verified: true, outcome: 'delivery_failed', error });
      log.warn('complaint notification not handed to its workflow: the channel sends it again', {
        channel_code: channelCode,
        error,
      });
      return reply(res, failReply(res, error));
    }
    if (!taken.verified) {
      limit.charge(source);
      await callbackLog.finish(logId, { verified: false, outcome: 'rejected', error: taken.reason });
      log.info('complaint notification refused', {
        channel_code: channelCode,
        outcome: 'rejected',
        error: taken.reason,
      });
      return reply(res, failReply(res, taken.reason));
    }
    await callbackLog.finish(logId, { verified: true, outcome: 'complaint', eventId: taken.eventId });
    log.info('complaint notification taken', {
      channel_code: channelCode,
      complaint_id: taken.complaintId,
      event_id: taken.eventId,
    });
    reply(res, (callbacks as CallbacksPort).reply({ ok: true }));
  });

  // Whatever failed on the way (the database): the channel hears its failure reply and retries.
  router.use(NOTIFY_PATH, (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    (res.locals.log as Logger).error('complaint notification not taken', {
      error: err instanceof Error ? err.message : String(err),
    });
    replyUnread(req, res, failReply(res, err instanceof Error ? err.message : String(err)));
  });

  return router;
}
