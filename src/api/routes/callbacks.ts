import { Router, type Request, type Response } from 'express';
import { PaymentRepository } from '../../db/repositories/payments';
import type { Logger } from '../../lib/logger';
import { paymentSignal, refundResultSignal, workflowIds } from '../../workflows/definitions';
import type { ApiServices } from '../services';

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

/**
 * SPEC §4: the channels' callback. The raw body and first header values go to the channel's
 * verifier; every callback is logged before it is answered, and a verified event is signalled
 * to its order's (or refund's) workflow before the channel's acknowledgement is sent. Any
 * failure answers `fail`, still with HTTP 200.
 */
export function callbackRoutes(services: ApiServices): Router {
  const router = Router();
  const repo = new PaymentRepository(services.db);

  router.post('/api/v1/notify/payment/:channelCode', async (req, res) => {
    const log = res.locals.log as Logger;
    const channelCode = String(req.params.channelCode);
    const headers = firstValues(req);
    const raw = req.rawBody ?? Buffer.alloc(0);
    const logId = await repo.logCallback({ channelCode, headers, rawBody: raw.toString('utf8') });
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

  return router;
}
