import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { ChannelError, toActivityFailure } from '../../channels/errors';
import { portOf, type ChannelComplaint, type ComplaintsPort } from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { scaleDuration } from '../../platform/durations';
import type { Logger } from '../../platform/logger';
import type { NotificationPublisher } from '../notifications';
import type { Complaint } from './model';
import { startOrSignalComplaint } from './service';
import { type ComplaintActor, type ComplaintSummary, type ComplaintSweepInput } from './messages';
import { ComplaintRepository } from './repository';
import { COMPLETE_WITHIN_MS, holdsReply, latestRound, REMIND_AFTER_MS, REPLY_WITHIN_MS } from './rules';
import { complaintEventView } from './view';

export interface ComplaintActivityDeps {
  db: Database;
  logger: Logger;
  channels: ChannelRegistry;
  payloadKeys: Keyring;
  publisher: Pick<NotificationPublisher, 'publish'>;
  /** Starts or signals complaints' workflows (the sweep). */
  client: Client;
  taskQueue: string;
  timeScale: number;
}

export type ComplaintActivities = ReturnType<typeof createComplaintActivities>;

/** The channel's day (China time) `back` days before now, YYYY-MM-DD. */
function chinaDay(now: number, back: number): string {
  return new Date(now + 8 * 3_600_000 - back * 86_400_000).toISOString().slice(0, 10);
}

export function createComplaintActivities(deps: ComplaintActivityDeps) {
  const repo = new ComplaintRepository(deps.db, deps.payloadKeys);
  const scaled = (ms: number) => scaleDuration(ms, deps.timeScale);

  const portFor = (channelCode: string, account: string): ComplaintsPort => {
    const channel = deps.channels.get(channelCode, account);
    if (!channel) {
      throw ApplicationFailure.nonRetryable(
        `channel ${channelCode} account ${account} is not configured`,
        'channel_not_support',
      );
    }
    try {
      return portOf(channel, 'complaints');
    } catch (err) {
      throw toActivityFailure(err, 'complaint');
    }
  };

  const summaryOf = (c: Complaint): ComplaintSummary => ({
    state: c.state,
    appId: c.appId,
    tradeNo: c.tradeNo,
    subMerchantNo: c.subMerchantNo,
    replyDueAt: c.replyDueAt.getTime(),
    completeDueAt: c.completeDueAt.getTime(),
    remindAt: c.replyDueAt.getTime() - scaled(REPLY_WITHIN_MS - REMIND_AFTER_MS),
    replied: c.repliedAt !== null,
    reminded: c.replyDueNotifiedAt !== null,
    overdue: c.overdueAt !== null,
    refundNo: c.refundNo,
    refundAmount: c.refundAmount,
    version: c.version,
    problemType: c.problemType,
  });

  /** Publishes a complaint event to the app of the order it names (its order's notify_url). */
  async function notify(c: Complaint, type: `complaint.${string}`, eventKey: string): Promise<void> {
    if (c.tradeNo === null || c.appId === null) return;
    const order = await repo.orderOf(c.tradeNo);
    if (!order?.notifyUrl) return;
    await deps.publisher.publish({
      appId: c.appId,
      type: type as 'complaint.created',
      eventKey,
      url: order.notifyUrl,
      data: complaintEventView(c),
      occurredAt: new Date().toISOString(),
      tradeNo: c.tradeNo,
    });
  }

  const withChannel = async <T>(what: 'complaint', call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      throw toActivityFailure(err, what);
    }
  };

  /**
   * A merchant's answer (reply, completion) sent to the channel. The channel refusing it has either
   * decided the complaint (processed there: `complaint_processed`) or refused what was sent
   * (`invalid_param`, with the channel's reason), which the complaint's state there tells apart.
   */
  const answer = async (
    port: ComplaintsPort,
    complaintId: string,
    what: string,
    send: () => Promise<void>,
  ) => {
    try {
      await send();
    } catch (err) {
      if (err instanceof ChannelError && err.kind === 'refused') {
        const now = await port.get(complaintId).catch(() => undefined);
        if (now && now.state !== 'processed') {
          throw ApplicationFailure.nonRetryable(
            `the channel refused the ${what}: ${err.message}`,
            'invalid_param',
          );
        }
      }
      throw toActivityFailure(err, 'complaint');
    }
  };

  return {
    /**
     * Reads the complaint and its history at the channel and records them; a new complaint
     * publishes `complaint.created`, a changed one `complaint.updated` (once per version).
     * Null when the channel has no such complaint (a notification durapay cannot read back).
     */
    async syncComplaint(input: {
      channelCode: string;
      account: string;
      complaintId: string;
    }): Promise<ComplaintSummary | null> {
      const port = portFor(input.channelCode, input.account);
      const found = await withChannel('complaint', () => port.get(input.complaintId));
      if (!found) {
        const kept = await repo.find(input.channelCode, input.complaintId);
        return kept ? summaryOf(kept) : null;
      }
      const history = await withChannel('complaint', () => port.history(input.complaintId));
      const named = found.orders[0];
      const order = named ? await repo.orderNamed(input.channelCode, named) : null;
      const { complaint, created } = await repo.record({
        channelCode: input.channelCode,
        account: input.account,
        complaint: found,
        history,
        order: order && {
          appId: order.appId,
          merchantId: order.merchantId,
          tradeNo: order.tradeNo,
          amount: order.amount,
        },
        replyWithinMs: scaled(REPLY_WITHIN_MS),
        completeWithinMs: scaled(COMPLETE_WITHIN_MS),
      });
      const key = `${complaint.channelCode}:${complaint.complaintId}`;
      if (created && !order) {
        deps.logger.warn('complaint names no order durapay has: kept for operators', {
          channel_code: input.channelCode,
          complaint_id: input.complaintId,
        });
      }
      // The row owes its event from the change on (written with it): a retry after a publication
      // failed, or any later sync, publishes what is owed, and its event key keeps it to once.
      const owed = complaint.unpublished;
      if (owed) {
        await notify(
          complaint,
          `complaint.${owed.event}`,
          owed.event === 'created' ? `complaint.created:${key}` : `complaint.updated:${key}:${owed.version}`,
        );
        await repo.markPublished(complaint.channelCode, complaint.complaintId, owed.version);
      }
      return summaryOf(complaint);
    },

    /** Raises `complaint.reply_due` or `complaint.overdue` once (the row remembers it did). */
    async raiseComplaintDeadline(input: {
      channelCode: string;
      complaintId: string;
      kind: 'reply_due' | 'overdue';
    }): Promise<ComplaintSummary | null> {
      const marked = await repo.markDeadline(input.channelCode, input.complaintId, input.kind);
      const c = await repo.find(input.channelCode, input.complaintId);
      if (!c) return null;
      if (marked) {
        deps.logger.warn(
          `complaint ${input.kind === 'overdue' ? 'past its deadline' : 'not replied to in 12 hours'}`,
          {
            channel_code: input.channelCode,
            complaint_id: input.complaintId,
            trade_no: c.tradeNo,
          },
        );
      }
      // Published whether or not this attempt marked it: a retry after the mark still publishes (once, by key).
      await notify(
        c,
        `complaint.${input.kind}`,
        `complaint.${input.kind}:${input.channelCode}:${input.complaintId}:${c.complaintTimes}`,
      );
      return summaryOf(c);
    },

    async replyToComplaint(input: {
      channelCode: string;
      account: string;
      complaintId: string;
      subMerchantNo: string;
      content: string;
      imageIds: string[];
    }): Promise<void> {
      const port = portFor(input.channelCode, input.account);
      // Every attempt looks first: an earlier one whose answer was lost may have reached the
      // channel, and the payer must not read the same reply twice.
      const history = await withChannel('complaint', () => port.history(input.complaintId));
      if (holdsReply(history, input.content)) return;
      await answer(port, input.complaintId, 'reply', () =>
        port.reply(
          { complaintId: input.complaintId, subMerchantNo: input.subMerchantNo },
          input.content,
          input.imageIds,
        ),
      );
    },

    async completeComplaint(input: {
      channelCode: string;
      account: string;
      complaintId: string;
      subMerchantNo: string;
    }): Promise<void> {
      const port = portFor(input.channelCode, input.account);
      // Likewise: an attempt whose answer was lost may have completed it already.
      const now = await withChannel('complaint', () => port.get(input.complaintId));
      if (now?.state === 'processed') return;
      await answer(port, input.complaintId, 'completion', () =>
        port.complete({ complaintId: input.complaintId, subMerchantNo: input.subMerchantNo }),
      );
    },

    /**
     * Approves at the channel the refund request the book has refunded (WeChat Pay 更新退款审批结果),
     * once: it looks first, as a reply does, for an approval an attempt whose answer was lost made.
     * A channel that refuses it has decided the complaint already (a full refund processed it).
     */
    async approveComplaintRefund(input: {
      channelCode: string;
      account: string;
      complaintId: string;
    }): Promise<void> {
      const port = portFor(input.channelCode, input.account);
      if (!port.approveRefund) return;
      const history = await withChannel('complaint', () => port.history(input.complaintId));
      if (latestRound(history).some((s) => s.type === 'MERCHANT_APPROVE_REFUND')) return;
      try {
        await port.approveRefund({ complaintId: input.complaintId });
      } catch (err) {
        if (err instanceof ChannelError && err.kind === 'refused') {
          deps.logger.info('complaint refund approval refused by the channel: it has decided the complaint', {
            channel_code: input.channelCode,
            complaint_id: input.complaintId,
            error: err.message,
          });
          return;
        }
        throw toActivityFailure(err, 'complaint');
      }
    },

    /** The complaint's planned refund (its amount) and, once made, its number in the order's book. */
    async recordComplaintRefund(input: {
      channelCode: string;
      complaintId: string;
      amount: number | null;
      refundNo: string | null;
    }): Promise<void> {
      await repo.recordRefund(input.channelCode, input.complaintId, {
        amount: input.amount,
        refundNo: input.refundNo,
      });
    },

    /** The refund the book made under the complaint's number, for a plan whose caller was lost. */
    async findComplaintRefund(input: {
      appId: string;
      merchantRefundNo: string;
    }): Promise<{ refundNo: string; amount: number; failed: boolean } | null> {
      const found = await repo.refundByMerchantRefundNo(input.appId, input.merchantRefundNo);
      return found && { refundNo: found.refundNo, amount: found.amount, failed: found.status === 'failed' };
    },

    async recordComplaintAction(input: {
      channelCode: string;
      complaintId: string;
      actor: ComplaintActor;
      action: 'reply' | 'refund' | 'complete';
      outcome: 'done' | 'repeated' | 'refused';
      detail: Record<string, unknown>;
    }): Promise<void> {
      await repo.appendAction(input);
    },

    /**
     * The safety net (SPEC §16): registers durapay's notification URL at every account of every
     * channel with complaints, then lists the last days' complaints there and starts or signals
     * the workflow of each one durapay does not hold as the channel does (a lost notification).
     * Answers how many it told.
     */
    async sweepComplaints(
      input: ComplaintSweepInput,
    ): Promise<{ listed: number; told: number; failed: string[] }> {
      let listed = 0;
      let told = 0;
      const failed: string[] = [];
      const now = Date.now();
      for (const code of deps.channels.codes()) {
        for (const account of deps.channels.accounts(code)) {
          const port = deps.channels.get(code, account)?.complaints;
          if (!port) continue;
          let found: ChannelComplaint[];
          try {
            await port.registerNotifyUrl?.(`${input.publicBaseUrl}/api/v1/notify/complaint/${code}`);
            found = await port.list(chinaDay(now, input.days - 1), chinaDay(now, 0));
          } catch (err) {
            // One account that does not answer leaves the others swept; the next run tries it again.
            deps.logger.warn('complaints not swept at an account; the next sweep tries again', {
              channel_code: code,
              account,
              error: err instanceof Error ? err.message : String(err),
            });
            failed.push(`${code}/${account}`);
            continue;
          }
          listed += found.length;
          for (const c of found) {
            const kept = await repo.find(code, c.complaintId);
            const same =
              kept &&
              kept.state === c.state &&
              kept.complaintTimes === c.complaintTimes &&
              kept.awaitsReply === c.awaitsReply &&
              kept.fullRefunded === c.fullRefunded &&
              kept.unpublished === null;
            if (same) continue;
            try {
              await startOrSignalComplaint(deps, code, account, c.complaintId, 'sweep');
              told += 1;
            } catch (err) {
              if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
            }
          }
        }
      }
      if (told > 0) deps.logger.info('complaints found by the sweep', { listed, told });
      return { listed, told, failed };
    },
  };
}
