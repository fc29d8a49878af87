import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { ChannelEvent, TransfersPort } from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Keyring } from '../../platform/crypto/keyring';
import { scaleDuration } from '../../platform/durations';
import { AppError } from '../../platform/errors';
import { generateServiceNo } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import { deliverUpdate } from '../../platform/temporal-updates';
import { workflowCallError } from '../../platform/temporal-failures';
import { CANCEL_FAILURES, createFailures } from './outcomes';
import { searchAttributes } from '../../platform/workflow/definitions';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import {
  cancelTransferUpdate,
  transferCreatedUpdate,
  transferResultSignal,
  transferWorkflowId,
  type TransferWorkflowInput,
} from './messages';
import { TransferRepository, type Transfer } from './repository';
import {
  cancelRefusal,
  isFinalStatus,
  maskAccount,
  sameTransfer,
  TRANSFER_NO_REUSED,
  TRANSFER_POLL_SCHEDULE_MS,
  transferCallbackRefusal,
  type TransferCallbackRefusal,
  transferRefusal,
  type Refusal,
  type TransferIdentity,
  type TransferStep,
} from './rules';
import { transferView, type TransferView } from './view';
import type { transferWorkflow } from './workflow';

/** POST /api/v1/transfer's fields, validated. */
export interface TransferBody {
  merchant_transfer_no: string;
  channel_code: string;
  merchant_id?: string;
  amount: number;
  payee: { type: string; account: string; name?: string };
  remark: string;
  scene?: {
    transfer_scene_id: string;
    report_infos: { info_type: string; info_content: string }[];
    user_recv_perception?: string;
  };
  notify_url: string;
}

export interface TransferServiceDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  timeScale: number;
  channels: ChannelRegistry;
  requestTimeoutMs: number;
  payloadKeys: Keyring;
  /** How channels reach this service (their callbacks). */
  publicBaseUrl: string;
}

/** How long one polling activity follows a transfer before the workflow looks again: a day. */
const FOLLOW_WINDOW_MS = 24 * 60 * 60 * 1000;
/** An unanswered create the channel still does not know an hour later never reached it. */
const NEVER_RECEIVED_AFTER_MS = 60 * 60 * 1000;

const refused = (r: Refusal) => new AppError(r.code, r.message);

/**
 * Transfers (SPEC §11): a request is recorded once per (app, merchant_transfer_no), then handed
 * to the transfer's workflow, which alone asks the channel and moves the row on. Every answer is
 * read from the row.
 */
export class TransferService {
  readonly repository: TransferRepository;
  private readonly merchants: MerchantRepository;
  private readonly accounts: ChannelAccountRepository;

  constructor(private readonly deps: TransferServiceDeps) {
    this.repository = new TransferRepository(deps.db, deps.payloadKeys);
    this.merchants = new MerchantRepository(deps.db);
    this.accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
  }

  /** The app's transfer, or 422 transfer_not_found. */
  async find(appId: string, transferNo: string): Promise<Transfer> {
    const t = await this.repository.find(appId, transferNo);
    if (!t) throw new AppError('transfer_not_found', 'transfer not found');
    return t;
  }

  private port(channelCode: string): TransfersPort | undefined {
    return this.deps.channels.get(channelCode)?.transfers;
  }

  async transfer(appId: string, body: TransferBody, log: Logger): Promise<TransferView> {
    const asked = identityOf(body);
    const existing = await this.repository.findByMerchantTransferNo(appId, body.merchant_transfer_no);
    if (existing) return this.repeat(existing, asked, log);

    const channel = this.deps.channels.get(body.channel_code);
    const port = channel?.transfers;
    const limits = port &&
      channel && {
        minAmount: port.minAmount,
        maxAmount: channel.capabilities.maxAmount,
        payeeTypes: port.payeeTypes,
        currency: channel.capabilities.currency,
      };
    const refusal = transferRefusal(body.channel_code, limits, {
      amount: body.amount,
      payeeType: body.payee.type,
    });
    if (refusal) throw refused(refusal);
    const problem = port!.problemWith?.({
      amount: body.amount,
      payee: body.payee,
      remark: body.remark,
      ...(body.scene ? { scene: sceneOf(body.scene) } : {}),
    });
    if (problem) throw new AppError('invalid_param', problem);

    let account: { id: number; accountNo: string | null } | null = null;
    if (body.merchant_id !== undefined) {
      const merchant = await this.merchants.find(appId, body.merchant_id);
      if (!merchant)
        throw new AppError(
          'invalid_param',
          `"merchant_id" ${body.merchant_id} is not a merchant of this app`,
        );
      const attached = await this.accounts.attachedAt(appId, merchant.merchantId, body.channel_code);
      if (!attached || attached.status !== 'active') {
        throw new AppError(
          'channel_transfer_fail',
          attached
            ? `merchant ${merchant.merchantId}'s account at channel ${body.channel_code} is ${attached.status}: authorise it again`
            : `merchant ${merchant.merchantId} has no account at channel ${body.channel_code}`,
        );
      }
      account = { id: Number(attached.id), accountNo: attached.accountNo };
    }

    const transferNo = generateServiceNo('T');
    const inserted = await this.repository.insert({
      transferNo,
      appId,
      merchantTransferNo: body.merchant_transfer_no,
      channelCode: body.channel_code,
      merchantId: body.merchant_id ?? null,
      channelAccountId: account ? String(account.id) : null,
      subMerchantNo: account?.accountNo ?? null,
      amount: body.amount,
      currency: channel!.capabilities.currency,
      payeeType: body.payee.type,
      payee: { account: body.payee.account, name: body.payee.name ?? null },
      payeeHint: maskAccount(body.payee.account),
      remark: body.remark,
      scene: body.scene ? sceneOf(body.scene) : null,
      notifyUrl: body.notify_url,
    });
    // Another request with the same number was recorded first: this one is its repeat.
    const recorded = inserted
      ? await this.repository.findByNo(transferNo)
      : await this.repository.findByMerchantTransferNo(appId, body.merchant_transfer_no);
    if (!recorded) throw new Error(`transfer ${body.merchant_transfer_no} vanished after its insert`);
    return inserted ? this.followed(recorded, log) : this.repeat(recorded, asked, log);
  }

  /** A request for a transfer already recorded: the same request answers it; another is refused. */
  private async repeat(t: Transfer, asked: TransferIdentity, log: Logger): Promise<TransferView> {
    const payee = this.repository.payeeOf(t);
    const known: TransferIdentity = {
      channelCode: t.channelCode,
      merchantId: t.merchantId,
      amount: Number(t.amount),
      payee: { type: t.payeeType, account: payee.account, name: payee.name },
      remark: t.remark,
      scene: t.scene ?? null,
      notifyUrl: t.notifyUrl,
    };
    if (!sameTransfer(known, asked)) throw new AppError('invalid_param', TRANSFER_NO_REUSED);
    return this.followed(t, log);
  }

  /**
   * The transfer once its channel has been asked: its workflow is started if it is not running
   * (a request recorded but never handed on), and the answer waits for the channel's first word.
   */
  private async followed(t: Transfer, log: Logger): Promise<TransferView> {
    if (t.channelStatus === null && !isFinalStatus(t.status)) {
      try {
        await deliverUpdate(
          () =>
            this.deps.client.workflow.executeUpdateWithStart(transferCreatedUpdate, {
              startWorkflowOperation: this.start(t),
            }),
          {
            client: this.deps.client,
            deadline: Date.now() + this.deps.requestTimeoutMs,
            log,
            withStart: true,
          },
        );
      } catch (err) {
        const answer = workflowCallError(err, createFailures(t.transferNo));
        if (answer !== 'unanswered') throw answer;
        // The run ended meanwhile, or the channel is slow: the row says where the transfer stands.
        // A start that never reached Temporal is not "slow": the client is told to send it again
        // (and the worker's sweep starts it if nobody does).
        if (!(await this.workflowExists(t.transferNo))) {
          throw new AppError(
            'channel_timeout',
            `transfer ${t.transferNo} is recorded but not yet under way: send the same request again to learn how it goes; it is made at most once`,
          );
        }
        log.info('transfer not answered within the request; answered as recorded', {
          transfer_no: t.transferNo,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    const now = (await this.repository.findByNo(t.transferNo)) ?? t;
    if (now.refusedAtCreate) {
      throw new AppError(
        'channel_transfer_fail',
        `transfer ${now.transferNo}: ${now.failReason ?? 'refused by the channel'}`,
      );
    }
    return transferView(now);
  }

  /** Whether the transfer's workflow was ever started (running or ended). */
  private async workflowExists(transferNo: string): Promise<boolean> {
    try {
      await this.deps.client.workflow.getHandle(transferWorkflowId(transferNo)).describe();
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /**
   * Starts the workflow of transfers recorded more than `olderThanMs` ago that never asked their
   * channel and have no workflow (a start that never reached Temporal, and no repeat since); the
   * worker runs it on a tick. Answers how many it started.
   */
  async startNeverSent(olderThanMs: number): Promise<number> {
    let started = 0;
    for (const t of await this.repository.neverSent(olderThanMs)) {
      try {
        await this.deps.client.workflow.start('transferWorkflow', this.startOptions(t));
        started += 1;
      } catch (err) {
        // Running (its create not sent yet) or ended: nothing to start.
        if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
      }
    }
    return started;
  }

  private start(t: Transfer): WithStartWorkflowOperation<typeof transferWorkflow> {
    return new WithStartWorkflowOperation('transferWorkflow', {
      ...this.startOptions(t),
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }

  private startOptions(t: Transfer) {
    const input: TransferWorkflowInput = {
      appId: t.appId,
      transferNo: t.transferNo,
      channelCode: t.channelCode,
      merchantId: t.merchantId,
      callbackUrl: `${this.deps.publicBaseUrl}/api/v1/notify/payment/${t.channelCode}`,
      pollGapsMs: TRANSFER_POLL_SCHEDULE_MS.map((ms) => scaleDuration(ms, this.deps.timeScale)),
      pollForMs: scaleDuration(FOLLOW_WINDOW_MS, this.deps.timeScale),
      neverReceivedAfterMs: scaleDuration(NEVER_RECEIVED_AFTER_MS, this.deps.timeScale),
    };
    return {
      workflowId: transferWorkflowId(t.transferNo),
      taskQueue: this.deps.taskQueue,
      args: [input] as [TransferWorkflowInput],
      // A transfer is asked of its channel by one run only: an ended run is never started again.
      workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
      typedSearchAttributes: new TypedSearchAttributes([
        { key: searchAttributes.AppId, value: t.appId },
        { key: searchAttributes.ChannelCode, value: t.channelCode },
        { key: searchAttributes.BizStatus, value: t.status },
        ...(t.merchantId ? [{ key: searchAttributes.MerchantId, value: t.merchantId }] : []),
      ]),
    };
  }

  /** POST /api/v1/transfer/cancel: asks the channel through the transfer's workflow. */
  async cancel(appId: string, transferNo: string, log: Logger): Promise<TransferView> {
    const t = await this.find(appId, transferNo);
    if (t.status === 'cancelled') return transferView(t);
    const refusal = cancelRefusal(t.status, t.transferNo);
    if (refusal) throw refused(refusal);
    if (!this.port(t.channelCode)?.cancel) {
      throw new AppError('channel_not_support', `channel ${t.channelCode} cannot cancel a transfer`);
    }
    try {
      await deliverUpdate(
        () =>
          this.deps.client.workflow
            .getHandle(transferWorkflowId(t.transferNo))
            .executeUpdate(cancelTransferUpdate),
        {
          client: this.deps.client,
          deadline: Date.now() + this.deps.requestTimeoutMs,
          log,
          workflowId: transferWorkflowId(t.transferNo),
        },
      );
    } catch (err) {
      const answer = workflowCallError(err, CANCEL_FAILURES);
      if (answer !== 'unanswered') throw answer;
      if (!(await this.workflowExists(t.transferNo))) {
        throw new AppError(
          'channel_timeout',
          `transfer ${t.transferNo} is not yet under way: send the cancel again in a moment`,
        );
      }
    }
    const now = await this.find(appId, transferNo);
    if (isFinalStatus(now.status) && now.status !== 'cancelled') {
      throw refused(cancelRefusal(now.status, now.transferNo)!);
    }
    return transferView(now);
  }

  /** SPEC §4: whether a verified transfer callback names a transfer it may be delivered to. */
  async acceptCallback(
    channelCode: string,
    event: Extract<ChannelEvent, { kind: 'transfer' }>,
  ): Promise<{ ok: true; transfer: Transfer } | { ok: false; refusal: TransferCallbackRefusal }> {
    const t = await this.repository.findByNo(event.transferNo);
    const refusal = transferCallbackRefusal(t, channelCode, event);
    return refusal ? { ok: false, refusal } : { ok: true, transfer: t! };
  }

  /** Hands a verified transfer state to its workflow; one that has ended took its result before. */
  async deliverCallback(t: Transfer, event: Extract<ChannelEvent, { kind: 'transfer' }>): Promise<void> {
    if (isFinalStatus(t.status)) return;
    const s = event.state;
    const step: TransferStep = {
      status: s.status,
      channelTransferNo: s.channelTransferNo,
      ...(s.status === 'wait_user_confirm' ? { packageInfo: s.packageInfo } : {}),
      ...(s.status === 'failed' || s.status === 'cancelled' ? { reason: s.reason } : {}),
      ...(s.status === 'success' ? { finishedAt: new Date(s.finishedAt).toISOString() } : {}),
    };
    try {
      await this.deps.client.workflow
        .getHandle(transferWorkflowId(t.transferNo))
        .signal(transferResultSignal, step);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // Ended since the row was read (it took its result before), or never started: then the
      // channel is told to send it again, and the worker's sweep starts the transfer meanwhile.
      const now = await this.repository.findByNo(t.transferNo);
      if (!now || !isFinalStatus(now.status)) throw err;
    }
  }
}

function sceneOf(scene: NonNullable<TransferBody['scene']>) {
  return {
    id: scene.transfer_scene_id,
    reportInfos: scene.report_infos.map((i) => ({ type: i.info_type, content: i.info_content })),
    ...(scene.user_recv_perception ? { userRecvPerception: scene.user_recv_perception } : {}),
  };
}

function identityOf(body: TransferBody): TransferIdentity {
  return {
    channelCode: body.channel_code,
    merchantId: body.merchant_id ?? null,
    amount: body.amount,
    payee: { type: body.payee.type, account: body.payee.account, name: body.payee.name ?? null },
    remark: body.remark,
    scene: body.scene ? sceneOf(body.scene) : null,
    notifyUrl: body.notify_url,
  };
}
