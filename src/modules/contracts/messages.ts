/** The contract workflow's messages (SPEC §17). Deterministic: workflow code imports this. */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ContractClock, ContractPlan, ContractStatus, DeductionWindow } from './rules';

/** One workflow per contract an app offered: its `merchant_contract_no` makes a repeat the same contract. */
export const contractWorkflowId = (appId: string, merchantContractNo: string) =>
  `contract:${appId}:${merchantContractNo}`;

export interface ContractInput {
  appId: string;
  contractNo: string;
  merchantContractNo: string;
  channelCode: string;
  merchantId: string | null;
  subMerchantNo: string | null;
  channelAccountId: number | null;
  subject: string;
  notifyUrl: string;
  returnUrl: string | null;
  plan: ContractPlan;
  /** Where the channel posts the contract's notifications. */
  contractNotifyUrl: string;
  clock: ContractClock;
  /** The channel's deduction window, and how long before a deduction its notice must go (null: none). */
  window: DeductionWindow;
  noticeLeadMs: number | null;
  /** How often a contract waiting for its signature asks the channel (a notification may be lost), real ms. */
  signCheckGapMs: number;
  createdAt: string;
}

/** What a contract's run hands to the next (continue-as-new after each period). */
export interface ContractProgress {
  status: ContractStatus;
  channelContractId: string | null;
  signUrl: string | null;
  signedAt: number | null;
  /** The plan's first deduction, once signed. */
  firstAt: number | null;
  /** The next period's index (0: the first). */
  period: number;
  deductedCount: number;
  deductedAmount: number;
  /** The local day of the last successful deduction (at most one a day). */
  lastSuccessDay: string | null;
}

export interface OpenContractResult {
  contract_no: string;
  status: ContractStatus;
  sign_url: string | null;
  is_idempotent: boolean;
}

/** The first update of a contract's run opens it; a repeat answers it. */
export const openContractUpdate = defineUpdate<OpenContractResult, [{ fingerprint: string }]>('openContract');
/** An app cancels (SPEC §17): answered once the contract has ended at the channel. */
export const cancelContractUpdate = defineUpdate<{ status: ContractStatus }, [{ reason: string | null }]>(
  'cancelContract',
);
/** The channel says the buyer signed, or that the contract ended there (the buyer unsigned). */
export const contractSignedSignal =
  defineSignal<[{ channelContractId: string; at: number }]>('contractSigned');
export const contractTerminatedSignal =
  defineSignal<[{ by: 'buyer' | 'merchant'; at: number }]>('contractTerminated');

/** A contract's create, as its identity: a repeat of the create with other values is refused. */
export function contractFingerprint(p: {
  channelCode: string;
  merchantId: string | null;
  plan: ContractPlan;
  subject: string;
}): string {
  const { plan } = p;
  return [
    p.channelCode,
    p.merchantId ?? '',
    plan.period,
    plan.every,
    plan.amount,
    plan.firstAt ?? '',
    plan.count ?? '',
    plan.totalAmount ?? '',
    p.subject,
  ].join('|');
}
