import { ApplicationFailure } from '@temporalio/common';
import { ChannelError, toActivityFailure } from '../../channels/errors';
import { portOf, type Channel, type RefundState } from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';
import type { Logger } from '../../platform/logger';
import { isPermanentDatabaseError, violatedConstraint } from '../../platform/db/errors';
import type { NotificationEvent, NotificationPublisher } from '../notifications';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import {
  OrderRepository,
  tradeContext,
  type ChannelRefund,
  type NewRefund,
  type RefundOutcome,
} from '../orders';
import { RefundRepository } from './repository';
import { refundView } from './view';
import type { AbnormalRefundRequest } from './messages';
import { openAbnormalPayee } from './payee';
import { NEW_STATUS, type WorkerMetrics } from '../../platform/worker-metrics';
import { pollAttempt, type PollOutcome, type PollPlan } from '../../platform/polling';

/** The unique index on (app_id, merchant_refund_no) (migration 0004). */
const MERCHANT_REFUND_NO_INDEX = 'refunds_app_merchant_refund_no';
export const MERCHANT_REFUND_NO_USED = 'merchant_refund_no already used for another order';

/** What the refunds module's activities need. */
export interface RefundActivityDeps {
  db: Database;
  logger: Logger;
  channels: ChannelRegistry;
  /** Refund status changes, counted for the worker's `GET /metrics`. */
  metrics: WorkerMetrics;
  /** Open an abnormal refund's payee, sealed by the service (./payee.ts). */
  payloadKeys: Keyring;
  /** How refund events reach the merchant. */
  publisher: Pick<NotificationPublisher, 'publish'>;
}

/**
 * The activities of refunds, under the names the worker registers them by: the steps of a
 * refund an order has decided (orders' OrderRefundActivities, served here), and the refund
 * workflow's queries, read model and events.
 */
export type RefundActivities = ReturnType<typeof createRefundActivities>;

/**
 * The activities of refunds: the channel calls the order workflow makes for a refund it has
 * decided, the refund workflow's queries, and the refund's read model and events.
 */
export function createRefundActivities(deps: RefundActivityDeps) {
  const orders = new OrderRepository(deps.db);
  const merchants = new MerchantRepository(deps.db);
  const accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
  const refundRepo = new RefundRepository(deps.db);
  const contextOf = (tradeNo: string) => tradeContext(orders, merchants, accounts, tradeNo);

  async function queryRefund(input: { channelCode: string; refundNo: string }): Promise<RefundState> {
    const refunds = portOf(channel(input.channelCode), 'refunds');
    // The refund is recorded before the channel hears of it: no row, no refund to ask about.
    const refund = await refundRepo.findRefundByNo(input.refundNo);
    if (!refund) return { status: 'not_found' };
    const ctx = await contextOf(refund.tradeNo);
    return refunds.query(ctx, { tradeNo: refund.tradeNo, refundNo: input.refundNo });
  }

  function channel(code: string): Channel {
    const found = deps.channels.get(code);
    if (!found) throw new ChannelError('not_supported', `channel ${code} is not supported`);
    return found;
  }

  return {
    async requestChannelRefund(input: ChannelRefund): Promise<RefundState> {
      try {
        const refunds = portOf(channel(input.channelCode), 'refunds');
        return await refunds.refund(await contextOf(input.tradeNo), {
          tradeNo: input.tradeNo,
          refundNo: input.refundNo,
          amount: input.amount,
          totalAmount: input.totalAmount,
          reason: input.reason ?? undefined,
          callbackUrl: input.callbackUrl,
          ...(input.shareReturns?.length ? { shareReturns: input.shareReturns } : {}),
        });
      } catch (err) {
        throw toActivityFailure(err, 'refund');
      }
    },

    async queryChannelRefund(input: { channelCode: string; refundNo: string }): Promise<RefundState> {
      try {
        return await queryRefund(input);
      } catch (err) {
        throw toActivityFailure(err, 'refund_query');
      }
    },

    /**
     * Waits on a refund the channel has (SPEC §3.5): one attempt per gap, ended by a final
     * status, by the polling window's end (after one last query), or, for a refund whose request
     * went unanswered, by any answer at all (the workflow decides what "not found" means, and
     * a refund the channel has is followed as usual from then on).
     */
    async awaitChannelRefund(
      input: { channelCode: string; refundNo: string; unanswered?: boolean } & PollPlan,
    ): Promise<PollOutcome<RefundState>> {
      return pollAttempt(
        input,
        async () => {
          const st = await queryRefund(input);
          const final = st.status === 'success' || st.status === 'failed' || st.status === 'abnormal';
          return final || input.unanswered ? st : undefined;
        },
        (err) =>
          deps.logger.warn('refund query failed; will poll again', {
            refund_no: input.refundNo,
            error: err instanceof Error ? err.message : String(err),
          }),
      );
    },

    /**
     * Asks the channel to pay an abnormal refund out another way (SPEC §3.5). The bank account
     * and the name arrive sealed with the payload keys and are opened here, for the adapter only,
     * which seals them again with the channel's key.
     */
    async applyChannelAbnormalRefund(
      input: { channelCode: string; refundNo: string } & AbnormalRefundRequest,
    ): Promise<RefundState> {
      try {
        const refunds = portOf(channel(input.channelCode), 'refunds');
        if (!refunds.applyAbnormal) {
          throw new ChannelError('not_supported', `channel ${input.channelCode} has no abnormal refunds`);
        }
        const refund = await refundRepo.findRefundByNo(input.refundNo);
        if (!refund?.channelRefundNo) {
          throw new ChannelError('refused', `refund ${input.refundNo} has no channel refund number`);
        }
        const payee = input.sealedPayee
          ? openAbnormalPayee(deps.payloadKeys, input.refundNo, input.sealedPayee)
          : { bankAccount: null, realName: null };
        return await refunds.applyAbnormal(await contextOf(refund.tradeNo), {
          tradeNo: refund.tradeNo,
          refundNo: refund.refundNo,
          channelRefundNo: refund.channelRefundNo,
          method: input.method,
          ...(input.bankType ? { bankType: input.bankType } : {}),
          ...(payee.bankAccount ? { bankAccount: payee.bankAccount } : {}),
          ...(payee.realName ? { realName: payee.realName } : {}),
        });
      } catch (err) {
        throw toActivityFailure(err, 'refund');
      }
    },

    // Status changes are counted only when this call's write made them (retries count once).
    /**
     * Records a refund before the channel hears of it. A merchant_refund_no that another refund
     * of the app already has (another order's: the order's own are found before) is refused for
     * good: SPEC §3.5 `400 invalid_param`, and the order releases what it reserved.
     */
    async recordRefundCreated(refund: NewRefund): Promise<void> {
      try {
        if (await refundRepo.insertRefund(refund))
          deps.metrics.transition('refund', NEW_STATUS, 'processing');
      } catch (err) {
        if (isPermanentDatabaseError(err) && violatedConstraint(err) === MERCHANT_REFUND_NO_INDEX) {
          throw ApplicationFailure.nonRetryable(MERCHANT_REFUND_NO_USED, 'invalid_param');
        }
        throw err;
      }
    },

    async recordRefundChannelNo(input: { refundNo: string; channelRefundNo: string | null }): Promise<void> {
      await refundRepo.setRefundChannelNo(input.refundNo, input.channelRefundNo);
    },

    async recordRefundSettled(input: RefundOutcome): Promise<void> {
      const from = await refundRepo.settleRefund(input.refundNo, input);
      if (from) deps.metrics.transition('refund', from, input.status);
    },

    /**
     * Publishes a refund event to the refund's notify_url, else the order's. With `settled`, the
     * outcome the database refused to record: the event says it rather than the row.
     */
    async notifyRefundEvent(input: {
      refundNo: string;
      type: NotificationEvent;
      settled?: RefundOutcome;
    }): Promise<string | null> {
      const refund = await refundRepo.findRefundByNo(input.refundNo);
      if (!refund) return null;
      const order = await orders.findOrderByTradeNo(refund.tradeNo);
      const url = refund.notifyUrl || order?.notifyUrl;
      if (!url) return null;
      const view = refundView(refund);
      return deps.publisher.publish({
        appId: refund.appId,
        type: input.type,
        eventKey: `${input.type}:${refund.refundNo}`,
        url,
        data: input.settled
          ? {
              ...view,
              status: input.settled.status,
              channel_refund_no: input.settled.channelRefundNo ?? view.channel_refund_no,
              refund_time: input.settled.refundTime,
            }
          : view,
        occurredAt: new Date().toISOString(),
        tradeNo: refund.tradeNo,
        refundNo: refund.refundNo,
      });
    },
  };
}
