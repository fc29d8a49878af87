/**
 * The order workflow (SPEC §3, §7): it wires the order's messages to its actor (order-actor.ts,
 * which owns the state, takes the lock and decides) and runs the order's phases in turn
 * (order-actor-phases.ts): created, pending, closed or paid, until the run ends, ends idle or
 * continues as new.
 */
import { setHandler } from '@temporalio/workflow';
import {
  chooseChannelUpdate,
  closeOrderUpdate,
  createOrderUpdate,
  moveOnSignal,
  paymentSignal,
  refundOrderUpdate,
  refundSettledSignal,
  type OrderInput,
} from './messages';
import { OrderActor, type OrderState } from './order-actor';
import type { OrderRunEnd } from './order-actor-phases';

export type { OrderState, ShareFollow } from './order-actor';

export async function orderWorkflow(input: OrderInput, carried?: OrderState): Promise<OrderRunEnd> {
  const actor = new OrderActor(input, carried);
  const { state, phases } = actor;

  setHandler(createOrderUpdate, (req) => actor.create(req));
  setHandler(closeOrderUpdate, () => actor.close());
  setHandler(chooseChannelUpdate, (req) => actor.chooseChannel(req));
  setHandler(refundOrderUpdate, (req) => actor.refund(req));
  setHandler(paymentSignal, (s) => actor.receivePayment(s));
  setHandler(refundSettledSignal, (s) => actor.receiveSettlement(s));
  setHandler(moveOnSignal, () => actor.receiveMoveOn());

  // Reopened (SPEC §7): the state its last run saved, or, with none, its requests refused.
  if (await phases.restoredNothing()) return 'ended';
  // The first update creates the order; a failed create ends this run.
  if (!(await phases.created())) return 'create_failed';
  // Callbacks, the sweeper's polls, and expiry.
  await phases.pending();
  // Closed: a late payment is still taken for a while.
  if (state.status === 'closed' && (await phases.closed())) return 'closed';
  // Paid: the share, refunds, until refunded in full or idle.
  return phases.paid();
}
