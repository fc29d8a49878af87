import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { CallbackReference, ChannelEvent } from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { deliverUpdate } from '../../platform/temporal-updates';
import { searchAttributes } from '../../platform/workflow/definitions';
import { AppError } from '../../platform/errors';
import { generateServiceNo } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import {
  orderWorkflowIdOf,
  refundRefusal,
  REFUND_EXCEEDS,
  toAppError,
  type OrderCallbackSubject,
  type OrderService,
  type RefundResult,
} from '../orders';
import {
  applyAbnormalRefundUpdate,
  refundResultSignal,
  refundWorkflowId,
  type AbnormalRefundRequest,
  type AbnormalRefundResult,
  type RefundSignal,
  type RefundWorkflowInput,
} from './messages';
import { MERCHANT_REFUND_NO_USED } from './activities';
import type { Refund } from './model';
import { refundCallbackRefusal, refundCallbackSettles, type RefundCallbackRefusal } from './rules';
import type { Order } from '../orders';
import type { refundWorkflow } from './workflow';
import { RefundRepository } from './repository';
import { sealAbnormalPayee } from './payee';
import { refundView } from './view';

/** POST /api/v1/pay/refund's fields, validated. */
export interface RefundBody {
  trade_no: string;
  refund_amount: number;
  reason?: string;
  notify_url?: string;
  merchant_refund_no?: string;
}

/** POST /api/v1/pay/refund/abnormal's fields, validated. */
export interface AbnormalRefundBody {
  refund_no: string;
  method: 'user_bank_card' | 'merchant_bank_card';
  bank_type?: string;
  bank_account?: string;
  real_name?: string;
}

/** POST /api/v1/pay/refund's answer (SPEC §3.5) for a refund already recorded. */
function refundAnswer(refund: Refund): RefundResult {
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
 * The refunds capability (SPEC §3.5–3.6). A refund is asked of its order, whose workflow
 * decides it; its own workflow then follows it at the channel, and this service is the only
 * code that signals that workflow.
 */
export class RefundService {
  readonly repository: RefundRepository;

  constructor(
    private readonly deps: {
      db: Database;
      client: Client;
      taskQueue: string;
      channels: ChannelRegistry;
      requestTimeoutMs: number;
      /** Seal an abnormal refund's payee before it enters Temporal. */
      payloadKeys: Keyring;
    },
    private readonly orders: OrderService,
  ) {
    this.repository = new RefundRepository(deps.db);
  }

  /** The app's refund, or 422 refund_not_found. */
  async find(appId: string, refundNo: string): Promise<Refund> {
    const refund = await this.repository.findRefund(appId, refundNo);
    if (!refund) throw new AppError('refund_not_found', 'refund not found');
    return refund;
  }

  async refund(appId: string, body: RefundBody, log: Logger): Promise<RefundResult> {
    if (body.merchant_refund_no) {
      const known = await this.repository.findRefundByMerchantRefundNo(appId, body.merchant_refund_no);
      // SPEC §3.5: unique per app across its orders.
      if (known && known.tradeNo !== body.trade_no)
        throw new AppError('invalid_param', MERCHANT_REFUND_NO_USED);
      // A refund that has ended is answered as it ended. One still processing may still be
      // being decided by its order (its row is written before the share is taken back and the
      // channel asked): its order answers the repeat, with the decision the first request gets.
      if (known && known.status !== 'processing') return refundAnswer(known);
    }
    const order = await this.orders.find(appId, body.trade_no);
    const refusal = refundRefusal(order.status);
    if (refusal) throw new AppError(refusal.code, refusal.message);
    const refundNo = generateServiceNo('R');
    try {
      return await this.orders.refund(
        order,
        {
          refundNo,
          amount: body.refund_amount,
          reason: body.reason || null,
          notifyUrl: body.notify_url || null,
          merchantRefundNo: body.merchant_refund_no ?? null,
        },
        log,
      );
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // The order's workflow has ended: fully refunded (or closed) since the read above, or
      // right after this very refund, whose answer was then lost with the run. The refund's
      // own number says which: the workflow records a refund before it asks the channel.
      const mine =
        (await this.repository.findRefund(appId, refundNo)) ??
        (body.merchant_refund_no
          ? await this.repository.findRefundByMerchantRefundNo(appId, body.merchant_refund_no)
          : null);
      if (mine?.status === 'failed') {
        throw new AppError('channel_refund_fail', mine.failReason ?? 'the channel refused the refund');
      }
      if (mine) return refundAnswer(mine);
      const now = await this.orders.find(appId, body.trade_no);
      if (now.status === 'closed') throw new AppError('order_closed', 'order closed');
      throw new AppError(REFUND_EXCEEDS.code, REFUND_EXCEEDS.message);
    }
  }

  /**
   * Has an abnormal refund paid out another way (SPEC §3.5): the refund's workflow asks the
   * channel, in its open run or in a new run of the same id when the last one has ended.
   */
  async applyAbnormal(appId: string, body: AbnormalRefundBody, log: Logger): Promise<AbnormalRefundResult> {
    const refund = await this.find(appId, body.refund_no);
    if (refund.status !== 'abnormal') {
      throw new AppError(
        'invalid_param',
        `refund ${refund.refundNo} is ${refund.status}, not abnormal: only an abnormal refund can be paid out another way`,
      );
    }
    const order = await this.orders.find(appId, refund.tradeNo);
    const channel = this.deps.channels.get(order.channelCode ?? '');
    if (!channel?.refunds?.applyAbnormal) {
      throw new AppError('channel_not_support', `channel ${order.channelCode} has no abnormal refunds`);
    }
    // Sealed before it enters Temporal: the bank account and the name are never kept (SPEC §3.5).
    const sealedPayee = sealAbnormalPayee(this.deps.payloadKeys, refund.refundNo, {
      bankAccount: body.bank_account ?? null,
      realName: body.real_name ?? null,
    });
    const request: AbnormalRefundRequest = {
      method: body.method,
      bankType: body.bank_type ?? null,
      ...(sealedPayee ? { sealedPayee } : {}),
    };
    try {
      return await deliverUpdate(
        () =>
          this.deps.client.workflow.executeUpdateWithStart(applyAbnormalRefundUpdate, {
            args: [request],
            startWorkflowOperation: this.resumeAbnormal(order, refund),
          }),
        { client: this.deps.client, deadline: Date.now() + this.deps.requestTimeoutMs, log },
      );
    } catch (err) {
      throw toAppError(err, 'refund');
    }
  }

  /** A new run of an abnormal refund's workflow, or the open one (SPEC §3.5). */
  private resumeAbnormal(order: Order, refund: Refund): WithStartWorkflowOperation<typeof refundWorkflow> {
    return new WithStartWorkflowOperation('refundWorkflow', this.resumeOptions(order, refund));
  }

  private resumeOptions(order: Order, refund: Refund) {
    const input: RefundWorkflowInput = {
      appId: refund.appId,
      tradeNo: refund.tradeNo,
      refundNo: refund.refundNo,
      // A refunded order was paid, so made at a channel (a checkout order's once its buyer chose).
      channelCode: order.channelCode ?? '',
      amount: Number(refund.refundAmount),
      orderWorkflowId: orderWorkflowIdOf(order),
      ...this.orders.refundFollowTimings(),
      resume: 'abnormal',
    };
    return {
      workflowId: refundWorkflowId(refund.refundNo),
      taskQueue: this.deps.taskQueue,
      args: [input] as [RefundWorkflowInput],
      typedSearchAttributes: new TypedSearchAttributes([
        { key: searchAttributes.AppId, value: refund.appId },
        { key: searchAttributes.TradeNo, value: refund.tradeNo },
        { key: searchAttributes.BizStatus, value: 'abnormal' },
      ]),
      workflowIdConflictPolicy: 'USE_EXISTING' as const,
    };
  }

  /**
   * SPEC §4: the refund a verified refund callback of `order` is about, when the callback may be
   * delivered to it (refunds' rules); `refundNo` is the channel's reference to it.
   */
  async acceptCallback(
    order: Order,
    refundNo: string | undefined,
    event: Extract<ChannelEvent, { kind: 'refund' }>,
  ): Promise<
    | { ok: true; refund: Refund }
    | { ok: false; refusal: RefundCallbackRefusal; ids: { tradeNo?: string; refundNo?: string } }
  > {
    const refund = refundNo === undefined ? null : await this.repository.findRefundByNo(refundNo);
    const refusal = refundCallbackRefusal(refund, {
      tradeNo: order.tradeNo,
      refundNo,
      eventRefundNo: event.refundNo,
      amount: event.amount,
    });
    if (refusal) {
      const ids =
        refusal.outcome === 'unknown_refund' ? { tradeNo: order.tradeNo } : { refundNo: refund!.refundNo };
      return { ok: false, refusal, ids };
    }
    return { ok: true, refund: refund! };
  }

  /**
   * How a callback's reference names its order, for the orders to find: as the channel named it,
   * or, for a refund named by durapay's refund number alone, by the refund's order.
   */
  async orderOfCallback(
    ref: CallbackReference,
  ): Promise<
    | { ok: true; subject: OrderCallbackSubject; refundNo?: string }
    | { ok: false; refusal: RefundCallbackRefusal }
  > {
    const { subject } = ref;
    if (subject.kind === 'transfer_no') {
      return { ok: false, refusal: { outcome: 'unknown_refund', message: 'a transfer names no order' } };
    }
    if (subject.kind !== 'refund_no') {
      return { ok: true, subject, ...(ref.refundNo === undefined ? {} : { refundNo: ref.refundNo }) };
    }
    const refund = await this.repository.findRefundByNo(subject.refundNo);
    if (!refund) {
      return { ok: false, refusal: { outcome: 'unknown_refund', message: `no refund ${subject.refundNo}` } };
    }
    return { ok: true, subject: { kind: 'trade_no', tradeNo: refund.tradeNo }, refundNo: refund.refundNo };
  }

  /** Delivers an accepted refund callback: to its refund when it still settles one, else a repeat. */
  async deliverCallback(refund: Refund, event: Extract<ChannelEvent, { kind: 'refund' }>): Promise<void> {
    if (!refundCallbackSettles(refund.status, event.status)) return;
    await this.signalResult(refund, {
      status: event.status,
      channelRefundNo: event.channelRefundNo,
      refundedAt: event.refundedAt ? event.refundedAt.toISOString() : null,
      reason: event.reason ?? null,
    });
  }

  /** Hands a channel's refund result to the refund's workflow (SPEC §4). */
  private async signalResult(refund: Refund, result: RefundSignal): Promise<void> {
    if (refund.status === 'abnormal') {
      // An abnormal refund's run has ended (or waits for an operator): the result starts a new
      // run that records it.
      const order = await this.orders.find(refund.appId, refund.tradeNo);
      const { workflowIdConflictPolicy: _unused, ...options } = this.resumeOptions(order, refund);
      await this.deps.client.workflow.signalWithStart<typeof refundWorkflow, [RefundSignal]>(
        'refundWorkflow',
        {
          ...options,
          signal: refundResultSignal,
          signalArgs: [result],
        },
      );
      return;
    }
    await this.deps.client.workflow
      .getHandle(refundWorkflowId(refund.refundNo))
      .signal(refundResultSignal, result);
  }
}
