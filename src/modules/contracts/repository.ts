/**
 * Recurring contracts (SPEC §17): the only code that touches `contracts` and
 * `contract_deductions`. Rows are written by the contract workflow's activities. One data-access
 * style: SQL through sequelize.query, as the complaints' and reconciliation's repositories.
 */
import { QueryTypes, type Transaction } from 'sequelize';
import type { Database } from '../../platform/db';
import { keysetAt, keysetPageOf, type KeysetPage, type KeysetResult } from '../../platform/pagination';
import type { ContractPeriod, ContractStatus } from './rules';

export interface Contract {
  contractNo: string;
  appId: string;
  merchantContractNo: string;
  merchantId: string | null;
  channelCode: string;
  channelAccountId: number | null;
  subMerchantNo: string | null;
  channelContractId: string | null;
  status: ContractStatus;
  period: ContractPeriod;
  every: number;
  amount: number;
  firstAt: Date | null;
  count: number | null;
  totalAmount: number | null;
  subject: string;
  notifyUrl: string;
  returnUrl: string | null;
  signUrl: string | null;
  signedAt: Date | null;
  finishedAt: Date | null;
  cancelledBy: 'merchant' | 'buyer' | null;
  endReason: string | null;
  periodsDone: number;
  deductedCount: number;
  deductedAmount: number;
  nextDeductionAt: Date | null;
  nextAmount: number | null;
  /** The create's identity (messages.ts contractFingerprint): a repeat with other values is refused. */
  fingerprint: string;
  lastFailure: { period: number; reason: string; at: Date } | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Deduction {
  contractNo: string;
  period: number;
  attempt: number;
  merchantOrderNo: string;
  tradeNo: string | null;
  amount: number;
  status: 'pending' | 'paid' | 'failed';
  reason: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

interface Row {
  contract_no: string;
  app_id: string;
  merchant_contract_no: string;
  merchant_id: string | null;
  channel_code: string;
  channel_account_id: string | null;
  sub_merchant_no: string | null;
  channel_contract_id: string | null;
  status: ContractStatus;
  period: ContractPeriod;
  every: number;
  amount: string;
  first_at: Date | null;
  period_count: number | null;
  total_amount: string | null;
  subject: string;
  notify_url: string;
  return_url: string | null;
  sign_url: string | null;
  signed_at: Date | null;
  finished_at: Date | null;
  cancelled_by: 'merchant' | 'buyer' | null;
  end_reason: string | null;
  periods_done: number;
  deducted_count: number;
  deducted_amount: string;
  next_deduction_at: Date | null;
  next_amount: string | null;
  fingerprint: string;
  last_failure: string | null;
  last_failed_period: number | null;
  last_failed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  position?: string;
}

interface DeductionRow {
  contract_no: string;
  period: number;
  attempt: number;
  merchant_order_no: string;
  trade_no: string | null;
  amount: string;
  status: Deduction['status'];
  reason: string | null;
  created_at: Date;
  finished_at: Date | null;
}

const num = (v: string | null) => (v === null ? null : Number(v));

function contractOf(r: Row): Contract {
  return {
    contractNo: r.contract_no,
    appId: r.app_id,
    merchantContractNo: r.merchant_contract_no,
    merchantId: r.merchant_id,
    channelCode: r.channel_code,
    channelAccountId: num(r.channel_account_id),
    subMerchantNo: r.sub_merchant_no,
    channelContractId: r.channel_contract_id,
    status: r.status,
    period: r.period,
    every: r.every,
    amount: Number(r.amount),
    firstAt: r.first_at,
    count: r.period_count,
    totalAmount: num(r.total_amount),
    subject: r.subject,
    notifyUrl: r.notify_url,
    returnUrl: r.return_url,
    signUrl: r.sign_url,
    signedAt: r.signed_at,
    finishedAt: r.finished_at,
    cancelledBy: r.cancelled_by,
    endReason: r.end_reason,
    periodsDone: r.periods_done,
    deductedCount: r.deducted_count,
    deductedAmount: Number(r.deducted_amount),
    nextDeductionAt: r.next_deduction_at,
    nextAmount: num(r.next_amount),
    fingerprint: r.fingerprint,
    lastFailure:
      r.last_failure !== null && r.last_failed_period !== null && r.last_failed_at !== null
        ? { period: r.last_failed_period, reason: r.last_failure, at: r.last_failed_at }
        : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function deductionOf(r: DeductionRow): Deduction {
  return {
    contractNo: r.contract_no,
    period: r.period,
    attempt: r.attempt,
    merchantOrderNo: r.merchant_order_no,
    tradeNo: r.trade_no,
    amount: Number(r.amount),
    status: r.status,
    reason: r.reason,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
  };
}

/** A contract as its workflow first records it: offered, its signing page known. */
export interface NewContract {
  contractNo: string;
  appId: string;
  merchantContractNo: string;
  merchantId: string | null;
  channelCode: string;
  channelAccountId: number | null;
  subMerchantNo: string | null;
  period: ContractPeriod;
  every: number;
  amount: number;
  firstAt: Date | null;
  count: number | null;
  totalAmount: number | null;
  subject: string;
  notifyUrl: string;
  returnUrl: string | null;
  signUrl: string;
  fingerprint: string;
}

export interface ContractFilter {
  appId: string;
  status?: ContractStatus;
  merchantId?: string;
  channelCode?: string;
}

export class ContractRepository {
  constructor(private readonly db: Database) {}

  private rows<T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction?: Transaction,
  ) {
    return this.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });
  }

  /** Records the contract once per app and number; answers the row (the earlier one on a repeat). */
  async insert(c: NewContract): Promise<Contract> {
    await this.db.sequelize.query(
      `INSERT INTO contracts (contract_no, app_id, merchant_contract_no, merchant_id, channel_code, channel_account_id,
                              sub_merchant_no, status, period, every, amount, first_at, period_count, total_amount,
                              subject, notify_url, return_url, sign_url, next_amount, fingerprint)
       VALUES (:contractNo, :appId, :merchantContractNo, :merchantId, :channelCode, :channelAccountId,
               :subMerchantNo, 'signing', :period, :every, :amount, :firstAt, :count, :totalAmount,
               :subject, :notifyUrl, :returnUrl, :signUrl, :amount, :fingerprint)
       ON CONFLICT (app_id, merchant_contract_no) DO NOTHING`,
      { replacements: { ...c } },
    );
    const found = await this.findByMerchantContractNo(c.appId, c.merchantContractNo);
    if (!found) throw new Error(`contract ${c.contractNo} vanished as it was recorded`);
    return found;
  }

  async findByNo(contractNo: string): Promise<Contract | null> {
    const [row] = await this.rows<Row>('SELECT * FROM contracts WHERE contract_no = :contractNo', {
      contractNo,
    });
    return row ? contractOf(row) : null;
  }

  /** An app's contract: another app's is not found. */
  async find(appId: string, contractNo: string): Promise<Contract | null> {
    const [row] = await this.rows<Row>(
      'SELECT * FROM contracts WHERE contract_no = :contractNo AND app_id = :appId',
      {
        contractNo,
        appId,
      },
    );
    return row ? contractOf(row) : null;
  }

  async findByMerchantContractNo(appId: string, merchantContractNo: string): Promise<Contract | null> {
    const [row] = await this.rows<Row>(
      'SELECT * FROM contracts WHERE app_id = :appId AND merchant_contract_no = :merchantContractNo',
      { appId, merchantContractNo },
    );
    return row ? contractOf(row) : null;
  }

  async list(filter: ContractFilter, page: KeysetPage): Promise<KeysetResult<Contract>> {
    const where = ['app_id = :appId'];
    if (filter.status) where.push('status = :status');
    if (filter.merchantId) where.push('merchant_id = :merchantId');
    if (filter.channelCode) where.push('channel_code = :channelCode');
    if (page.after) where.push('(created_at, contract_no) < (CAST(:afterAt AS timestamptz), :afterKey)');
    const rows = await this.rows<Row>(
      `SELECT *, ${keysetAt('created_at')} AS position FROM contracts
        WHERE ${where.join(' AND ')}
        ORDER BY created_at DESC, contract_no DESC
        LIMIT :limit`,
      {
        ...filter,
        limit: page.limit + 1,
        afterAt: page.after?.at ?? null,
        afterKey: page.after?.key ?? null,
      },
    );
    const result = keysetPageOf(rows, page.limit, (r) => ({ at: r.position!, key: r.contract_no }));
    return { rows: result.rows.map(contractOf), next: result.next };
  }

  async markSigned(c: {
    contractNo: string;
    channelContractId: string;
    signedAt: Date;
    firstAt: Date;
  }): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE contracts SET status = 'active', channel_contract_id = :channelContractId, signed_at = :signedAt,
                            first_at = :firstAt, updated_at = now()
        WHERE contract_no = :contractNo AND status = 'signing'`,
      { replacements: c },
    );
  }

  async recordNextDeduction(c: { contractNo: string; at: Date; amount: number }): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE contracts SET next_deduction_at = :at, next_amount = :amount, updated_at = now()
        WHERE contract_no = :contractNo AND status = 'active'`,
      { replacements: c },
    );
  }

  async recordPeriod(c: {
    contractNo: string;
    periodsDone: number;
    deductedCount: number;
    deductedAmount: number;
    failedReason: string | null;
  }): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE contracts SET periods_done = GREATEST(periods_done, :periodsDone), deducted_count = :deductedCount,
                            deducted_amount = :deductedAmount, next_deduction_at = NULL,
                            last_failure = COALESCE(:failedReason, last_failure),
                            last_failed_period = CASE WHEN :failedReason IS NULL THEN last_failed_period ELSE :periodsDone END,
                            last_failed_at = CASE WHEN :failedReason IS NULL THEN last_failed_at ELSE now() END,
                            updated_at = now()
        WHERE contract_no = :contractNo`,
      { replacements: c },
    );
  }

  /** The contract's end, once: a repeat changes nothing. True when this call ended it. */
  async finish(c: {
    contractNo: string;
    status: 'cancelled' | 'ended' | 'failed';
    reason: string;
    cancelledBy: 'merchant' | 'buyer' | null;
  }): Promise<boolean> {
    const [, count] = await this.db.sequelize.query(
      `UPDATE contracts SET status = :status, end_reason = :reason, cancelled_by = :cancelledBy, finished_at = now(),
                            next_deduction_at = NULL, next_amount = NULL, updated_at = now()
        WHERE contract_no = :contractNo AND status IN ('signing', 'active')`,
      { replacements: c },
    );
    return (count as unknown as number) > 0;
  }

  // ---- deductions ----

  /** Records a deduction's attempt before its order is asked for; answers it (the earlier one on a repeat). */
  async insertDeduction(d: {
    contractNo: string;
    period: number;
    attempt: number;
    merchantOrderNo: string;
    amount: number;
  }): Promise<Deduction> {
    await this.db.sequelize.query(
      `INSERT INTO contract_deductions (contract_no, period, attempt, merchant_order_no, amount, status)
       VALUES (:contractNo, :period, :attempt, :merchantOrderNo, :amount, 'pending')
       ON CONFLICT (contract_no, period, attempt) DO NOTHING`,
      { replacements: d },
    );
    return (await this.findDeduction(d.contractNo, d.period, d.attempt))!;
  }

  async findDeduction(contractNo: string, period: number, attempt: number): Promise<Deduction | null> {
    const [row] = await this.rows<DeductionRow>(
      'SELECT * FROM contract_deductions WHERE contract_no = :contractNo AND period = :period AND attempt = :attempt',
      { contractNo, period, attempt },
    );
    return row ? deductionOf(row) : null;
  }

  async settleDeduction(d: {
    contractNo: string;
    period: number;
    attempt: number;
    tradeNo: string | null;
    status: Deduction['status'];
    reason: string | null;
  }): Promise<void> {
    await this.db.sequelize.query(
      `UPDATE contract_deductions
          SET trade_no = COALESCE(:tradeNo, trade_no), status = :status, reason = :reason,
              finished_at = CASE WHEN :status = 'pending' THEN NULL ELSE now() END
        WHERE contract_no = :contractNo AND period = :period AND attempt = :attempt AND status = 'pending'`,
      { replacements: d },
    );
  }

  async deductionsOf(contractNo: string): Promise<Deduction[]> {
    const rows = await this.rows<DeductionRow>(
      'SELECT * FROM contract_deductions WHERE contract_no = :contractNo ORDER BY period, attempt',
      { contractNo },
    );
    return rows.map(deductionOf);
  }
}
