/**
 * Payments that went missing on the way back: an order whose description holds
 * `[sandbox:lost-until-released]` sends no callback, and once paid, every query or close of it is
 * cut off unanswered (a network failure, not an answer) until a test releases it. durapay then
 * cannot learn of the payment, and its order stays pending, which only the statement reveals.
 */
import type { OrderRecord } from './store';

export const LOST_UNTIL_RELEASED = '[sandbox:lost-until-released]';

export class LostTrades {
  private readonly released = new Set<string>();

  /** Whether requests about the order are cut off now. */
  isLost(order: OrderRecord): boolean {
    return (
      order.successAt !== undefined &&
      order.request.description.includes(LOST_UNTIL_RELEASED) &&
      !this.released.has(order.request.out_trade_no)
    );
  }

  /** Queries and closes of the order are answered from now on (its callback stays lost). */
  release(outTradeNo: string): void {
    this.released.add(outTradeNo);
  }
}
