import { isoOrNull } from '../../platform/dates';
import type { Contract, Deduction } from './repository';

/**
 * The contract as GET /api/v1/contracts/{contract_no} shows it (SPEC §17), and as its
 * notifications carry it: the plan, where the contract stands, the next deduction's date and
 * amount while it is active, and every deduction attempt so far with its order (`trade_no`).
 */
export function contractView(c: Contract, deductions: Deduction[]) {
  return {
    contract_no: c.contractNo,
    merchant_contract_no: c.merchantContractNo,
    merchant_id: c.merchantId,
    channel_code: c.channelCode,
    status: c.status,
    subject: c.subject,
    plan: {
      period: c.period,
      every: c.every,
      amount: c.amount,
      first_at: isoOrNull(c.firstAt),
      count: c.count,
      total_amount: c.totalAmount,
    },
    sign_url: c.status === 'signing' ? c.signUrl : null,
    channel_contract_id: c.channelContractId,
    signed_at: isoOrNull(c.signedAt),
    finished_at: isoOrNull(c.finishedAt),
    cancelled_by: c.cancelledBy,
    end_reason: c.endReason,
    periods_done: c.periodsDone,
    deducted_count: c.deductedCount,
    deducted_amount: c.deductedAmount,
    next_deduction:
      c.status === 'active' && c.nextDeductionAt && c.nextAmount !== null
        ? { at: isoOrNull(c.nextDeductionAt), amount: c.nextAmount }
        : null,
    last_failure: c.lastFailure
      ? { period: c.lastFailure.period, reason: c.lastFailure.reason, at: isoOrNull(c.lastFailure.at) }
      : null,
    deductions: deductions.map((d) => ({
      period: d.period + 1,
      attempt: d.attempt + 1,
      merchant_order_no: d.merchantOrderNo,
      trade_no: d.tradeNo,
      amount: d.amount,
      status: d.status,
      reason: d.reason,
      created_at: isoOrNull(d.createdAt),
      finished_at: isoOrNull(d.finishedAt),
    })),
    notify_url: c.notifyUrl,
    return_url: c.returnUrl,
    created_at: isoOrNull(c.createdAt),
    updated_at: isoOrNull(c.updatedAt),
  };
}

export type ContractView = ReturnType<typeof contractView>;
