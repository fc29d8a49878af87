/**
 * The payment sweeper: polls the channel for pending orders (SPEC §3.2) in batches, outside
 * Temporal. Each worker process runs one. A tick claims the polls that are due from Postgres
 * (`payment_polls`, FOR UPDATE SKIP LOCKED, so sweepers never claim the same row), asks the
 * channel about each with bounded concurrency, and signals only the orders the channel reports
 * paid. A waiting order then costs its workflow nothing until its expiry timer fires.
 *
 * Nothing is lost when a sweeper dies: a claimed poll that was never asked is asked at its next
 * gap, a payment whose signal failed is found again at the next one, and every order's
 * workflow still closes it at the channel at expiry, which reports a payment instead.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ChannelRegistry } from '../../channels/registry';
import type { Database } from '../../platform/db';
import type { Logger } from '../../platform/logger';
import type { Keyring } from '../../platform/crypto/keyring';
import { ChannelAccountRepository, MerchantRepository } from '../merchants';
import { tradeContext } from './activities';
import { OrderRepository, type DuePoll } from './repository';
import { signalOrderPayment } from './service';

export interface PaymentSweeperDeps {
  db: Database;
  client: Client;
  channels: ChannelRegistry;
  logger: Logger;
  /** Open the Alipay tokens of the merchants' channel accounts the orders were made with. */
  payloadKeys: Keyring;
  /** How often an idle sweeper looks for due polls; a poll is at most this late. */
  tickMs: number;
  /** Polls claimed at once; a full batch is followed by the next at once. */
  batchSize?: number;
  /** Channel queries under way at once. */
  concurrency?: number;
}

export interface SweepResult {
  claimed: number;
  paid: number;
  failed: number;
}

export class PaymentSweeper {
  private readonly orders: OrderRepository;
  private readonly merchants: MerchantRepository;
  private readonly accounts: ChannelAccountRepository;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private running?: Promise<void>;
  private stopping = false;
  private wake?: () => void;

  constructor(private readonly deps: PaymentSweeperDeps) {
    this.orders = new OrderRepository(deps.db);
    this.merchants = new MerchantRepository(deps.db);
    this.accounts = new ChannelAccountRepository(deps.db, deps.payloadKeys);
    this.batchSize = deps.batchSize ?? 200;
    this.concurrency = deps.concurrency ?? 16;
  }

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    this.running = undefined;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let claimed = 0;
      try {
        claimed = (await this.sweepOnce()).claimed;
      } catch (err) {
        // The database is away: try again at the next tick.
        this.deps.logger.warn('payment sweep failed; will try again', {
          error: err instanceof Error ? err.message : String(err),
        });
      }
      if (this.stopping) break;
      if (claimed >= this.batchSize) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.deps.tickMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** One batch: claims what is due, asks the channel, signals what it reports paid. */
  async sweepOnce(): Promise<SweepResult> {
    const due = await this.orders.claimDuePolls(this.batchSize);
    const result: SweepResult = { claimed: due.length, paid: 0, failed: 0 };
    let next = 0;
    const lane = async () => {
      while (next < due.length) {
        const poll = due[next++]!;
        const outcome = await this.pollOne(poll);
        if (outcome === 'paid') result.paid += 1;
        if (outcome === 'failed') result.failed += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, due.length) }, lane));
    return result;
  }

  private async pollOne(poll: DuePoll): Promise<'pending' | 'paid' | 'failed'> {
    try {
      const channel = this.deps.channels.get(poll.channelCode);
      if (!channel) throw new Error(`channel ${poll.channelCode} is not supported`);
      const ctx = await tradeContext(this.orders, this.merchants, this.accounts, poll.tradeNo);
      const st = await channel.payments.query(ctx, poll.tradeNo);
      if (st.status !== 'paid') return 'pending';
      await signalOrderPayment(this.deps.client, poll, {
        status: 'paid',
        channelTradeNo: st.channelTradeNo,
        paidAt: st.paidAt.toISOString(),
        amount: st.amount,
      });
      return 'paid';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        // The order's workflow has ended: nobody is waiting for this answer any more.
        await this.orders.dropPoll(poll.tradeNo).catch(() => undefined);
        return 'failed';
      }
      this.deps.logger.warn('payment query failed; will poll again', {
        trade_no: poll.tradeNo,
        error: err instanceof Error ? err.message : String(err),
      });
      return 'failed';
    }
  }
}

/** How often a sweeper looks for due polls: a tenth of the first gap, within 50 ms and 1 s. */
export function sweepTickMs(pollGapsMs: number[]): number {
  return Math.max(50, Math.min(1_000, Math.round((pollGapsMs[0] ?? 10_000) / 10)));
}
