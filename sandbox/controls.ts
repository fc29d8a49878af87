/**
 * What a test steers in the sandbox simulator beyond what a request can say, in this process:
 * a day's statement held back (not ready), a sub-merchant's statements in WeChat's older layout,
 * and payments whose queries stay cut off until released; and what it reads or does beyond the
 * API: the create requests of a transfer, a payee's answer to a transfer. A test makes one,
 * passes it to createSandboxRouter (`controls`) and keeps it to steer.
 */
import type { TradebillLayout } from './wechatpay/tradebill';

/** What a contract's next deductions do, as a test steers them (`steerDeductions`). */
export type DeductionSteer = 'pays' | 'insufficient' | 'answer_lost' | 'confirms_later';

/** The calls durapay made about one contract, counted at the simulator. */
export interface ContractCalls {
  notice: number;
  deduct: number;
  terminate: number;
}

/**
 * An order whose subject holds this sends no callback and, once paid, every query or close of it
 * is cut off unanswered until `release(tradeNo)`: durapay's order stays pending.
 */
export const LOST_UNTIL_RELEASED_MARKER = '[sandbox:lost-until-released]';

/** A transfer's state as the payee's answer leaves it. */
export interface PayeeAnswer {
  transfer_no: string;
  status: string;
}

/** What the payee does on a transfer's confirmation page. */
export type PayeeResult = 'confirm' | 'expire';

/** What the simulator answers the controls about its transfers. */
export interface TransferDesk {
  answerAsPayee(transferNo: string, result: PayeeResult): Promise<PayeeAnswer>;
  /** The sub-merchant a transfer was made for (null: the platform's own account). */
  subMerchantOf(transferNo: string): Promise<string | null>;
}

export class SandboxControls {
  private readonly holds = new Map<string, number>();
  private readonly legacy = new Set<string>();
  private readonly released = new Set<string>();
  private readonly asked = new Map<string, number>();
  private readonly transferRequests = new Map<string, number>();
  private transfers?: TransferDesk;
  private readonly deductionSteers = new Map<string, DeductionSteer[]>();
  private readonly cancelsAfterNotice = new Set<string>();
  private readonly lostContractNotifications = new Set<string>();
  private readonly contractCallCounts = new Map<string, ContractCalls>();

  /** The next `requests` asks for the statement of `day` (YYYY-MM-DD) answer not ready. */
  holdStatement(day: string, requests: number): void {
    this.holds.set(day, requests);
  }

  /** The sub-merchant's statements (`null`: the whole sandbox's) use the older 24-column layout. */
  useLegacyStatement(subMerchantNo: string | null, legacy = true): void {
    const key = subMerchantNo ?? '';
    if (legacy) this.legacy.add(key);
    else this.legacy.delete(key);
  }

  /** A lost payment's queries and closes are answered from now on (its callback stays lost). */
  release(tradeNo: string): void {
    this.released.add(tradeNo);
  }

  /** How many times the statement of `day` was asked for, held back or not. */
  statementRequests(day: string): number {
    return this.asked.get(day) ?? 0;
  }

  /** Counts the ask; true when it is held back. */
  askStatement(day: string): boolean {
    this.asked.set(day, this.statementRequests(day) + 1);
    const held = this.holds.get(day) ?? 0;
    if (held <= 0) return false;
    this.holds.set(day, held - 1);
    return true;
  }

  statementLayout(subMerchantNo: string | null): TradebillLayout {
    return this.legacy.has(subMerchantNo ?? '') ? 'legacy' : 'all';
  }

  /** Whether requests about a paid order are cut off now. */
  isLost(order: { trade_no: string; subject: string; status: string }): boolean {
    return (
      order.status === 'paid' &&
      order.subject.includes(LOST_UNTIL_RELEASED_MARKER) &&
      !this.released.has(order.trade_no)
    );
  }

  /**
   * How many requests to create the transfer this process received (with a valid signature and
   * body), refused and unanswered ones included.
   */
  transferCreates(transferNo: string): number {
    return this.transferRequests.get(transferNo) ?? 0;
  }

  /** Counts a request to create the transfer. */
  countTransferCreate(transferNo: string): void {
    this.transferRequests.set(transferNo, this.transferCreates(transferNo) + 1);
  }

  /**
   * The payee confirms the transfer, as the Confirm button of its confirmation page does: it is
   * processing, then paid. Rejects with the simulator's reason when it no longer waits.
   */
  async confirmTransfer(transferNo: string): Promise<PayeeAnswer> {
    return this.desk().answerAsPayee(transferNo, 'confirm');
  }

  /** The payee lets the transfer expire now ("Let it expire"): it is cancelled, not confirmed in time. */
  async expireTransfer(transferNo: string): Promise<PayeeAnswer> {
    return this.desk().answerAsPayee(transferNo, 'expire');
  }

  /** The sub_merchant_no the transfer was made for (null: none); rejects for an unknown transfer. */
  async transferAccount(transferNo: string): Promise<string | null> {
    return this.desk().subMerchantOf(transferNo);
  }

  /** Where the simulator given these controls answers about its transfers (the last one given them). */
  attachTransfers(desk: TransferDesk): void {
    this.transfers = desk;
  }

  // ---- auto-debit contracts (./contracts.ts), each by durapay's contract_no ----

  /** What the contract's next deductions do, in turn; after them, each pays. */
  steerDeductions(contractNo: string, steers: DeductionSteer[]): void {
    this.deductionSteers.set(contractNo, [...(this.deductionSteers.get(contractNo) ?? []), ...steers]);
  }

  /** What the contract's deduction being taken now does (the next steer, or `pays`). */
  nextDeduction(contractNo: string): DeductionSteer {
    return this.deductionSteers.get(contractNo)?.shift() ?? 'pays';
  }

  /** The buyer ends the contract right after its next pre-deduction notice arrives. */
  cancelAfterNotice(contractNo: string): void {
    this.cancelsAfterNotice.add(contractNo);
  }

  buyerCancelsAfterNotice(contractNo: string): boolean {
    return this.cancelsAfterNotice.delete(contractNo);
  }

  /** The contract's notifications (signed, ended by the buyer) are lost on the way from now on. */
  loseContractNotifications(contractNo: string, lost = true): void {
    if (lost) this.lostContractNotifications.add(contractNo);
    else this.lostContractNotifications.delete(contractNo);
  }

  contractNotificationsLost(contractNo: string): boolean {
    return this.lostContractNotifications.has(contractNo);
  }

  countContractCall(contractNo: string, kind: keyof ContractCalls): void {
    const calls = this.contractCalls(contractNo);
    calls[kind] += 1;
    this.contractCallCounts.set(contractNo, calls);
  }

  /** How often durapay asked the simulator to notify, deduct (new deductions only) and unsign the contract. */
  contractCalls(contractNo: string): ContractCalls {
    return { ...(this.contractCallCounts.get(contractNo) ?? { notice: 0, deduct: 0, terminate: 0 }) };
  }

  private desk(): TransferDesk {
    if (!this.transfers) throw new Error('no sandbox simulator was given these controls');
    return this.transfers;
  }
}
