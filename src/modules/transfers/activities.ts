import { ApplicationFailure } from '@temporalio/common';
import { ChannelError } from '../../channels/errors';
import {
  portOf,
  type Channel,
  type ChannelContext,
  type TransferInput,
  type TransferPayee,
  type TransferScene,
  type TransferState,
} from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';
import type { Logger } from '../../platform/logger';
import { type WorkerMetrics } from '../../platform/worker-metrics';
import { pollAttempt, type PollOutcome, type PollPlan } from '../../platform/polling';
import type { NotificationPublisher } from '../notifications';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import { accountContextOf } from '../orders';
import { TransferRepository, type Transfer } from './repository';
import { isFinalStatus, statusOfStep, type TransferStatus, type TransferStep } from './rules';
import { transferView } from './view';

/** What the transfers module's activities need. */
export interface TransferActivityDeps {
  db: Database;
  logger: Logger;
  channels: ChannelRegistry;
  metrics: WorkerMetrics;
  /** Open the sealed payee for the channel call. */
  payloadKeys: Keyring;
  publisher: Pick<NotificationPublisher, 'publish'>;
}

export type TransferActivities = ReturnType<typeof createTransferActivities>;

/** The type of the failure of a create the channel refused: nothing was paid. */
export const TRANSFER_REFUSED = 'channel_transfer_fail';
/** The type of the failure of a create whose outcome is unknown: followed by query. */
export const TRANSFER_UNANSWERED = 'channel_timeout';

/** A transfer whose create was never sent, and now never will be. */
const NEVER_SENT: TransferStep = {
  status: 'failed',
  channelTransferNo: null,
  reason: 'the transfer was never sent to the channel (its attempt was lost before it): nothing was paid',
};

/** A channel's state as the workflow carries it; undefined for `not_found`. */
export function stepOf(state: TransferState): TransferStep | undefined {
  switch (state.status) {
    case 'not_found':
      return undefined;
    case 'wait_user_confirm':
      // A channel's query may not repeat the package (WeChat Pay's does not): the one recorded stays.
      return {
        status: state.status,
        channelTransferNo: state.channelTransferNo,
        packageInfo: state.packageInfo || null,
      };
    case 'success':
      return {
        status: 'success',
        channelTransferNo: state.channelTransferNo,
        finishedAt: new Date(state.finishedAt).toISOString(),
      };
    case 'failed':
    case 'cancelled':
      return { status: state.status, channelTransferNo: state.channelTransferNo, reason: state.reason };
    default:
      return { status: state.status, channelTransferNo: state.channelTransferNo };
  }
}

/** The activities of transfers (SPEC §11): the channel calls of one transfer, its row and its events. */
export function createTransferActivities(deps: TransferActivityDeps) {
  const repo = new TransferRepository(deps.db, deps.payloadKeys);
  const merchants = new MerchantRepository(deps.db);
  const accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);

  function channel(code: string): Channel {
    const found = deps.channels.get(code);
    if (!found) throw new ChannelError('not_supported', `channel ${code} is not supported`);
    return found;
  }

  async function transferOf(transferNo: string): Promise<Transfer> {
    const t = await repo.findByNo(transferNo);
    if (!t) throw ApplicationFailure.nonRetryable(`no transfer ${transferNo}`, 'transfer_not_found');
    return t;
  }

  /** The account the transfer pays from: its merchant's at the channel, or the provider's own. */
  async function contextOf(t: Transfer): Promise<ChannelContext> {
    if (!t.merchantId && !t.channelAccountId && !t.subMerchantNo) return {};
    return accountContextOf(
      {
        appId: t.appId,
        merchantId: t.merchantId,
        channelCode: t.channelCode,
        subMerchantNo: t.subMerchantNo,
        channelAccountId: t.channelAccountId,
      },
      merchants,
      accounts,
    );
  }

  /** The create as the channel is asked for it: the row, its payee opened. */
  function inputOf(t: Transfer, callbackUrl: string): TransferInput {
    const payee = repo.payeeOf(t);
    const scene = (t.scene ?? undefined) as TransferScene | undefined;
    return {
      transferNo: t.transferNo,
      amount: Number(t.amount),
      payee: {
        type: t.payeeType as TransferPayee['type'],
        account: payee.account,
        ...(payee.name ? { name: payee.name } : {}),
      },
      remark: t.remark,
      ...(scene ? { scene } : {}),
      callbackUrl,
    };
  }

  /**
   * The package a payee confirms with, for a transfer waiting for them whose package durapay never
   * had (its create went unanswered, or answered before the channel asked for confirmation): WeChat
   * Pay's query does not carry it, and the create under the same number answers the bill it
   * already has, package included (it never makes a second one). Null when the channel gives none.
   */
  async function packageOf(t: Transfer, callbackUrl: string): Promise<string | null> {
    const again = await portOf(channel(t.channelCode), 'transfers').create(
      await contextOf(t),
      inputOf(t, callbackUrl),
    );
    return again.status === 'wait_user_confirm' && again.packageInfo ? again.packageInfo : null;
  }

  async function query(transferNo: string): Promise<TransferState> {
    const t = await transferOf(transferNo);
    return portOf(channel(t.channelCode), 'transfers').query(await contextOf(t), t.transferNo);
  }

  return {
    /**
     * Asks the channel to make the transfer, once: a refusal fails with TRANSFER_REFUSED (nothing
     * was paid); anything else that is not an answer (no answer, an unreadable one) fails with
     * TRANSFER_UNANSWERED, and the workflow asks where the transfer stands instead of asking for
     * it again.
     */
    async createChannelTransfer(input: { transferNo: string; callbackUrl: string }): Promise<TransferStep> {
      const t = await transferOf(input.transferNo);
      // Sent once, ever: a create claimed before (an attempt that died after sending, a run
      // started again) is not sent again; where the transfer stands is asked instead.
      if (!(await repo.claimCreate(t.transferNo))) {
        throw ApplicationFailure.nonRetryable(
          'the create was sent before; its outcome is asked for, not sent again',
          TRANSFER_UNANSWERED,
        );
      }
      let state: TransferState;
      try {
        state = await portOf(channel(t.channelCode), 'transfers').create(
          await contextOf(t),
          inputOf(t, input.callbackUrl),
        );
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof ChannelError && (err.kind === 'refused' || err.kind === 'not_supported')) {
          throw ApplicationFailure.nonRetryable(message, TRANSFER_REFUSED);
        }
        deps.logger.warn('transfer create had no answer; it is followed by query', {
          transfer_no: t.transferNo,
          error: message,
        });
        throw ApplicationFailure.nonRetryable(`no answer from the channel: ${message}`, TRANSFER_UNANSWERED);
      }
      return stepOf(state) ?? { status: 'processing', channelTransferNo: null };
    },

    /**
     * Waits for the transfer to move on from `known` at the channel: one attempt per gap, ended
     * by a state other than `known` (not_found included, for a create that was never answered),
     * or by the end of the window.
     */
    async awaitChannelTransfer(
      input: { transferNo: string; known: TransferStep['status'] | null; callbackUrl?: string } & PollPlan,
    ): Promise<PollOutcome<TransferStep | null>> {
      return pollAttempt<TransferStep | null>(
        input,
        async () => {
          const step = stepOf(await query(input.transferNo));
          // null: the channel has no such transfer, news only for a create that was never answered.
          if (!step) {
            if (input.known !== null) return undefined;
            // Its attempt died before it claimed the create: taking the claim now means it never
            // will be sent (a stalled attempt that wakes finds it taken), so nothing was paid.
            if (await repo.claimCreate(input.transferNo)) return NEVER_SENT;
            return null;
          }
          if (step.status === input.known) return undefined;
          if (step.status === 'wait_user_confirm' && !step.packageInfo && input.callbackUrl) {
            const t = await transferOf(input.transferNo);
            if (!t.packageInfo) return { ...step, packageInfo: await packageOf(t, input.callbackUrl) };
          }
          return step;
        },
        (err) =>
          deps.logger.warn('transfer query failed; will poll again', {
            transfer_no: input.transferNo,
            error: err instanceof Error ? err.message : String(err),
          }),
      );
    },

    /** Asks the channel to cancel; a refusal (too late) fails with TRANSFER_REFUSED and its reason. */
    async cancelChannelTransfer(input: { transferNo: string }): Promise<TransferStep | null> {
      const t = await transferOf(input.transferNo);
      // For people only: a database that does not take it does not stop the cancel.
      await repo.markCancelRequested(t.transferNo).catch((err: unknown) =>
        deps.logger.warn('the cancel request was not recorded', {
          transfer_no: t.transferNo,
          error: err instanceof Error ? err.message : String(err),
        }),
      );
      const transfers = portOf(channel(t.channelCode), 'transfers');
      if (!transfers.cancel) {
        throw ApplicationFailure.nonRetryable(
          `channel ${t.channelCode} cannot cancel a transfer`,
          'channel_not_support',
        );
      }
      try {
        return stepOf(await transfers.cancel(await contextOf(t), t.transferNo)) ?? null;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof ChannelError && err.kind === 'refused') {
          throw ApplicationFailure.nonRetryable(message, TRANSFER_REFUSED);
        }
        throw ApplicationFailure.nonRetryable(`no answer from the channel: ${message}`, 'channel_timeout');
      }
    },

    /** Records the transfer's new state; a final one never changes again. */
    async recordTransferStep(input: {
      transferNo: string;
      step: TransferStep;
      refusedAtCreate?: boolean;
    }): Promise<void> {
      const status = statusOfStep(input.step);
      const from = await repo.recordStep(
        input.transferNo,
        { ...input.step, ...(input.refusedAtCreate ? { refusedAtCreate: true } : {}) },
        status,
      );
      if (from !== null && from !== status) deps.metrics.transition('transfer', from, status);
    },

    /** Announces a transfer that has ended, once per transfer and event. */
    async notifyTransferEvent(input: { transferNo: string }): Promise<string | null> {
      const t = await transferOf(input.transferNo);
      const type = eventOf(t.status);
      if (!type) return null;
      return deps.publisher.publish({
        appId: t.appId,
        type,
        eventKey: `${type}:${t.transferNo}`,
        url: t.notifyUrl,
        data: transferView(t),
        occurredAt: (t.finishedAt ?? new Date()).toISOString(),
      });
    },
  };
}

function eventOf(status: TransferStatus) {
  if (!isFinalStatus(status)) return null;
  return status === 'success'
    ? 'transfer.succeeded'
    : status === 'failed'
      ? 'transfer.failed'
      : 'transfer.cancelled';
}
