/**
 * Recurring contracts (SPEC §17): the only code that starts, updates or signals the contract
 * workflow. A create is an update-with-start of `contract:{app_id}:{merchant_contract_no}`, so a
 * repeat, however often sent at once, is the same contract; a contract that has ended is
 * answered from its row. The channels' contract notifications (the buyer signed, or unsigned)
 * are verified by the channel and handed to the contract's workflow as signals.
 */
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { CallbackRequest, ContractEvent } from '../../channels/ports';
import { ChannelError } from '../../channels/errors';
import type { ChannelRegistry } from '../../channels/registry';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';
import { AppError } from '../../platform/errors';
import { generateServiceNo } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import { deliverUpdate } from '../../platform/temporal-updates';
import { workflowCallError } from '../../platform/temporal-failures';
import { searchAttributes } from '../../platform/workflow/definitions';
import { processClock } from '../../platform/clock';
import type { KeysetPosition } from '../../platform/pagination';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import { accountContextOf } from '../orders';
import {
  cancelContractUpdate,
  contractFingerprint,
  contractSignedSignal,
  contractTerminatedSignal,
  contractWorkflowId,
  openContractUpdate,
  type ContractInput,
  type OpenContractResult,
} from './messages';
import { ContractRepository, type ContractFilter } from './repository';
import {
  contractTimeOf,
  isFinalContractStatus,
  type ContractClock,
  type ContractPeriod,
  type ContractStatus,
} from './rules';
import { contractView, type ContractView } from './view';
import type { contractWorkflow } from './workflow';

export interface ContractServiceDeps {
  db: Database;
  client: Client;
  taskQueue: string;
  timeScale: number;
  channels: ChannelRegistry;
  publicBaseUrl: string;
  payloadKeys: Keyring;
  requestTimeoutMs: number;
  /** The contracts' clock; real time scaled by `timeScale` from this process's start unless given. */
  contractClock?: ContractClock;
}

/** POST /api/v1/contracts's fields, validated. */
export interface CreateContractBody {
  merchant_contract_no: string;
  channel_code: string;
  merchant_id?: string;
  plan: {
    period: ContractPeriod;
    every: number;
    amount: number;
    first_at?: string;
    count?: number;
    total_amount?: number;
  };
  subject: string;
  notify_url: string;
  return_url?: string;
}

/** How often a contract waiting for its signature asks the channel, unscaled (a notification may be lost). */
const SIGN_CHECK_GAP_MS = 5 * 60_000;

const NOT_FOUND = () => new AppError('contract_not_found', 'contract not found');

export class ContractService {
  private readonly repo: ContractRepository;
  private readonly merchants: MerchantRepository;
  private readonly accounts: ChannelAccountRepository;
  readonly clock: ContractClock;

  constructor(private readonly deps: ContractServiceDeps) {
    this.repo = new ContractRepository(deps.db);
    this.merchants = new MerchantRepository(deps.db);
    this.accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
    // Under DURAPAY_TIME_SCALE, counted from this process's start, as the sandbox it mounts is.
    this.clock = deps.contractClock ?? processClock(deps.timeScale);
  }

  /** Whether a channel takes contract notifications (it has contracts). */
  hasContracts(channelCode: string): boolean {
    return this.deps.channels.get(channelCode)?.contracts !== undefined;
  }

  async create(appId: string, body: CreateContractBody, log: Logger): Promise<OpenContractResult> {
    const { deps } = this;
    const channel = deps.channels.get(body.channel_code);
    if (!channel?.contracts)
      throw new AppError(
        'channel_not_support',
        `channel ${body.channel_code} does not take recurring contracts`,
      );
    if (body.plan.amount > channel.capabilities.maxAmount)
      throw new AppError(
        'invalid_amount',
        `plan.amount exceeds the channel's limit of ${channel.capabilities.maxAmount}`,
      );
    const firstAt = body.plan.first_at === undefined ? null : Date.parse(body.plan.first_at);
    const plan = {
      period: body.plan.period,
      every: body.plan.every,
      amount: body.plan.amount,
      firstAt,
      count: body.plan.count ?? null,
      totalAmount: body.plan.total_amount ?? null,
    };
    const merchantId = body.merchant_id ?? null;
    // A contract recorded and ended is answered from its row (its workflow is gone).
    const known = await this.repo.findByMerchantContractNo(appId, body.merchant_contract_no);
    if (known) {
      if (
        known.fingerprint !==
        contractFingerprint({ channelCode: body.channel_code, merchantId, plan, subject: body.subject })
      )
        throw new AppError('invalid_param', 'merchant_contract_no already used with different parameters');
      if (isFinalContractStatus(known.status))
        return { contract_no: known.contractNo, status: known.status, sign_url: null, is_idempotent: true };
    }
    // A repeat of a contract under way is answered by its workflow, whatever time it is now and
    // whatever became of the merchant's account since: the checks are the first create's.
    if (!known && firstAt !== null && firstAt < this.now())
      throw new AppError('invalid_param', '"plan.first_at" must not be in the past');
    const merchant = merchantId === null || known ? null : await this.merchants.find(appId, merchantId);
    if (merchantId !== null && !known && !merchant)
      throw new AppError('order_not_found', 'merchant not found');
    const account = merchant
      ? await this.accounts.attachedAt(appId, merchant.merchantId, body.channel_code)
      : null;
    if (merchant && (!account || account.status !== 'active'))
      throw new AppError(
        'channel_create_fail',
        `merchant ${merchant.merchantId} has no active account at channel ${body.channel_code}`,
      );
    const contractNo = generateServiceNo('K');
    const input: ContractInput = {
      appId,
      contractNo,
      merchantContractNo: body.merchant_contract_no,
      channelCode: body.channel_code,
      merchantId,
      subMerchantNo: account?.accountNo ?? null,
      channelAccountId: account?.id ?? null,
      subject: body.subject,
      notifyUrl: body.notify_url,
      returnUrl: body.return_url ?? null,
      plan,
      contractNotifyUrl: `${deps.publicBaseUrl}/api/v1/notify/contract/${body.channel_code}`,
      clock: this.clock,
      window: channel.contracts.window,
      noticeLeadMs: channel.contracts.noticeLeadMs,
      signCheckGapMs: Math.max(1_000, Math.round(SIGN_CHECK_GAP_MS * deps.timeScale)),
      createdAt: new Date().toISOString(),
    };
    const fingerprint = contractFingerprint({
      channelCode: body.channel_code,
      merchantId,
      plan,
      subject: body.subject,
    });
    const start = () =>
      new WithStartWorkflowOperation<typeof contractWorkflow>('contractWorkflow', {
        workflowId: contractWorkflowId(appId, body.merchant_contract_no),
        taskQueue: deps.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        typedSearchAttributes: new TypedSearchAttributes([
          { key: searchAttributes.AppId, value: appId },
          { key: searchAttributes.ChannelCode, value: body.channel_code },
          { key: searchAttributes.BizStatus, value: 'signing' },
          ...(merchantId ? [{ key: searchAttributes.MerchantId, value: merchantId }] : []),
        ]),
      });
    try {
      return await deliverUpdate(
        () =>
          deps.client.workflow.executeUpdateWithStart(openContractUpdate, {
            args: [{ fingerprint }],
            startWorkflowOperation: start(),
          }),
        { client: deps.client, deadline: Date.now() + deps.requestTimeoutMs, log, withStart: true },
      );
    } catch (err) {
      const answer = workflowCallError(err, { codes: 'every' });
      if (answer !== 'unanswered') throw answer;
      throw new AppError(
        'channel_timeout',
        'the outcome is not known yet: the contract was not offered within the request deadline; send the same request again to learn it, the contract is made at most once',
      );
    }
  }

  async find(appId: string, contractNo: string): Promise<ContractView> {
    const c = await this.repo.find(appId, contractNo);
    if (!c) throw NOT_FOUND();
    return contractView(c, await this.repo.deductionsOf(c.contractNo));
  }

  async list(
    filter: ContractFilter,
    page: { limit: number; after?: KeysetPosition },
  ): Promise<{ rows: ContractView[]; next: KeysetPosition | null }> {
    const found = await this.repo.list(filter, page);
    const rows = await Promise.all(
      found.rows.map(async (c) => contractView(c, await this.repo.deductionsOf(c.contractNo))),
    );
    return { rows, next: found.next };
  }

  /** SPEC §17: unsigned at the channel, then cancelled; a deduction in flight ends paid or reversed. */
  async cancel(appId: string, contractNo: string, reason: string | null, log: Logger): Promise<ContractView> {
    const c = await this.repo.find(appId, contractNo);
    if (!c) throw NOT_FOUND();
    if (c.status === 'cancelled') return this.find(appId, contractNo);
    if (isFinalContractStatus(c.status))
      throw new AppError(
        'contract_ended',
        `the contract has ${c.status === 'ended' ? 'ended' : 'failed'}: there is nothing to cancel`,
      );
    const workflowId = contractWorkflowId(appId, c.merchantContractNo);
    try {
      await deliverUpdate(
        () =>
          this.deps.client.workflow
            .getHandle(workflowId)
            .executeUpdate(cancelContractUpdate, { args: [{ reason }] }),
        { client: this.deps.client, deadline: Date.now() + this.deps.requestTimeoutMs, log, workflowId },
      );
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) {
        const answer = workflowCallError(err, { codes: 'every', endedRunIsUnanswered: true });
        if (answer !== 'unanswered') throw answer;
        throw new AppError(
          'channel_timeout',
          'the contract is being cancelled: the channel has not confirmed the unsigning yet; send the cancel again to learn how it ended',
        );
      }
    }
    const now = await this.find(appId, contractNo);
    if (now.status !== 'cancelled' && !isFinalContractStatus(now.status as ContractStatus))
      throw new AppError(
        'channel_timeout',
        'the contract is being cancelled; send the cancel again to learn how it ended',
      );
    return now;
  }

  /**
   * A contract notification from its channel (SPEC §17), verified and decoded by the channel,
   * handed to the contract's workflow. One naming no contract of durapay's is refused.
   */
  async acceptNotification(
    channelCode: string,
    req: CallbackRequest,
  ): Promise<
    { verified: true; contractNo: string; kind: ContractEvent['kind'] } | { verified: false; reason: string }
  > {
    const contracts = this.deps.channels.get(channelCode)?.contracts;
    if (!contracts) return { verified: false, reason: 'no such channel takes contracts' };
    let event: ContractEvent;
    try {
      event = await contracts.decodeNotification(req);
    } catch (err) {
      if (err instanceof ChannelError) return { verified: false, reason: err.message };
      throw err;
    }
    const c = await this.repo.findByNo(event.contractNo);
    if (!c || c.channelCode !== channelCode) return { verified: false, reason: 'no such contract' };
    const handle = this.deps.client.workflow.getHandle(contractWorkflowId(c.appId, c.merchantContractNo));
    try {
      if (event.kind === 'signed')
        await handle.signal(contractSignedSignal, {
          channelContractId: event.channelContractId,
          at: event.at.getTime(),
        });
      else await handle.signal(contractTerminatedSignal, { by: event.by, at: event.at.getTime() });
    } catch (err) {
      // A contract that has ended has nothing to hear (it ended at the channel first) …
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // … but a page opened before its end may still be signed at a channel that keeps its sign
      // page open (WeChat Pay's): nothing would ever deduct under that signature, so it is
      // unsigned now. Should the channel not answer, the notification is refused and sent again.
      if (event.kind === 'signed') {
        const ctx =
          c.merchantId || c.channelAccountId || c.subMerchantNo
            ? await accountContextOf(c, this.merchants, this.accounts)
            : {};
        await contracts.terminate(ctx, {
          contractNo: c.contractNo,
          channelContractId: event.channelContractId,
          reason: 'the contract had ended before it was signed',
        });
      }
    }
    return { verified: true, contractNo: c.contractNo, kind: event.kind };
  }

  private now(): number {
    return contractTimeOf(this.clock, Date.now());
  }
}
