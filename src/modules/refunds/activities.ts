import { ChannelError, toActivityFailure } from '../../channels/errors';
import { portOf, type Channel, type RefundState } from '../../channels/ports';
import type { NotificationEvent } from '../notifications/rules';
import { MerchantRepository } from '../merchants';
import { OrderRepository, tradeContext } from '../orders';
import type { ActivityDeps } from '../../worker/activities';
import { RefundRepository, type NewRefund } from './repository';
import { refundView } from './view';

/**
 * The activities of refunds: the channel calls the order workflow makes for a refund it has
 * decided, the refund workflow's queries, and the refund's read model and events.
 */
export function createRefundActivities(deps: ActivityDeps) {
  const orders = new OrderRepository(deps.db);
  const merchants = new MerchantRepository(deps.db);
  const refundRepo = new RefundRepository(deps.db);
  const contextOf = (tradeNo: string) => tradeContext(orders, merchants, tradeNo);

  function channel(code: string): Channel {
    const found = deps.channels.get(code);
    if (!found) throw new ChannelError('not_supported', `channel ${code} is not supported`);
    return found;
  }

  return {
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
        const refunds = portOf(channel(input.channelCode), 'refunds');
        return await refunds.refund(await contextOf(input.tradeNo), {
          tradeNo: input.tradeNo,
          refundNo: input.refundNo,
          amount: input.amount,
          totalAmount: input.totalAmount,
          reason: input.reason ?? undefined,
          callbackUrl: input.callbackUrl,
        });
      } catch (err) {
        throw toActivityFailure(err, 'refund');
      }
    },

    async queryChannelRefund(input: { channelCode: string; refundNo: string }): Promise<RefundState> {
      try {
        const refunds = portOf(channel(input.channelCode), 'refunds');
        // The refund is recorded before the channel hears of it: no row, no refund to ask about.
        const refund = await refundRepo.findRefundByNo(input.refundNo);
        if (!refund) return { status: 'not_found' };
        const ctx = await contextOf(refund.tradeNo);
        return await refunds.query(ctx, { tradeNo: refund.tradeNo, refundNo: input.refundNo });
      } catch (err) {
        throw toActivityFailure(err, 'refund_query');
      }
    },

    async recordRefundCreated(refund: NewRefund): Promise<void> {
      await refundRepo.insertRefund(refund);
    },

    async recordRefundChannelNo(input: { refundNo: string; channelRefundNo: string | null }): Promise<void> {
      await refundRepo.setRefundChannelNo(input.refundNo, input.channelRefundNo);
    },

    async recordRefundSettled(input: {
      refundNo: string;
      status: 'success' | 'failed';
      channelRefundNo: string | null;
      refundTime: string | null;
      failReason: string | null;
    }): Promise<void> {
      await refundRepo.settleRefund(input.refundNo, input);
    },

    /** Publishes a refund event to the refund's notify_url, else the order's. */
    async notifyRefundEvent(input: { refundNo: string; type: NotificationEvent }): Promise<string | null> {
      const refund = await refundRepo.findRefundByNo(input.refundNo);
      if (!refund) return null;
      const order = await orders.findOrderByTradeNo(refund.tradeNo);
      const url = refund.notifyUrl || order?.notifyUrl;
      if (!url) return null;
      return deps.publisher.publish({
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
