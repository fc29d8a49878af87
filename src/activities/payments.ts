import { ApplicationFailure } from '@temporalio/activity';
import {
  ChannelError,
  type Channel,
  type PayMethod,
  type PaymentState,
  type RefundState,
} from '../channels/types';
import type { ErrorCode } from '../domain/errors';
import type { OrderStatus, ProfitSharingStatus } from '../domain/orders';
import type { NotificationEvent } from '../domain/notifications';
import {
  orderView,
  PaymentRepository,
  refundView,
  type NewOrder,
  type NewRefund,
} from '../db/repositories/payments';
import type { ActivityDeps } from './index';
import { createNotificationActivities } from './notifications';

/**
 * A channel failure as the workflow sees it: the SPEC error code as the failure type. Refusals
 * are final; an unreachable or slow channel may be retried by the activity's policy.
 */
function channelFailure(err: unknown, refusedCode: ErrorCode): ApplicationFailure {
  if (err instanceof ChannelError) {
    if (err.kind === 'refused' || err.kind === 'invalid_response') {
      return ApplicationFailure.nonRetryable(err.message, refusedCode);
    }
    if (err.kind === 'not_supported')
      return ApplicationFailure.nonRetryable(err.message, 'channel_not_support');
    return ApplicationFailure.retryable(`channel unreachable: ${err.message}`, 'channel_timeout');
  }
  return ApplicationFailure.retryable(err instanceof Error ? err.message : String(err), 'channel_timeout');
}

export function createPaymentActivities(deps: ActivityDeps) {
  const repo = new PaymentRepository(deps.db);
  const { publishNotification } = createNotificationActivities(deps);

  function channel(code: string): Channel {
    const found = deps.channels.get(code);
    if (!found)
      throw ApplicationFailure.nonRetryable(`channel ${code} is not supported`, 'channel_not_support');
    return found;
  }

  return {
    async createChannelPayment(input: {
      channelCode: string;
      tradeNo: string;
      amount: number;
      currency: string;
      payMethod: string;
      subject: string;
      expireAt: string;
      callbackUrl: string;
      extra: Record<string, unknown> | null;
      subMerchantNo: string | null;
      profitSharing: boolean;
    }) {
      try {
        return await channel(input.channelCode).createPayment({
          tradeNo: input.tradeNo,
          amount: input.amount,
          currency: input.currency,
          payMethod: input.payMethod as PayMethod,
          subject: input.subject,
          expireAt: new Date(input.expireAt),
          callbackUrl: input.callbackUrl,
          extra: input.extra ?? undefined,
          subMerchantNo: input.subMerchantNo ?? undefined,
          profitSharing: input.profitSharing,
        });
      } catch (err) {
        throw channelFailure(err, 'channel_create_fail');
      }
    },

    async queryChannelPayment(input: { channelCode: string; tradeNo: string }): Promise<PaymentState> {
      try {
        return await channel(input.channelCode).queryPayment(input.tradeNo);
      } catch (err) {
        throw channelFailure(err, 'channel_create_fail');
      }
    },

    async closeChannelPayment(input: { channelCode: string; tradeNo: string }): Promise<PaymentState> {
      try {
        return await channel(input.channelCode).closePayment(input.tradeNo);
      } catch (err) {
        throw channelFailure(err, 'channel_create_fail');
      }
    },

    async requestChannelRefund(input: {
      channelCode: string;
      tradeNo: string;
      refundNo: string;
      amount: number;
      totalAmount: number;
      reason: string | null;
      callbackUrl: string;
    }): Promise<RefundState> {
      try {
        return await channel(input.channelCode).refund({
          tradeNo: input.tradeNo,
          refundNo: input.refundNo,
          amount: input.amount,
          totalAmount: input.totalAmount,
          reason: input.reason ?? undefined,
          callbackUrl: input.callbackUrl,
        });
      } catch (err) {
        throw channelFailure(err, 'channel_refund_fail');
      }
    },

    async queryChannelRefund(input: { channelCode: string; refundNo: string }): Promise<RefundState> {
      try {
        return await channel(input.channelCode).queryRefund(input.refundNo);
      } catch (err) {
        throw channelFailure(err, 'channel_refund_fail');
      }
    },

    async shareProfit(input: {
      channelCode: string;
      tradeNo: string;
      receivers: { type: string; account: string; name?: string; amount: number }[];
    }): Promise<'finished' | 'failed'> {
      try {
        const state = await channel(input.channelCode).profitShare({
          tradeNo: input.tradeNo,
          shareNo: `S${input.tradeNo.slice(1)}`,
          receivers: input.receivers,
        });
        return state.status === 'failed' ? 'failed' : 'finished';
      } catch (err) {
        throw channelFailure(err, 'channel_create_fail');
      }
    },

    async recordOrderCreated(order: NewOrder): Promise<void> {
      await repo.insertOrder(order);
    },

    async recordOrderPaid(input: {
      tradeNo: string;
      channelTradeNo: string | null;
      payTime: string;
    }): Promise<void> {
      await repo.markPaid(input.tradeNo, input.channelTradeNo, input.payTime);
    },

    async recordOrderClosed(input: { tradeNo: string; closedAt: string }): Promise<void> {
      await repo.markClosed(input.tradeNo, input.closedAt);
    },

    async recordOrderRefundTotals(input: {
      tradeNo: string;
      refundedAmount: number;
      status: OrderStatus;
    }): Promise<void> {
      await repo.setRefundTotals(input.tradeNo, input.refundedAmount, input.status);
    },

    async recordProfitSharing(input: { tradeNo: string; status: ProfitSharingStatus }): Promise<void> {
      await repo.setProfitSharingStatus(input.tradeNo, input.status);
    },

    async recordRefundCreated(refund: NewRefund): Promise<void> {
      await repo.insertRefund(refund);
    },

    async recordRefundChannelNo(input: { refundNo: string; channelRefundNo: string | null }): Promise<void> {
      await repo.setRefundChannelNo(input.refundNo, input.channelRefundNo);
    },

    async recordRefundSettled(input: {
      refundNo: string;
      status: 'success' | 'failed';
      channelRefundNo: string | null;
      refundTime: string | null;
      failReason: string | null;
    }): Promise<void> {
      await repo.settleRefund(input.refundNo, input);
    },

    /** Publishes an order event with the order as the query endpoint shows it. */
    async notifyOrderEvent(input: { tradeNo: string; type: NotificationEvent }): Promise<string | null> {
      const order = await repo.findOrderByTradeNo(input.tradeNo);
      if (!order) return null;
      return publishNotification({
        appId: order.appId,
        type: input.type,
        eventKey: `${input.type}:${order.tradeNo}`,
        url: order.notifyUrl,
        data: orderView(order),
        occurredAt: new Date().toISOString(),
        tradeNo: order.tradeNo,
      });
    },

    /** Publishes a refund event to the refund's notify_url, else the order's. */
    async notifyRefundEvent(input: { refundNo: string; type: NotificationEvent }): Promise<string | null> {
      const refund = await repo.findRefundByNo(input.refundNo);
      if (!refund) return null;
      const order = await repo.findOrderByTradeNo(refund.tradeNo);
      const url = refund.notifyUrl || order?.notifyUrl;
      if (!url) return null;
      return publishNotification({
        appId: refund.appId,
        type: input.type,
        eventKey: `${input.type}:${refund.refundNo}`,
        url,
        data: refundView(refund),
        occurredAt: new Date().toISOString(),
        tradeNo: refund.tradeNo,
        refundNo: refund.refundNo,
      });
    },
  };
}
