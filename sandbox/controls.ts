/**
 * What a test steers in the sandbox simulator beyond what a request can say, in this process:
 * a day's statement held back (not ready), a sub-merchant's statements in WeChat's older layout,
 * and payments whose queries stay cut off until released. A test makes one, passes it to
 * createSandboxRouter (`controls`) and keeps it to steer.
 */
import type { TradebillLayout } from './wechatpay/tradebill';

/**
 * An order whose subject holds this sends no callback and, once paid, every query or close of it
 * is cut off unanswered until `release(tradeNo)`: durapay's order stays pending.
 */
export const LOST_UNTIL_RELEASED_MARKER = '[sandbox:lost-until-released]';

export class SandboxControls {
  private readonly holds = new Map<string, number>();
  private readonly legacy = new Set<string>();
  private readonly released = new Set<string>();
  private readonly asked = new Map<string, number>();

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
}
