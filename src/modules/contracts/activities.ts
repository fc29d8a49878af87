/**
 * The contract workflow's side effects (SPEC §17): the channel's contract calls, the contract's
 * rows, its notifications, and each deduction, which is an ordinary order made through the
 * orders module (its create is idempotent on the deduction's merchant order number, so a
 * retried activity never deducts twice).
 */
import { ApplicationFailure } from '@temporalio/common';
import { ChannelError, toActivityFailure } from '../../channels/errors';
import { portOf, type ChannelContext, type ContractsPort } from '../../channels/ports';
import type { ChannelRegistry } from '../../channels/registry';
import type { Keyring } from '../../platform/crypto/keyring';
import type { Database } from '../../platform/db';
import { AppError } from '../../platform/errors';
import type { Logger } from '../../platform/logger';
import { pollAttempt, type PollOutcome } from '../../platform/polling';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import type { NotificationEvent, NotificationPublisher } from '../notifications';
import { accountContextOf, isPaidStatus, OrderRepository, type OrderService } from '../orders';
import { contractFingerprint, type ContractInput } from './messages';
import { ContractRepository, type Contract } from './repository';
import { CONTRACT_PAY_METHOD, deductionOrderNo } from './rules';
import { contractView } from './view';

export interface ContractActivityDeps {
  db: Database;
  logger: Logger;
  channels: ChannelRegistry;
  payloadKeys: Keyring;
  publisher: Pick<NotificationPublisher, 'publish'>;
  /** Where deductions are made: the orders module's create, as an app's would be. */
  orders: Pick<OrderService, 'create'>;
  timeScale: number;
}

/** A deduction attempt as the workflow follows it: paid, failed (with the channel's reason), or not decided yet. */
export type DeductionOutcome =
  | { status: 'paid'; tradeNo: string }
  | { status: 'failed'; tradeNo: string | null; reason: string }
  | { status: 'pending'; tradeNo: string | null };

/** What a query of the contract found, as a workflow carries it (real-time epoch ms). */
export type ContractLook =
  | { status: 'signing' | 'not_found' }
  | { status: 'active'; channelContractId: string; signedAt: number }
  | { status: 'terminated'; by: 'buyer' | 'merchant' };

/** How a deduction's order is followed: often at first, then every minute (unscaled). */
const DEDUCTION_FOLLOW_GAPS_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

export type ContractActivities = ReturnType<typeof createContractActivities>;

export function createContractActivities(deps: ContractActivityDeps) {
  const repo = new ContractRepository(deps.db);
  const merchants = new MerchantRepository(deps.db);
  const accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
  const orderRows = new OrderRepository(deps.db);
  const scaled = (ms: number) => Math.max(1, Math.round(ms * deps.timeScale));

  const port = (channelCode: string): ContractsPort => portOf(deps.channels.get(channelCode)!, 'contracts');

  async function contractOf(contractNo: string): Promise<Contract> {
    const c = await repo.findByNo(contractNo);
    if (!c) throw ApplicationFailure.nonRetryable(`no contract ${contractNo}`, 'contract_not_found');
    return c;
  }

  async function contextOf(c: {
    appId: string;
    merchantId: string | null;
    channelCode: string;
    subMerchantNo: string | null;
    channelAccountId: number | null;
  }): Promise<ChannelContext> {
    if (!c.merchantId && !c.channelAccountId && !c.subMerchantNo) return {};
    return accountContextOf(c, merchants, accounts);
  }

  async function publish(c: Contract, type: NotificationEvent, key: string = type): Promise<void> {
    await deps.publisher.publish({
      appId: c.appId,
      type,
      eventKey: `${key}:${c.contractNo}`,
      url: c.notifyUrl,
      data: contractView(c, await repo.deductionsOf(c.contractNo)),
      occurredAt: new Date().toISOString(),
    });
  }

  /** The order a deduction attempt made, as it stands: its outcome for the contract. */
  async function deductionState(c: Contract, period: number, attempt: number): Promise<DeductionOutcome> {
    const d = await repo.findDeduction(c.contractNo, period, attempt);
    if (!d)
      throw ApplicationFailure.nonRetryable(
        `no deduction ${period}/${attempt} of ${c.contractNo}`,
        'contract_not_found',
      );
    if (d.status === 'paid') return { status: 'paid', tradeNo: d.tradeNo! };
    if (d.status === 'failed') return { status: 'failed', tradeNo: d.tradeNo, reason: d.reason ?? 'failed' };
    const o = await orderRows.findOrderByMerchantOrderNo(c.appId, d.merchantOrderNo);
    if (!o) return { status: 'pending', tradeNo: null };
    const settle = async (outcome: DeductionOutcome) => {
      await repo.settleDeduction({
        contractNo: c.contractNo,
        period,
        attempt,
        tradeNo: o.tradeNo,
        status: outcome.status,
        reason: outcome.status === 'failed' ? outcome.reason : null,
      });
      return outcome;
    };
    if (isPaidStatus(o.status)) return settle({ status: 'paid', tradeNo: o.tradeNo });
    if (o.status === 'closed')
      return settle({
        status: 'failed',
        tradeNo: o.tradeNo,
        reason:
          o.closeReason === 'reversed'
            ? 'the deduction got no answer in time and was reversed: nothing was taken'
            : 'the channel refused the deduction',
      });
    return { status: 'pending', tradeNo: o.tradeNo };
  }

  return {
    /**
     * Offers the contract at its channel and records it (SPEC §17): the channel is asked first
     * (it keys the offer by the contract's number, so a retry gets the same page), and the row is
     * written once the signing page is known. A channel that refuses leaves no row: the create
     * answers the refusal and may be sent again.
     */
    async openContractAtChannel({ input }: { input: ContractInput }): Promise<{ signUrl: string }> {
      const recorded = await repo.findByMerchantContractNo(input.appId, input.merchantContractNo);
      if (recorded && recorded.contractNo !== input.contractNo)
        throw ApplicationFailure.nonRetryable('merchant_contract_no already used', 'invalid_param');
      if (recorded?.signUrl) return { signUrl: recorded.signUrl };
      let signUrl: string;
      try {
        signUrl = await port(input.channelCode).signUrl(await contextOf(input), {
          contractNo: input.contractNo,
          subject: input.subject,
          plan: { period: input.plan.period, every: input.plan.every, amount: input.plan.amount },
          notifyUrl: input.contractNotifyUrl,
          ...(input.returnUrl ? { returnUrl: input.returnUrl } : {}),
        });
      } catch (err) {
        throw toActivityFailure(err, 'create');
      }
      await repo.insert({
        contractNo: input.contractNo,
        appId: input.appId,
        merchantContractNo: input.merchantContractNo,
        merchantId: input.merchantId,
        channelCode: input.channelCode,
        channelAccountId: input.channelAccountId,
        subMerchantNo: input.subMerchantNo,
        period: input.plan.period,
        every: input.plan.every,
        amount: input.plan.amount,
        firstAt: input.plan.firstAt === null ? null : new Date(input.plan.firstAt),
        count: input.plan.count,
        totalAmount: input.plan.totalAmount,
        subject: input.subject,
        notifyUrl: input.notifyUrl,
        returnUrl: input.returnUrl,
        signUrl,
        fingerprint: contractFingerprint(input),
      });
      return { signUrl };
    },

    async queryContractAtChannel({ contractNo }: { contractNo: string }): Promise<ContractLook> {
      const c = await contractOf(contractNo);
      const st = await port(c.channelCode).query(await contextOf(c), contractNo);
      switch (st.status) {
        case 'active':
          return {
            status: 'active',
            channelContractId: st.channelContractId,
            signedAt: st.signedAt.getTime(),
          };
        case 'terminated':
          return { status: 'terminated', by: st.by };
        default:
          return { status: st.status };
      }
    },

    /** The buyer signed: recorded, and `contract.signed` sent (once). */
    async recordContractSigned(s: {
      contractNo: string;
      channelContractId: string;
      signedAt: number;
      firstAt: number;
    }): Promise<void> {
      await repo.markSigned({ ...s, signedAt: new Date(s.signedAt), firstAt: new Date(s.firstAt) });
      await publish(await contractOf(s.contractNo), 'contract.signed');
    },

    async recordNextDeduction(n: { contractNo: string; at: number; amount: number }): Promise<void> {
      await repo.recordNextDeduction({ ...n, at: new Date(n.at) });
    },

    /** WeChat Pay's 预扣费通知 (SPEC §17): the buyer is told of the deduction before it comes. */
    async sendDeductionNotice({ contractNo, amount }: { contractNo: string; amount: number }): Promise<void> {
      const c = await contractOf(contractNo);
      const contracts = port(c.channelCode);
      if (!contracts.notice) return;
      try {
        await contracts.notice(await contextOf(c), { channelContractId: c.channelContractId!, amount });
      } catch (err) {
        if (err instanceof ChannelError && err.kind === 'refused')
          throw ApplicationFailure.nonRetryable(err.message, 'channel_create_fail');
        throw err;
      }
    },

    /**
     * One deduction attempt: its row first, then its order, made by the orders module like a
     * barcode payment (asked of the channel once; an answer lost is reversed). Answers paid,
     * failed with the channel's reason, or pending (the channel is still taking it, or its answer
     * was lost and the order is reversing it: `awaitDeduction` follows it).
     */
    async makeDeduction(a: {
      contractNo: string;
      period: number;
      attempt: number;
      amount: number;
    }): Promise<DeductionOutcome> {
      const c = await contractOf(a.contractNo);
      const merchantOrderNo = deductionOrderNo(c.contractNo, a.period, a.attempt);
      const d = await repo.insertDeduction({ ...a, merchantOrderNo });
      if (d.status !== 'pending') return deductionState(c, a.period, a.attempt);
      const settle = (outcome: DeductionOutcome) =>
        repo
          .settleDeduction({
            ...a,
            tradeNo: outcome.tradeNo,
            status: outcome.status,
            reason: outcome.status === 'failed' ? outcome.reason : null,
          })
          .then(() => outcome);
      try {
        const made = await deps.orders.create(
          c.appId,
          {
            merchant_order_no: merchantOrderNo,
            pay_method: CONTRACT_PAY_METHOD,
            amount: d.amount,
            subject: c.subject,
            notify_url: c.notifyUrl,
            channel_code: c.channelCode,
            ...(c.merchantId ? { merchant_id: c.merchantId } : {}),
            // Under the account the buyer signed with, whatever the merchant's account is now.
            contract: {
              contractNo: c.contractNo,
              channelContractId: c.channelContractId!,
              subMerchantNo: c.subMerchantNo,
              channelAccountId: c.channelAccountId,
            },
          },
          deps.logger,
        );
        if (made.status === 'paid') return settle({ status: 'paid', tradeNo: made.trade_no });
        return settle({ status: 'pending', tradeNo: made.trade_no });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.code === 'channel_timeout') {
          // The order is being reversed (its answer was lost): followed to its end. No order at
          // all: the create never reached its workflow, and is sent again (it is idempotent).
          if (await orderRows.findOrderByMerchantOrderNo(c.appId, merchantOrderNo))
            return deductionState(c, a.period, a.attempt);
          throw err;
        }
        // Refused (the channel's words are in the message): the order, when one was made, is closed.
        deps.logger.warn('a deduction was refused', {
          contract_no: c.contractNo,
          period: a.period + 1,
          reason: err.message,
        });
        const order = await orderRows.findOrderByMerchantOrderNo(c.appId, merchantOrderNo);
        if (order && isPaidStatus(order.status)) return deductionState(c, a.period, a.attempt);
        return settle({ status: 'failed', tradeNo: order?.tradeNo ?? null, reason: err.message });
      }
    },

    /** Follows a deduction's order until it ends (paid, or closed), on the infrequent-polling schedule. */
    async awaitDeduction(a: {
      contractNo: string;
      period: number;
      attempt: number;
      /** When this follow gives up and answers `pending` (the workflow follows it again). */
      untilMs: number;
    }): Promise<DeductionOutcome> {
      const c = await contractOf(a.contractNo);
      const outcome: PollOutcome<DeductionOutcome> = await pollAttempt(
        {
          gapsMs: DEDUCTION_FOLLOW_GAPS_MS.map(scaled),
          // Every order ends (paid, or reversed and closed); the deadline only bounds one follow.
          deadlineMs: a.untilMs,
          askAtDeadline: true,
        },
        async () => {
          const st = await deductionState(c, a.period, a.attempt);
          return st.status === 'pending' ? undefined : st;
        },
        (err) =>
          deps.logger.warn('a deduction could not be looked at', {
            contract_no: c.contractNo,
            error: String(err),
          }),
      );
      if ('due' in outcome) return deductionState(c, a.period, a.attempt);
      return outcome.answer;
    },

    /** A period done: the tallies, and `contract.deduction_failed` when its last attempt failed. */
    async recordPeriod(p: {
      contractNo: string;
      periodsDone: number;
      deductedCount: number;
      deductedAmount: number;
      failedReason: string | null;
    }): Promise<void> {
      await repo.recordPeriod(p);
      if (p.failedReason !== null) {
        await publish(
          await contractOf(p.contractNo),
          'contract.deduction_failed',
          `contract.deduction_failed:${p.periodsDone}`,
        );
      }
    },

    /** Unsigns at the channel; one the channel has ended already answers as done. */
    async terminateContractAtChannel({
      contractNo,
      reason,
    }: {
      contractNo: string;
      reason: string;
    }): Promise<void> {
      const c = await contractOf(contractNo);
      await port(c.channelCode).terminate(await contextOf(c), {
        contractNo,
        channelContractId: c.channelContractId,
        reason,
      });
    },

    /** The contract's end, recorded once, and `contract.cancelled` or `contract.ended` sent. */
    async finishContract(f: {
      contractNo: string;
      status: 'cancelled' | 'ended' | 'failed';
      reason: string;
      cancelledBy: 'merchant' | 'buyer' | null;
    }): Promise<void> {
      await repo.finish(f);
      if (f.status === 'failed') return;
      await publish(
        await contractOf(f.contractNo),
        f.status === 'cancelled' ? 'contract.cancelled' : 'contract.ended',
      );
    },
  };
}
