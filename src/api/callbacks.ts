import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { CallbackReply, CallbacksPort, ChannelEvent } from '../channels/ports';
import { AppError } from '../platform/errors';
import { MerchantRepository } from '../modules/merchants';
import { subMerchantOf, type OrderService } from '../modules/orders';
import type { RefundService } from '../modules/refunds';
import type { Logger } from '../platform/logger';
import { contentEncodingProblem, MAX_JSON_BODY_BYTES } from '../platform/http/body';
import { apiRouter } from '../platform/http/router';
import type { ApiServices } from './services';

const CALLBACK_PATH = '/api/v1/notify/payment';

/** The shape of a channel code; a path value of any other shape is not recorded as a callback. */
const CHANNEL_CODE = /^[a-z0-9_-]{1,32}$/;

function firstValues(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values?.[0] !== undefined) out[name] = values[0];
  }
  return out;
}

/** The answer when no channel's own is known (not a channel, a body that could not be read). */
const FAIL: CallbackReply = { status: 200, contentType: 'text/plain', body: 'fail' };

function reply(res: Response, answer: CallbackReply): void {
  res.status(answer.status).type(answer.contentType).send(answer.body);
}

/** The channel's answer for a callback that must be sent again, or the generic one. */
function failReply(res: Response, reason: string): CallbackReply {
  const callbacks = res.locals.callbacks as CallbacksPort | undefined;
  return callbacks ? callbacks.reply({ ok: false, reason }) : FAIL;
}

/** The body as text for the callback log: lossless for any real callback (UTF-8 without U+0000). */
function loggableBody(raw: Buffer): string {
  return raw.toString('utf8').replaceAll('\u0000', '\ufffd');
}

/**
 * SPEC §4: the channels' callback, in the channel's steps: verify the source (raw body and
 * first header values), decode the event, identify its order (or refund), reply. Every callback
 * is logged before it is answered, and a verified event is signalled to its order's (or
 * refund's) workflow before the channel's acknowledgement is sent. Any failure answers the
 * channel's failure reply (the sandbox's: `fail`, still with HTTP 200), or `fail` when no channel
 * is known yet: a body that is too large or encoded, a path that does not decode, a database
 * that does not answer.
 */
export function callbackRoutes(
  services: ApiServices,
  capabilities: { orders: OrderService; refunds: RefundService },
): Router {
  const router = apiRouter();
  const { orders, refunds } = capabilities;
  const repo = orders.repository;
  const merchants = new MerchantRepository(services.db);
  const readBody = express.raw({ type: () => true, limit: MAX_JSON_BODY_BYTES, inflate: false });
  const refuseEncoded = (req: Request, _res: Response, next: NextFunction) =>
    next(contentEncodingProblem(req));

  // First, so that even a body that cannot be read is answered as the channel expects.
  const findChannel = (req: Request, res: Response, next: NextFunction) => {
    const channelCode = String(req.params.channelCode ?? '');
    if (CHANNEL_CODE.test(channelCode)) res.locals.callbacks = services.channels.get(channelCode)?.callbacks;
    next();
  };

  router.post(`${CALLBACK_PATH}{/:channelCode}`, findChannel, refuseEncoded, readBody, async (req, res) => {
    const log = res.locals.log as Logger;
    const channelCode = String(req.params.channelCode ?? '');
    // For the metrics: a known channel by its code, anything else as `unknown`.
    const counted = (outcome: string) => {
      const channel = services.channels.get(channelCode) ? channelCode : 'unknown';
      res.locals.callback = { channel, outcome };
    };
    if (!CHANNEL_CODE.test(channelCode)) {
      log.info('channel callback refused', { outcome: 'unknown_channel', error: 'not a channel code' });
      counted('unknown_channel');
      return reply(res, FAIL);
    }
    const headers = firstValues(req);
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const logId = await repo.logCallback({ channelCode, headers, rawBody: loggableBody(raw) });
    const fail = async (
      outcome: string,
      error: string,
      verified = false,
      ids: { eventId?: string; tradeNo?: string; refundNo?: string } = {},
    ) => {
      await repo.finishCallback(logId, { verified, outcome, error, ...ids });
      log.info('channel callback refused', { channel_code: channelCode, outcome, error });
      counted(outcome);
      reply(res, failReply(res, error));
    };

    const channel = services.channels.get(channelCode);
    if (!channel) return fail('unknown_channel', `unknown channel ${channelCode}`);
    const callbacks = channel.callbacks;
    if (!callbacks) return fail('unknown_channel', `channel ${channelCode} takes no callbacks`);

    const request = { rawBody: raw, headers };
    let event: ChannelEvent;
    try {
      const check = await callbacks.verify(request);
      if (!check.ok) return await fail('rejected', check.reason);
      event = await callbacks.decode(request);
    } catch (err) {
      return fail('rejected', err instanceof Error ? err.message : 'unparseable callback');
    }
    const ref = callbacks.identify(event);

    const order = await repo.findOrderByTradeNo(ref.tradeNo);
    if (!order) return fail('unknown_order', `no order ${ref.tradeNo}`, true, { eventId: ref.eventId });
    if (order.channelCode !== channelCode) {
      return fail('channel_mismatch', `order ${order.tradeNo} is not a ${channelCode} order`, true, {
        eventId: ref.eventId,
        tradeNo: order.tradeNo,
      });
    }
    if (callbacks.confirm) {
      // What only the order's account may ask the channel (Alipay: a token merchant's refund).
      try {
        const subMerchantNo = await subMerchantOf(order, merchants);
        event = await callbacks.confirm(
          {
            currency: order.currency,
            channelTradeNo: order.channelTradeNo,
            ...(subMerchantNo ? { subMerchantNo } : {}),
          },
          event,
        );
      } catch (err) {
        return fail('unconfirmed', err instanceof Error ? err.message : String(err), true, {
          eventId: ref.eventId,
          tradeNo: order.tradeNo,
        });
      }
    }
    if (event.subMerchantNo !== undefined) {
      if ((await subMerchantOf(order, merchants)) !== event.subMerchantNo) {
        return fail(
          'merchant_mismatch',
          `sub-merchant ${event.subMerchantNo} is not the order's merchant`,
          true,
          {
            eventId: ref.eventId,
            tradeNo: order.tradeNo,
          },
        );
      }
    }
    if (event.amount !== Number(event.kind === 'payment' ? order.amount : event.amount)) {
      return fail('amount_mismatch', `amount ${event.amount} does not match the order`, true, {
        eventId: ref.eventId,
        tradeNo: order.tradeNo,
      });
    }

    try {
      if (event.kind === 'payment') {
        if (event.currency !== order.currency) {
          return fail('currency_mismatch', `currency ${event.currency} does not match the order`, true, {
            eventId: ref.eventId,
            tradeNo: order.tradeNo,
          });
        }
        await orders.signalPayment(order, {
          status: event.status,
          channelTradeNo: event.channelTradeNo,
          paidAt: event.paidAt ? event.paidAt.toISOString() : null,
          amount: event.amount,
        });
      } else {
        const refund =
          ref.refundNo === undefined ? null : await refunds.repository.findRefundByNo(ref.refundNo);
        if (!refund || refund.tradeNo !== order.tradeNo) {
          return fail('unknown_refund', `no refund ${ref.refundNo ?? event.refundNo}`, true, {
            eventId: ref.eventId,
            tradeNo: order.tradeNo,
          });
        }
        if (Number(refund.refundAmount) !== event.amount) {
          return fail('amount_mismatch', `refund amount ${event.amount} does not match`, true, {
            eventId: ref.eventId,
            refundNo: refund.refundNo,
          });
        }
        // A refund still to be settled, or an abnormal one the channel has paid out since.
        const open =
          refund.status === 'processing' || (refund.status === 'abnormal' && event.status === 'success');
        if (open) {
          await refunds.signalResult(refund, {
            status: event.status,
            channelRefundNo: event.channelRefundNo,
            refundedAt: event.refundedAt ? event.refundedAt.toISOString() : null,
            reason: event.reason ?? null,
          });
        }
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
    await repo.finishCallback(logId, {
      verified: true,
      outcome: 'delivered',
      eventId: ref.eventId,
      tradeNo: order.tradeNo,
      refundNo: event.kind === 'refund' ? ref.refundNo : undefined,
    });
    counted('delivered');
    reply(res, callbacks.reply({ ok: true }));
  });

  // Whatever failed on the way (body, path, database): the channel hears its failure reply and retries.
  router.use(CALLBACK_PATH, (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    // A client's fault (status 4xx from the body reader or the path decoder) is not an incident.
    const status = (err as { status?: unknown } | null)?.status;
    const clientFault = err instanceof AppError || (typeof status === 'number' && status < 500);
    const outcome = clientFault ? 'bad_request' : 'error';
    (res.locals.log as Logger)[clientFault ? 'info' : 'error']('channel callback refused', {
      outcome,
      error: err instanceof Error ? err.message : String(err),
    });
    // Mounted at the callback path: the channel code is what follows it.
    const channelCode = req.path.slice(1);
    res.locals.callback = { channel: services.channels.get(channelCode) ? channelCode : 'unknown', outcome };
    reply(res, failReply(res, err instanceof Error ? err.message : String(err)));
  });

  return router;
}
