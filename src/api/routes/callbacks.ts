import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { AppError } from '../../domain/errors';
import { PaymentRepository } from '../../db/repositories/payments';
import type { Logger } from '../../lib/logger';
import { paymentSignal, refundResultSignal, workflowIds } from '../../workflows/definitions';
import { contentEncodingProblem, MAX_JSON_BODY_BYTES } from '../middleware/body';
import { apiRouter } from '../router';
import type { ApiServices } from '../services';

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

function reply(res: Response, body: string): void {
  res.status(200).type('text/plain').send(body);
}

/** The body as text for the callback log: lossless for any real callback (UTF-8 without U+0000). */
function loggableBody(raw: Buffer): string {
  return raw.toString('utf8').replaceAll('\u0000', '\ufffd');
}

/**
 * SPEC §4: the channels' callback. The raw body and first header values go to the channel's
 * verifier; every callback is logged before it is answered, and a verified event is signalled
 * to its order's (or refund's) workflow before the channel's acknowledgement is sent. Any
 * failure answers `fail`, still with HTTP 200: a body that is too large or encoded, a path
 * that does not decode, a database that does not answer.
 */
export function callbackRoutes(services: ApiServices): Router {
  const router = apiRouter();
  const repo = new PaymentRepository(services.db);
  const readBody = express.raw({ type: () => true, limit: MAX_JSON_BODY_BYTES, inflate: false });
  const refuseEncoded = (req: Request, _res: Response, next: NextFunction) =>
    next(contentEncodingProblem(req));

  router.post(`${CALLBACK_PATH}{/:channelCode}`, refuseEncoded, readBody, async (req, res) => {
    const log = res.locals.log as Logger;
    const channelCode = String(req.params.channelCode ?? '');
    if (!CHANNEL_CODE.test(channelCode)) {
      log.info('channel callback refused', { outcome: 'unknown_channel', error: 'not a channel code' });
      return reply(res, 'fail');
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
      reply(res, 'fail');
    };

    const channel = services.channels.get(channelCode);
    if (!channel) return fail('unknown_channel', `unknown channel ${channelCode}`);
    const parsed = channel.parseCallback(raw, headers);
    if (!parsed.ok) return fail('rejected', parsed.reason);
    const event = parsed.event;

    const order = await repo.findOrderByTradeNo(event.tradeNo);
    if (!order) return fail('unknown_order', `no order ${event.tradeNo}`, true, { eventId: event.eventId });
    if (event.amount !== Number(event.kind === 'payment' ? order.amount : event.amount)) {
      return fail('amount_mismatch', `amount ${event.amount} does not match the order`, true, {
        eventId: event.eventId,
        tradeNo: order.tradeNo,
      });
    }

    try {
      if (event.kind === 'payment') {
        if (event.currency !== order.currency) {
          return fail('currency_mismatch', `currency ${event.currency} does not match the order`, true, {
            eventId: event.eventId,
            tradeNo: order.tradeNo,
          });
        }
        await services.client.workflow
          .getHandle(workflowIds.order(order.appId, order.merchantOrderNo))
          .signal(paymentSignal, {
            status: event.status,
            channelTradeNo: event.channelTradeNo,
            paidAt: event.paidAt ? event.paidAt.toISOString() : null,
            amount: event.amount,
          });
      } else {
        const refund = await repo.findRefundByNo(event.refundNo);
        if (!refund || refund.tradeNo !== order.tradeNo) {
          return fail('unknown_refund', `no refund ${event.refundNo}`, true, {
            eventId: event.eventId,
            tradeNo: order.tradeNo,
          });
        }
        if (Number(refund.refundAmount) !== event.amount) {
          return fail('amount_mismatch', `refund amount ${event.amount} does not match`, true, {
            eventId: event.eventId,
            refundNo: refund.refundNo,
          });
        }
        if (refund.status === 'processing') {
          await services.client.workflow
            .getHandle(workflowIds.refund(refund.refundNo))
            .signal(refundResultSignal, {
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
          eventId: event.eventId,
          tradeNo: order.tradeNo,
        });
      }
    }
    await repo.finishCallback(logId, {
      verified: true,
      outcome: 'delivered',
      eventId: event.eventId,
      tradeNo: order.tradeNo,
      refundNo: event.kind === 'refund' ? event.refundNo : undefined,
    });
    reply(res, parsed.ack);
  });

  // Whatever failed on the way (body, path, database): the channel hears `fail` and retries.
  router.use(CALLBACK_PATH, (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    // A client's fault (status 4xx from the body reader or the path decoder) is not an incident.
    const status = (err as { status?: unknown } | null)?.status;
    const clientFault = err instanceof AppError || (typeof status === 'number' && status < 500);
    (res.locals.log as Logger)[clientFault ? 'info' : 'error']('channel callback refused', {
      outcome: clientFault ? 'bad_request' : 'error',
      error: err instanceof Error ? err.message : String(err),
    });
    reply(res, 'fail');
  });

  return router;
}
