import type { NextFunction, Request, Response, Router } from 'express';
import type { CallbackReply, CallbackRequest, CallbacksPort } from '../channels/ports';
import { CallbackLog } from '../modules/callbacks';
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

/** What a kind of channel notification is handed to, and how its channel is answered. */
export interface NotificationDesk {
  /** `complaint`, `contract`: the route's last segment before the channel, and the logs' word. */
  kind: string;
  /** What one notification may be at most. */
  maxBytes: number;
  /** Whether the channel sends notifications of this kind (it has the port). */
  takes(channelCode: string): boolean;
  /** Verifies and hands the notification on; what it names, for the logs, when it was taken. */
  accept(
    channelCode: string,
    req: CallbackRequest,
  ): Promise<
    { verified: true; eventId?: string; fields: Record<string, string> } | { verified: false; reason: string }
  >;
  /** The channel's answer to a notification taken; its callbacks' success reply when absent. */
  replyTaken?(channelCode: string): CallbackReply | undefined;
}

/**
 * The channels' notifications that are not payment callbacks (SPEC §16 complaints, §17
 * contracts), `POST /api/v1/notify/{kind}/{channel}`, bounded and kept as payment callbacks are
 * (callbacks.ts): a source past its limit of notifications that failed verification is answered
 * unread, a path naming no channel of the kind or a body past the limit is refused without a
 * row, and every other one is logged in the callback log before it is checked. Verified by the
 * channel, it is handed on before the channel hears its success reply; anything else answers its
 * failure reply, and the channel sends it again.
 */
export function channelNotificationRoutes(
  services: ApiServices,
  desk: NotificationDesk,
  rateLimit: CallbackRateLimit = { perSecond: DEFAULT_CALLBACK_RATE_LIMIT },
): Router {
  const router = apiRouter();
  const callbackLog = new CallbackLog(services.db);
  const limit = new SourceRateLimit({ perSecond: rateLimit.perSecond, now: rateLimit.now });
  const path = `/api/v1/notify/${desk.kind}`;
  const what = `${desk.kind} notification`;

  router.post(`${path}{/:channelCode}`, async (req, res) => {
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
        log.warn(`${what} source over its limit: its notifications are refused unread`, {
          source,
          per_second: rateLimit.perSecond,
        });
      }
      return replyUnread(req, res, failReply(res, 'too many notifications that failed verification'));
    }
    const refuse = (outcome: string, error: string) => {
      limit.charge(source);
      log.info(`${what} refused`, { channel_code: channelCode, outcome, error });
      replyUnread(req, res, failReply(res, error));
    };
    if (!callbacks || !desk.takes(channelCode)) {
      return refuse('unknown_channel', `no such channel takes ${desk.kind} notifications`);
    }
    const encoded = contentEncodingProblem(req);
    if (encoded) return refuse('bad_request', encoded.message);
    const read = await readBoundedBody(req, desk.maxBytes);
    if (!read.ok) return refuse('too_large', `notification larger than ${desk.maxBytes} bytes`);
    const headers = firstValues(req);
    const logId = await callbackLog.record({ channelCode, headers, rawBody: loggableBody(read.body) });
    let taken;
    try {
      taken = await desk.accept(channelCode, { rawBody: read.body, headers });
    } catch (err) {
      // Verified, and not handed on: not the sender's fault, and sent again.
      const error = err instanceof Error ? err.message : String(err);
      await callbackLog.finish(logId, { verified: true, outcome: 'delivery_failed', error });
      log.warn(`${what} not handed on: the channel sends it again`, { channel_code: channelCode, error });
      return reply(res, failReply(res, error));
    }
    if (!taken.verified) {
      limit.charge(source);
      await callbackLog.finish(logId, { verified: false, outcome: 'rejected', error: taken.reason });
      log.info(`${what} refused`, { channel_code: channelCode, outcome: 'rejected', error: taken.reason });
      return reply(res, failReply(res, taken.reason));
    }
    await callbackLog.finish(logId, {
      verified: true,
      outcome: desk.kind,
      ...(taken.eventId ? { eventId: taken.eventId } : {}),
    });
    log.info(`${what} taken`, { channel_code: channelCode, ...taken.fields });
    reply(res, desk.replyTaken?.(channelCode) ?? (callbacks as CallbacksPort).reply({ ok: true }));
  });

  // Whatever failed on the way (the database): the channel hears its failure reply and retries.
  router.use(path, (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    (res.locals.log as Logger).error(`${what} not taken`, {
      error: err instanceof Error ? err.message : String(err),
    });
    replyUnread(req, res, failReply(res, err instanceof Error ? err.message : String(err)));
  });

  return router;
}
