/**
 * The rules of transfers (SPEC §11), pure and workflow-safe: which statuses there are, what a
 * channel's state means for the transfer, which requests are refused before anything is recorded,
 * and when a repeat is the same transfer.
 */
import type { ErrorCode } from '../../platform/errors';

export const TRANSFER_STATUSES = [
  'processing',
  'wait_user_confirm',
  'success',
  'failed',
  'cancelled',
] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/**
 * A transfer's state at its channel as the workflow carries it (serialisable: times as RFC 3339).
 * `cancelling`: the channel took a cancel and has not finished it (shown as `processing`).
 */
export interface TransferStep {
  status: 'processing' | 'wait_user_confirm' | 'cancelling' | 'success' | 'failed' | 'cancelled';
  channelTransferNo: string | null;
  packageInfo?: string | null;
  reason?: string | null;
  finishedAt?: string | null;
}

export function isFinalStatus(status: string): status is 'success' | 'failed' | 'cancelled' {
  return status === 'success' || status === 'failed' || status === 'cancelled';
}

/** The status a client sees for a channel's state. */
export function statusOfStep(step: TransferStep): TransferStatus {
  return step.status === 'cancelling' ? 'processing' : step.status;
}

/** Whether `next` says anything the read model does not have after `known`. */
export function stepChanges(known: TransferStep | undefined, next: TransferStep): boolean {
  if (!known) return true;
  if (isFinalStatus(known.status)) return false;
  return (
    known.status !== next.status ||
    (!!next.packageInfo && next.packageInfo !== known.packageInfo) ||
    (next.channelTransferNo !== null && next.channelTransferNo !== known.channelTransferNo)
  );
}

/** What identifies a transfer request; a repeat of its merchant_transfer_no must match it (SPEC §11). */
export interface TransferIdentity {
  channelCode: string;
  merchantId: string | null;
  amount: number;
  payee: { type: string; account: string; name: string | null };
  remark: string;
  scene: unknown;
  notifyUrl: string;
}

/** Key order never matters: `{a, b}` and `{b, a}` are the same scene. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function sameTransfer(a: TransferIdentity, b: TransferIdentity): boolean {
  return (
    a.channelCode === b.channelCode &&
    a.merchantId === b.merchantId &&
    a.amount === b.amount &&
    a.payee.type === b.payee.type &&
    a.payee.account === b.payee.account &&
    a.payee.name === b.payee.name &&
    a.remark === b.remark &&
    a.notifyUrl === b.notifyUrl &&
    canonical(a.scene) === canonical(b.scene)
  );
}

export const TRANSFER_NO_REUSED = 'merchant_transfer_no already used with a different request';

/** Why a request cannot be done, as the SPEC error it answers. */
export interface Refusal {
  code: ErrorCode;
  message: string;
}

/** What a transfer request needs of its channel (its TransfersPort and capabilities). */
export interface TransferLimits {
  minAmount: number;
  maxAmount: number;
  payeeTypes: readonly string[];
  currency: string;
}

/** Yuan with two decimals, for messages: 10 → `0.10`. */
export function yuan(fen: number): string {
  return `${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`;
}

/**
 * SPEC §11: a channel that has transfers, a payee it pays, an amount within its bounds; `limits`
 * undefined: the channel has no transfers, or durapay has no such channel (as a create answers it).
 */
export function transferRefusal(
  channelCode: string,
  limits: TransferLimits | undefined,
  asked: { amount: number; payeeType: string },
): Refusal | null {
  if (!limits)
    return { code: 'channel_not_support', message: `channel ${channelCode} does not support transfers` };
  if (!limits.payeeTypes.includes(asked.payeeType)) {
    return {
      code: 'invalid_param',
      message: `"payee.type" must be one of [${limits.payeeTypes.join(', ')}] at channel ${channelCode}`,
    };
  }
  if (asked.amount < limits.minAmount) {
    return {
      code: 'invalid_amount',
      message: `"amount" must be at least ${limits.minAmount} (${yuan(limits.minAmount)} ${limits.currency}) at channel ${channelCode}`,
    };
  }
  if (asked.amount > limits.maxAmount) {
    return { code: 'invalid_amount', message: `"amount" exceeds the channel's limit of ${limits.maxAmount}` };
  }
  return null;
}

/** SPEC §11: only a transfer that has not ended can be cancelled. */
export function cancelRefusal(status: TransferStatus, transferNo: string): Refusal | null {
  if (!isFinalStatus(status)) return null;
  return {
    code: 'invalid_param',
    message: `transfer ${transferNo} is ${status}: only a transfer that has not ended can be cancelled`,
  };
}

/** A payee account as people and notifications see it: `o7h3…Xk2Q`, `138****8000`. */
export function maskAccount(account: string): string {
  if (account.length <= 4) return '*'.repeat(account.length);
  if (account.length <= 8)
    return `${account.slice(0, 1)}${'*'.repeat(account.length - 2)}${account.slice(-1)}`;
  return `${account.slice(0, 3)}****${account.slice(-4)}`;
}

/**
 * Gaps between queries of a transfer in flight (unscaled): quick at first, then every 15 minutes
 * (a WeChat Pay transfer may wait a day for its payee; callbacks usually come first).
 */
export const TRANSFER_POLL_SCHEDULE_MS = [10_000, 30_000, 60_000, 120_000, 300_000, 900_000];

/** Why a verified transfer callback is not delivered: its outcome in the callback log, and why. */
export interface TransferCallbackRefusal {
  outcome: 'unknown_transfer' | 'channel_mismatch' | 'amount_mismatch' | 'merchant_mismatch';
  message: string;
}

/**
 * SPEC §4 for transfers: a verified callback is delivered only to a transfer of its channel, for
 * its amount and sub-merchant where the channel names them; null when it may be.
 */
export function transferCallbackRefusal(
  t: { transferNo: string; channelCode: string; amount: number; subMerchantNo: string | null } | null,
  channelCode: string,
  event: { transferNo: string; amount?: number; subMerchantNo?: string },
): TransferCallbackRefusal | null {
  if (!t) return { outcome: 'unknown_transfer', message: `no transfer ${event.transferNo}` };
  if (t.channelCode !== channelCode) {
    return {
      outcome: 'channel_mismatch',
      message: `transfer ${t.transferNo} is not at channel ${channelCode}`,
    };
  }
  if (event.amount !== undefined && event.amount !== Number(t.amount)) {
    return {
      outcome: 'amount_mismatch',
      message: `transfer ${t.transferNo} is ${t.amount}, the callback says ${event.amount}`,
    };
  }
  if (event.subMerchantNo !== undefined && t.subMerchantNo && event.subMerchantNo !== t.subMerchantNo) {
    return { outcome: 'merchant_mismatch', message: `transfer ${t.transferNo} is not of that sub-merchant` };
  }
  return null;
}
