// Longer than 300 lines: the five payment endpoints and the update delivery they share (retries,
// deadline, read-model fallback) sit together until the orders capability has a service of its own.
import { randomInt } from 'node:crypto';
import type { Response, Router } from 'express';
import Joi from 'joi';
import { QueryTypes } from 'sequelize';
import {
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
  WorkflowNotFoundError,
  type WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { TypedSearchAttributes, ApplicationFailure } from '@temporalio/common';
import { AppError, isErrorCode } from '../../domain/errors';
import { DEFAULT_MAX_SHARING_RATIO } from '../../domain/merchants';
import { scaleDuration } from '../../domain/durations';
import {
  DEFAULT_EXPIRE_MINUTES,
  isPaidStatus,
  MAX_AMOUNT,
  LATE_PAYMENT_WINDOW_MS,
  PAYMENT_POLL_SCHEDULE_MS,
  REFUND_POLL_WINDOW_MS,
  sameCreate,
} from '../../domain/orders';
import type { Refund } from '../../db/models/order';
import { orderView, PaymentRepository, refundView } from '../../db/repositories/payments';
import {
  closeOrderUpdate,
  createOrderUpdate,
  refundOrderUpdate,
  searchAttributes,
  workflowIds,
  type CreateOrderRequest,
  type OrderInput,
} from '../../workflows/definitions';
import type { Logger } from '../../lib/logger';
import { sendData } from '../envelope';
import { currentApp } from '../middleware/authenticate';
import { parseJsonBody } from '../middleware/body';
import type { ApiServices } from '../services';
import { freeFormObject, pathValue, validate } from '../validation';
import { apiRouter } from '../router';

const MERCHANT_ORDER_NO = /^[A-Za-z0-9_\-|*.@]{1,64}$/;

/** SPEC §1: `extra` serializes to at most 8 KiB. */
const MAX_EXTRA_BYTES = 8 * 1024;

const createSchema = Joi.object({
  merchant_order_no: Joi.string().pattern(MERCHANT_ORDER_NO, 'merchant order number').required(),
  pay_method: Joi.string().min(1).required(),
  amount: Joi.number().integer().min(1).max(MAX_AMOUNT).required(),
  subject: Joi.string().min(1).max(128).required(),
  notify_url: Joi.string()
    .max(512)
    .uri({ scheme: ['http', 'https'] })
    .required(),
  channel_code: Joi.string().min(1).max(32),
  expire_minutes: Joi.number().integer().min(1).max(1440),
  profit_sharing_amount: Joi.number().integer().min(0).max(MAX_AMOUNT),
  merchant_id: Joi.string().min(1).max(64),
  extra: freeFormObject(MAX_EXTRA_BYTES),
})
  .required()
  .messages({ 'string.pattern.name': '{{#label}} must be 1-64 characters of A-Z a-z 0-9 _ - | * . @' });

const closeSchema = Joi.object({ trade_no: Joi.string().min(1).max(64).required() }).required();

const refundSchema = Joi.object({
  trade_no: Joi.string().min(1).max(64).required(),
  refund_amount: Joi.number().integer().min(1).max(MAX_AMOUNT).required(),
  reason: Joi.string().allow('').max(256),
  notify_url: Joi.string().allow('').max(512),
  merchant_refund_no: Joi.string().min(1).max(64),
}).required();

/** `P` + UTC yyyyMMddHHmmss + 10 random digits: 25 characters of [A-Z0-9]. */
function serviceNo(prefix: 'P' | 'R', now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const digits = Array.from({ length: 10 }, () => randomInt(10)).join('');
  return `${prefix}${stamp}${digits}`;
}

/**
 * The server refuses an update it cannot take now: more than its limit of in-flight updates on
 * one workflow (RESOURCE_EXHAUSTED), an update aborted because the run continued as new or its
 * workflow task was lost (UNAVAILABLE, ABORTED), or one whose workflow task the server failed
 * while it was in flight (FAILED_PRECONDITION, "unexpected workflow task failure": the server
 * calls it transient, to be retried). None was applied, so the update is sent again (every
 * update here is idempotent).
 */
function isTransientUpdateError(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (code === 8 || code === 10 || code === 14) return true;
    if (
      typeof message === 'string' &&
      /in-flight updates|update was aborted|workflow is closing|unexpected workflow task failure|registry was cleared/i.test(
        message,
      )
    ) {
      return true;
    }
  }
  return false;
}

/** POST /api/v1/pay/refund's answer (SPEC §3.5) for a refund already recorded. */
function refundAnswer(refund: Refund) {
  const v = refundView(refund);
  return {
    refund_no: v.refund_no,
    trade_no: v.trade_no,
    refund_amount: v.refund_amount,
    status: v.status,
    channel_refund_no: v.channel_refund_no,
  };
}

/**
 * What a client is told when the request deadline passed before the order decided: the channel
 * may be slow, or no worker may be running; either way the request may still take effect, and
 * only sending it again (it is idempotent) says how it ended.
 */
const OUTCOME_UNKNOWN = {
  create:
    'the outcome is not known yet: the order was not decided within the request deadline ' +
    '(the channel or durapay is slow or unavailable); send the same request again to learn it, ' +
    'the order is created at most once',
  close:
    'the outcome is not known yet: the close was not decided within the request deadline ' +
    '(the channel or durapay is slow or unavailable); send it again to learn it',
  refund:
    'the outcome is not known yet: the refund was not decided within the request deadline ' +
    '(the channel or durapay is slow or unavailable) and may still be made; send the request ' +
    'again with the same merchant_refund_no to learn it',
} as const;

/** A workflow update's business failure becomes the SPEC error it carries. */
function toAppError(err: unknown, operation: keyof typeof OUTCOME_UNKNOWN): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const type = err.cause.type;
    if (isErrorCode(type)) return new AppError(type, err.cause.message);
  }
  if (err instanceof ApplicationFailure && isErrorCode(err.type)) return new AppError(err.type, err.message);
  if (
    (err as WorkflowUpdateRPCTimeoutOrCancelledError)?.name === 'WorkflowUpdateRPCTimeoutOrCancelledError'
  ) {
    return new AppError('channel_timeout', OUTCOME_UNKNOWN[operation]);
  }
  throw err;
}

/** SPEC §3: the five payment endpoints. */
export function paymentRoutes(services: ApiServices): Router {
  const router = apiRouter();
  const repo = new PaymentRepository(services.db);
  const scale = (ms: number) => scaleDuration(ms, services.timeScale);
  const deadline = () => Date.now() + services.requestTimeoutMs;

  /**
   * An update that raced the order's continue-as-new can find the old run already completed
   * (WorkflowNotFoundError) although the order lives on in its new run: the update was not
   * applied, and the order's workflow id still has a running execution to send it to.
   */
  async function continuedAsNew(err: unknown, workflowId: string | undefined): Promise<boolean> {
    if (!workflowId || !(err instanceof WorkflowNotFoundError)) return false;
    try {
      const { status } = await services.client.workflow.getHandle(workflowId).describe();
      return status.name === 'RUNNING';
    } catch {
      return false;
    }
  }

  /**
   * Runs a workflow update within the request deadline, sending it again while the server is
   * busy or the order is moving to a new run (every update here is idempotent).
   */
  async function update<T>(fn: () => Promise<T>, res: Response, workflowId?: string): Promise<T> {
    const until = deadline();
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return await services.client.withDeadline(until, fn);
      } catch (err) {
        const pause = Math.min(1_000, 25 * 2 ** attempt) * (0.5 + Math.random());
        if (Date.now() + pause >= until) throw err;
        if (!isTransientUpdateError(err) && !(await continuedAsNew(err, workflowId))) throw err;
        (res.locals.log as Logger).info('workflow update sent again', {
          attempt: attempt + 1,
          after_ms: Date.now() - started,
          error: err instanceof Error ? err.message : String(err),
        });
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  }

  async function findMerchant(appId: string, merchantId: string) {
    const rows = await services.db.sequelize.query<{
      sub_merchant_no: string | null;
      profit_sharing: {
        receivers?: { type: string; account: string; name?: string; weight: number }[];
        max_ratio?: number;
      } | null;
    }>(
      'SELECT sub_merchant_no, profit_sharing FROM merchants WHERE app_id = :appId AND merchant_id = :merchantId',
      {
        replacements: { appId, merchantId },
        type: QueryTypes.SELECT,
      },
    );
    return rows[0];
  }

  router.post('/api/v1/pay/unified-order', parseJsonBody(), async (req, res) => {
    const body = validate(createSchema, req.body) as {
      merchant_order_no: string;
      pay_method: string;
      amount: number;
      subject: string;
      notify_url: string;
      channel_code?: string;
      expire_minutes?: number;
      profit_sharing_amount?: number;
      merchant_id?: string;
      extra?: Record<string, unknown>;
    };
    const { appId } = currentApp(res);
    const channelCode = body.channel_code ?? services.defaultChannel;
    // A repeat of an order already recorded is answered by what it is (SPEC §3.1), before the
    // channel is consulted: changed parameters, or an order that has ended (its workflow is
    // gone). A pending one goes on to its workflow, which checks the same rule again.
    const existing = await repo.findOrderByMerchantOrderNo(appId, body.merchant_order_no);
    if (existing) {
      const same = sameCreate(
        {
          amount: Number(existing.amount),
          payMethod: existing.payMethod,
          channelCode: existing.channelCode,
          merchantId: existing.merchantId,
          profitSharingAmount: Number(existing.profitSharingAmount),
        },
        {
          amount: body.amount,
          payMethod: body.pay_method,
          channelCode,
          merchantId: body.merchant_id ?? null,
          profitSharingAmount: body.profit_sharing_amount ?? 0,
        },
      );
      if (!same)
        throw new AppError('invalid_param', 'merchant_order_no already used with different parameters');
      if (isPaidStatus(existing.status)) throw new AppError('order_already_paid', 'order already paid');
      if (existing.status === 'closed') throw new AppError('order_closed', 'order closed');
    }

    const channel = services.channels.get(channelCode);
    if (!channel) throw new AppError('channel_not_support', `channel ${channelCode} is not supported`);
    if (!channel.capabilities.payMethods.includes(body.pay_method as never)) {
      throw new AppError(
        'invalid_pay_method',
        `pay_method ${body.pay_method} is not supported by channel ${channelCode}`,
      );
    }
    if (body.amount > channel.capabilities.maxAmount) {
      throw new AppError(
        'invalid_amount',
        `amount exceeds the channel's limit of ${channel.capabilities.maxAmount}`,
      );
    }
    const sharing = body.profit_sharing_amount ?? 0;
    if (sharing > body.amount) {
      throw new AppError('sharing_amount_exceed', 'profit_sharing_amount exceeds amount');
    }
    // Profit sharing reads the merchant's configuration (SPEC §3.1, in this order).
    const merchant = body.merchant_id === undefined ? undefined : await findMerchant(appId, body.merchant_id);
    if (body.merchant_id !== undefined && !merchant)
      throw new AppError('order_not_found', 'merchant not found');
    const receivers = merchant?.profit_sharing?.receivers ?? [];
    if (sharing > 0) {
      if (receivers.length === 0) {
        throw new AppError(
          'sharing_not_config',
          'profit sharing is not configured: the order needs a merchant with receivers',
        );
      }
      const maxRatio = merchant?.profit_sharing?.max_ratio ?? DEFAULT_MAX_SHARING_RATIO;
      const limit = Math.floor(body.amount * maxRatio);
      if (sharing > limit) {
        throw new AppError(
          'sharing_fee_exceed',
          `profit_sharing_amount exceeds ${limit} (max_ratio ${maxRatio} of amount)`,
        );
      }
      if (!channel.capabilities.profitSharing) {
        throw new AppError('channel_not_support', `channel ${channelCode} does not support profit sharing`);
      }
    }

    const request: CreateOrderRequest = {
      payMethod: body.pay_method,
      amount: body.amount,
      subject: body.subject,
      notifyUrl: body.notify_url,
      expireMinutes: body.expire_minutes ?? DEFAULT_EXPIRE_MINUTES,
      profitSharingAmount: sharing,
      merchantId: body.merchant_id ?? null,
      subMerchantNo: merchant?.sub_merchant_no ?? null,
      receivers: sharing > 0 ? receivers : [],
      extra: body.extra ?? null,
    };

    const now = new Date();
    const input: OrderInput = {
      appId,
      merchantOrderNo: body.merchant_order_no,
      tradeNo: serviceNo('P', now),
      channelCode,
      currency: channel.capabilities.currency,
      callbackUrl: `${services.publicBaseUrl}/api/v1/notify/payment/${channelCode}`,
      createdAt: now.toISOString(),
      timings: {
        pollGapsMs: PAYMENT_POLL_SCHEDULE_MS.map(scale),
        expireAfterMs: scale(request.expireMinutes * 60_000),
        profitShareDelayMs: scale(services.profitShareDelayMs),
        refundPollGapsMs: PAYMENT_POLL_SCHEDULE_MS.map(scale),
        refundPollForMs: scale(REFUND_POLL_WINDOW_MS),
        latePaymentWindowMs: scale(LATE_PAYMENT_WINDOW_MS),
      },
    };
    const startWorkflowOperation = () =>
      new WithStartWorkflowOperation('orderWorkflow', {
        workflowId: workflowIds.order(appId, body.merchant_order_no),
        taskQueue: services.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        typedSearchAttributes: new TypedSearchAttributes([
          { key: searchAttributes.AppId, value: appId },
          { key: searchAttributes.MerchantOrderNo, value: body.merchant_order_no },
          { key: searchAttributes.ChannelCode, value: channelCode },
          { key: searchAttributes.BizStatus, value: 'creating' },
        ]),
      });
    try {
      const result = await update(
        () =>
          services.client.workflow.executeUpdateWithStart(createOrderUpdate, {
            args: [request],
            // An operation is used once; a retry needs a fresh one.
            startWorkflowOperation: startWorkflowOperation(),
          }),
        res,
      );
      sendData(res, result);
    } catch (err) {
      throw toAppError(err, 'create');
    }
  });

  const findOrder = async (res: Response, tradeNo: string) => {
    const order = await repo.findOrder(currentApp(res).appId, tradeNo);
    if (!order) throw new AppError('order_not_found', 'order not found');
    return order;
  };

  router.get(['/api/v1/pay/query', '/api/v1/pay/query/:tradeNo'], async (req, res) => {
    const tradeNo = pathValue(req.params, 'tradeNo', 'trade_no');
    if (!tradeNo) throw new AppError('missing_param', 'trade_no is required');
    sendData(res, orderView(await findOrder(res, tradeNo)));
  });

  router.post('/api/v1/pay/close', parseJsonBody(), async (req, res) => {
    const { trade_no } = validate(closeSchema, req.body) as { trade_no: string };
    const order = await findOrder(res, trade_no);
    if (order.status === 'closed') return sendData(res, null);
    if (isPaidStatus(order.status)) throw new AppError('order_already_paid', 'order already paid');
    const workflowId = workflowIds.order(order.appId, order.merchantOrderNo);
    try {
      await update(
        () => services.client.workflow.getHandle(workflowId).executeUpdate(closeOrderUpdate),
        res,
        workflowId,
      );
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw toAppError(err, 'close');
      // The order's workflow has ended (its answer to this close may be what was lost): the
      // read model says how it ended. Closing a closed order succeeds (SPEC §3.4).
      const now = await findOrder(res, trade_no);
      if (isPaidStatus(now.status)) throw new AppError('order_already_paid', 'order already paid');
      if (now.status !== 'closed') throw new AppError('order_closed', 'order closed');
    }
    sendData(res, null);
  });

  router.post('/api/v1/pay/refund', parseJsonBody(), async (req, res) => {
    const body = validate(refundSchema, req.body) as {
      trade_no: string;
      refund_amount: number;
      reason?: string;
      notify_url?: string;
      merchant_refund_no?: string;
    };
    const { appId } = currentApp(res);
    if (body.merchant_refund_no) {
      const known = await repo.findRefundByMerchantRefundNo(appId, body.merchant_refund_no);
      if (known) return sendData(res, refundAnswer(known));
    }
    const order = await findOrder(res, body.trade_no);
    if (order.status === 'pending') throw new AppError('order_not_paid', 'order not paid');
    if (order.status === 'closed') throw new AppError('order_closed', 'order closed');
    if (order.status === 'refunded') {
      throw new AppError('refund_amount_exceed', 'refund amount exceeds the refundable amount');
    }
    const refundNo = serviceNo('R');
    const workflowId = workflowIds.order(order.appId, order.merchantOrderNo);
    try {
      const result = await update(
        () =>
          services.client.workflow.getHandle(workflowId).executeUpdate(refundOrderUpdate, {
            args: [
              {
                refundNo,
                amount: body.refund_amount,
                reason: body.reason || null,
                notifyUrl: body.notify_url || null,
                merchantRefundNo: body.merchant_refund_no ?? null,
              },
            ],
          }),
        res,
        workflowId,
      );
      sendData(res, result);
    } catch (err) {
      // The order's workflow has ended: fully refunded (or closed) since the read above, or
      // right after this very refund, whose answer was then lost with the run. The refund's
      // own number says which: the workflow records a refund before it asks the channel.
      if (err instanceof WorkflowNotFoundError) {
        const mine = await repo.findRefund(appId, refundNo);
        if (mine?.status === 'failed') {
          throw new AppError('channel_refund_fail', mine.failReason ?? 'the channel refused the refund');
        }
        if (mine) return sendData(res, refundAnswer(mine));
        const now = await findOrder(res, body.trade_no);
        if (now.status === 'closed') throw new AppError('order_closed', 'order closed');
        throw new AppError('refund_amount_exceed', 'refund amount exceeds the refundable amount');
      }
      throw toAppError(err, 'refund');
    }
  });

  router.get(['/api/v1/pay/refund/query', '/api/v1/pay/refund/query/:refundNo'], async (req, res) => {
    const refundNo = pathValue(req.params, 'refundNo', 'refund_no');
    if (!refundNo) throw new AppError('missing_param', 'refund_no is required');
    const refund = await repo.findRefund(currentApp(res).appId, refundNo);
    if (!refund) throw new AppError('refund_not_found', 'refund not found');
    sendData(res, refundView(refund));
  });

  return router;
}
