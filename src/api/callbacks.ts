import type { NextFunction, Request, Response, Router } from 'express';
import type { CallbacksPort, ChannelEvent } from '../channels/ports';
import { AppError } from '../platform/errors';
import { CallbackLog } from '../modules/callbacks';
import type { OrderService } from '../modules/orders';
import type { RefundService } from '../modules/refunds';
import type { TransferService } from '../modules/transfers';
import type { Logger } from '../platform/logger';
import { contentEncodingProblem, MAX_JSON_BODY_BYTES } from '../platform/http/body';
import { readBoundedBody } from '../platform/http/bounded-body';
import { SourceRateLimit, sourceOf } from '../platform/http/source-limit';
import { apiRouter } from '../platform/http/router';
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

export { DEFAULT_CALLBACK_RATE_LIMIT, type CallbackRateLimit } from './callback-replies';

const CALLBACK_PATH = '/api/v1/notify/payment';

/** The refusals of a verified callback that names no object durapay has. */
const UNKNOWN_OBJECT = new Set(['unknown_order', 'unknown_refund', 'unknown_transfer']);

/**
 * SPEC §4: the channels' callback, in the channel's steps: verify the source (raw body and
 * first header values), decode the event, identify its order (or refund), reply. A verified
 * event is signalled to its order's (or refund's) workflow before the channel's acknowledgement
 * is sent. Any failure answers the channel's failure reply (the sandbox's: `fail`, still with
 * HTTP 200), or `fail` when no channel is known: a path that does not decode, a database that
 * does not answer.
 *
 * Anyone may post here, so what a callback costs durapay is bounded before it is stored
 * (SPEC §9), cheapest check first:
 * - a source address past its limit of callbacks that failed verification is answered at once,
 *   its body unread (SourceRateLimit: only failures are charged, so a channel's valid callbacks,
 *   however many at once, never use its limit up; per API process, in memory, so a refusal costs
 *   no database round trip);
 * - a path that names no channel durapay has is answered without a row, its body unread;
 * - a body larger than the channel's limit (WeChat Pay and Alipay 64 KiB, others 1 MiB) is
 *   refused at the first byte past it, or unread when its Content-Length says so, without a row;
 * - only then is the callback logged, before it is checked, so that every callback of a known
 *   channel that was read is kept as evidence (until the retention deletes it, modules/callbacks).
 */
export function callbackRoutes(
  services: ApiServices,
  capabilities: { orders: OrderService; refunds: RefundService; transfers: TransferService },
  rateLimit: CallbackRateLimit = { perSecond: DEFAULT_CALLBACK_RATE_LIMIT },
): Router {
  const router = apiRouter();
  const { orders, refunds, transfers } = capabilities;
  const callbackLog = new CallbackLog(services.db);
  const limit = new SourceRateLimit({ perSecond: rateLimit.perSecond, now: rateLimit.now });
  /** The channel's code when durapay has it, for the metrics; anything else counts as `unknown`. */
  const known = (code: string) => (CHANNEL_CODE.test(code) && services.channels.get(code) ? code : 'unknown');

  // First, so that even a callback refused before it is read is answered as its channel expects.
  const findChannel = (req: Request, res: Response, next: NextFunction) => {
    const channelCode = String(req.params.channelCode ?? '');
    if (CHANNEL_CODE.test(channelCode)) res.locals.callbacks = services.channels.get(channelCode)?.callbacks;
    next();
  };

  router.post(`${CALLBACK_PATH}{/:channelCode}`, findChannel, async (req, res) => {
    const log = res.locals.log as Logger;
    const channelCode = String(req.params.channelCode ?? '');
    const source = sourceOf(req.ip);
    const counted = (outcome: string) => {
      res.locals.callback = { channel: known(channelCode), outcome };
    };
    const admitted = limit.check(source);
    if (!admitted.allowed) {
      // One line when a source goes over, not one per refusal: a flood must not fill the logs instead.
      if (admitted.refusedInARow === 1) {
        log.warn('callback source over its limit: its callbacks are refused unread', {
          source,
          per_second: rateLimit.perSecond,
        });
      }
      counted('rate_limited');
      return replyUnread(req, res, failReply(res, 'too many callbacks that failed verification'));
    }
    /** Refused before a row was written: charged to the source, answered, its body left unread. */
    const refuse = (outcome: string, error: string) => {
      limit.charge(source);
      log.info('channel callback refused', { channel_code: known(channelCode), outcome, error });
      counted(outcome);
      replyUnread(req, res, failReply(res, error));
    };
    let callbacks = res.locals.callbacks as CallbacksPort | undefined;
    if (!callbacks) {
      return refuse(
        'unknown_channel',
        CHANNEL_CODE.test(channelCode) ? `no channel ${channelCode} takes callbacks` : 'not a channel code',
      );
    }
    const encoded = contentEncodingProblem(req);
    if (encoded) return refuse('bad_request', encoded.message);
    const maxBytes = callbacks.maxBodyBytes ?? MAX_JSON_BODY_BYTES;
    let raw: Buffer;
    try {
      const read = await readBoundedBody(req, maxBytes);
      if (!read.ok) {
        const how = read.declared ? 'declared larger than' : 'larger than';
        return refuse('too_large', `callback body ${how} ${maxBytes} bytes`);
      }
      raw = read.body;
    } catch (err) {
      return refuse('bad_request', err instanceof Error ? err.message : String(err));
    }

    const headers = firstValues(req);
    const logId = await callbackLog.record({ channelCode, headers, rawBody: loggableBody(raw) });
    /** Whether the channel's signature checked out: only a callback whose did not is charged. */
    let signed = false;
    const fail = async (
      outcome: string,
      error: string,
      verified = false,
      ids: { eventId?: string; tradeNo?: string; refundNo?: string } = {},
    ) => {
      if (!signed) limit.charge(source);
      await callbackLog.finish(logId, { verified, outcome, error, ...ids });
      log.info('channel callback refused', { channel_code: channelCode, outcome, error });
      counted(outcome);
      reply(res, failReply(res, error, UNKNOWN_OBJECT.has(outcome)));
    };

    const request = { rawBody: raw, headers };
    // A channel with more than one format hands the request to the port for its format, which
    // then answers it (its failure replies included).
    const taker = callbacks.forRequest?.(request);
    if (taker) {
      callbacks = taker;
      res.locals.callbacks = taker;
    }
    let event: ChannelEvent;
    try {
      const check = await callbacks.verify(request);
      if (!check.ok) return await fail('rejected', check.reason);
      signed = true;
      event = await callbacks.decode(request);
    } catch (err) {
      return fail('rejected', err instanceof Error ? err.message : 'unparseable callback');
    }
    const ref = callbacks.identify(event);

    // A transfer's callback names its transfer, which decides whether to take it (SPEC §11).
    if (event.kind === 'transfer') {
      const taken = await transfers.acceptCallback(channelCode, event);
      if (!taken.ok)
        return fail(taken.refusal.outcome, taken.refusal.message, true, { eventId: ref.eventId });
      try {
        await transfers.deliverCallback(taken.transfer, event);
      } catch (err) {
        return fail('delivery_failed', err instanceof Error ? err.message : String(err), true, {
          eventId: ref.eventId,
        });
      }
      await callbackLog.finish(logId, { verified: true, outcome: 'delivered', eventId: ref.eventId });
      counted('delivered');
      return reply(res, callbacks.reply({ ok: true }));
    }

    // The orders (and refunds) decide whether the event is theirs to take (their rules).
    const target = await refunds.orderOfCallback(ref);
    if (!target.ok) {
      const { outcome, message } = target.refusal;
      return fail(outcome, message, true, { eventId: ref.eventId });
    }
    const accepted = await orders.acceptCallback(channelCode, target.subject, event, callbacks);
    if (!accepted.ok) {
      const { outcome, message } = accepted.refusal;
      return fail(outcome, message, true, {
        eventId: ref.eventId,
        ...(accepted.tradeNo === undefined ? {} : { tradeNo: accepted.tradeNo }),
      });
    }
    const { order } = accepted;
    event = accepted.event;

    try {
      if (event.kind === 'payment') {
        await orders.deliverPayment(order, event);
      } else {
        const taken = await refunds.acceptCallback(order, target.refundNo, event);
        if (!taken.ok) {
          const { outcome, message } = taken.refusal;
          return fail(outcome, message, true, { eventId: ref.eventId, ...taken.ids });
        }
        await refunds.deliverCallback(taken.refund, event);
      }
    } catch (err) {
      // A workflow that has already ended took its final result before: a duplicate.
      if ((err as Error).name !== 'WorkflowNotFoundError') {
        return fail('delivery_failed', err instanceof Error ? err.message : String(err), true, {
          eventId: ref.eventId,
          tradeNo: order.tradeNo,
        });
      }
    }
    await callbackLog.finish(logId, {
      verified: true,
      outcome: 'delivered',
      eventId: ref.eventId,
      tradeNo: order.tradeNo,
      refundNo: event.kind === 'refund' ? target.refundNo : undefined,
    });
    counted('delivered');
    reply(res, callbacks.reply({ ok: true }));
  });

  // Whatever failed on the way (path, database): the channel hears its failure reply and retries.
  router.use(CALLBACK_PATH, (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    // A client's fault (status 4xx from the path decoder) is not an incident, and is charged to
    // its source; durapay's own (a database that does not answer) is neither.
    const status = (err as { status?: unknown } | null)?.status;
    const clientFault = err instanceof AppError || (typeof status === 'number' && status < 500);
    const outcome = clientFault ? 'bad_request' : 'error';
    if (clientFault) limit.charge(sourceOf(req.ip));
    (res.locals.log as Logger)[clientFault ? 'info' : 'error']('channel callback refused', {
      outcome,
      error: err instanceof Error ? err.message : String(err),
    });
    // Mounted at the callback path: the channel code is what follows it.
    res.locals.callback = { channel: known(req.path.slice(1)), outcome };
    replyUnread(req, res, failReply(res, err instanceof Error ? err.message : String(err)));
  });

  return router;
}
