import type { Client } from '@temporalio/client';
import { ChannelError } from '../../channels/errors';
import type { Channel } from '../../channels/ports';
import type { ChannelAccountRepository, MerchantRepository } from '../merchants';
import {
  accountContextOf,
  isPaidStatus,
  signalOrderPayment,
  type Order,
  type OrderRepository,
} from '../orders';
import type { MismatchRow, ReconciliationRepository } from './repository';

export interface RepairDeps {
  repo: ReconciliationRepository;
  orders: OrderRepository;
  merchants: MerchantRepository;
  accounts: ChannelAccountRepository;
  client: Client;
  channel: (code: string) => Channel;
}

/**
 * What became of one finding: `repaired`; `unconfirmed` when the channel could not be asked (it is
 * asked again on the activity's backoff); `left` open, with a note saying why, for a person.
 */
export type RepairOutcome = 'repaired' | 'unconfirmed' | 'left';

/**
 * One `missing_local_payment` (SPEC §10): the channel is asked once more about the order and,
 * when it confirms the payment for the order's amount, the payment is handed to the order, whose
 * own rules decide what it becomes (`paid`, or `paid` with needs_refund_review when it was closed).
 */
export async function repairLostPayment(d: RepairDeps, m: MismatchRow): Promise<RepairOutcome> {
  const order = await d.orders.findOrderByTradeNo(m.trade_no);
  // A checkout order no buyer took to a channel is at none: nothing there to repair it with.
  if (!order?.channelCode) return 'left';
  if (await learnedItself(d, m.id, order)) return 'repaired';
  let answer;
  try {
    answer = await d.channel(order.channelCode).payments.query(
      {
        currency: order.currency,
        channelTradeNo: order.channelTradeNo,
        ...(await accountContextOf(order, d.merchants, d.accounts)),
      },
      order.tradeNo,
    );
  } catch (err) {
    if (!(err instanceof ChannelError)) throw err;
    await d.repo.noteOn(m.id, `the channel could not be asked to confirm the payment: ${err.message}`);
    return 'unconfirmed';
  }
  if (answer.status !== 'paid') {
    await d.repo.noteOn(m.id, `the channel's query did not confirm the payment (it says ${answer.status})`);
    return 'left';
  }
  // Only the payment the books expect is handed on: an amount that differs anywhere is a
  // person's decision, never a repair.
  const stated = Number((m.channel as { amount?: unknown } | null)?.amount);
  if (answer.amount !== Number(order.amount) || stated !== Number(order.amount)) {
    await d.repo.noteOn(
      m.id,
      `the channel confirmed a payment of ${answer.amount} (statement ${stated}), not the order's ${order.amount}: not repaired`,
    );
    return 'left';
  }
  try {
    await signalOrderPayment(d.client, order, {
      status: 'paid',
      channelTradeNo: answer.channelTradeNo,
      paidAt: answer.paidAt.toISOString(),
      amount: answer.amount,
    });
  } catch (err) {
    if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    // Paid since it was read, by its own query or a callback, and its run ended idle.
    const now = await d.orders.findOrderByTradeNo(m.trade_no);
    if (now && (await learnedItself(d, m.id, now))) return 'repaired';
    await d.repo.noteOn(
      m.id,
      "the channel confirmed the payment, but the order's workflow has ended: a person decides (refund the buyer, or accept it)",
    );
    return 'left';
  }
  await d.repo.markRepaired(
    m.id,
    `the channel confirmed the payment (${answer.channelTradeNo}); handed to the order`,
  );
  return 'repaired';
}

/**
 * The order may have learned of its payment itself since the statement was matched (its own
 * query or a late callback got there first, and a paid order's run may since have ended idle):
 * the books hold the payment, so the finding is repaired, not left to a person.
 */
async function learnedItself(d: RepairDeps, id: string, order: Order): Promise<boolean> {
  if (!isPaidStatus(order.status)) return false;
  await d.repo.markRepaired(
    id,
    `the order learned of the payment itself (${order.channelTradeNo ?? 'no channel number'}, now ${order.status}); nothing was handed to it`,
  );
  return true;
}
