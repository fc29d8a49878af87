import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Database } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { generateServiceNo } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import { refundRefusal, REFUND_EXCEEDS, type OrderService, type RefundResult } from '../orders';
import { refundResultSignal, refundWorkflowId, type RefundSignal } from './messages';
import type { Refund } from './model';
import { RefundRepository } from './repository';
import { refundView } from './view';

/** POST /api/v1/pay/refund's fields, validated. */
export interface RefundBody {
  trade_no: string;
  refund_amount: number;
  reason?: string;
  notify_url?: string;
  merchant_refund_no?: string;
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
    private readonly deps: { db: Database; client: Client },
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
      if (known) return refundAnswer(known);
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
      const mine = await this.repository.findRefund(appId, refundNo);
      if (mine?.status === 'failed') {
        throw new AppError('channel_refund_fail', mine.failReason ?? 'the channel refused the refund');
      }
      if (mine) return refundAnswer(mine);
      const now = await this.orders.find(appId, body.trade_no);
      if (now.status === 'closed') throw new AppError('order_closed', 'order closed');
      throw new AppError(REFUND_EXCEEDS.code, REFUND_EXCEEDS.message);
    }
  }

  /** Hands a channel's refund result to the refund's workflow (SPEC §4). */
  async signalResult(refund: Refund, result: RefundSignal): Promise<void> {
    await this.deps.client.workflow
      .getHandle(refundWorkflowId(refund.refundNo))
      .signal(refundResultSignal, result);
  }
}
