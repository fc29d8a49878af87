/**
 * The order actor's profit share (SPEC §3.7): made against the refund book when it is due, and
 * the steps of it the channel did not say the end of (a share, the release of a frozen amount, a
 * part taken back for a refund) followed on the refund backoff until it does. Every change to the
 * order's state is made under the lock; the channel calls and read-model writes are made outside
 * it, so that refunds are decided meanwhile.
 */
import { ActivityFailure, ApplicationFailure, log } from '@temporalio/workflow';
import type { OrderActivities as Activities } from './activities';
import type { ErrorCode } from '../../platform/errors';
import { failureOf, pollGap, REFUND_EXCEEDS } from './rules';
import {
  nothingLeftToShare,
  returnedOf,
  shareCancelled,
  sharedOf,
  shareSettled,
  shareWhenDue,
  startShare,
  unsettledReturnEnded,
  type PlannedReturn,
  type ReceiverPart,
} from './refund-book';
import { backgroundChannelActivities, dbActivities } from './order-calls';
import type { OrderActor, ShareFollow } from './order-actor';

type ShareStepRecord = Parameters<Activities['recordShareStep']>[0]['step'];

export class OrderSharing {
  constructor(private readonly order: OrderActor) {}

  /** A receiver of the share as the channel's port names it. */
  receiverOf(r: PlannedReturn): { type: string; account: string; name?: string } {
    const part = this.order.state.book!.share.parts[r.receiver]!;
    return { type: part.type, account: part.account, ...(part.name ? { name: part.name } : {}) };
  }

  /** Where the order's profit share stands, for the read model. */
  totals() {
    const book = this.order.state.book!;
    return { status: book.share.status, sharedAmount: sharedOf(book), returnedAmount: returnedOf(book) };
  }

  /** How a refused return or a refund that carried returns is answered (SPEC §3.7). */
  shareNotReturned(reason: string): { code: ErrorCode; message: string } {
    const book = this.order.state.book!;
    const held = sharedOf(book) - returnedOf(book);
    return {
      code: REFUND_EXCEEDS.code,
      message: `${REFUND_EXCEEDS.message}: ${held} of the order is shared to profit-sharing receivers and could not be taken back (${reason})`,
    };
  }

  /** Whether the share is to be made now: it is due, or refunds left nothing to share. */
  isDue(): boolean {
    const state = this.order.state;
    return (
      state.profitShareAtMs !== null &&
      (Date.now() >= state.profitShareAtMs || nothingLeftToShare(state.book!))
    );
  }

  /**
   * The share against the book (SPEC §3.7): at most what is unrefunded when it is made, decided
   * under the lock and made outside it (refunds decided meanwhile count it as the receivers').
   * Nothing left to share: `cancelled`, and what the payment froze is released at the channel.
   * A share whose outcome stays unknown stays `processing`: refunds never count on it failing.
   */
  async shareWhenDue(): Promise<void> {
    const { order } = this;
    const { state } = order;
    const book = state.book!;
    const due = await order.exclusive(async () => {
      state.profitShareAtMs = null;
      const d = shareWhenDue(book, state.request!.receivers);
      if (d === 'cancelled') shareCancelled(book);
      else startShare(book, d.parts);
      return d;
    });
    if (due === 'cancelled') {
      const unfreezeNo = `U${state.tradeNo.slice(1)}`;
      let outcome: { status: 'finished' | 'failed' | 'processing' | 'not_needed'; reason?: string };
      try {
        outcome = await backgroundChannelActivities.unfreezeProfitShare({
          channelCode: this.order.channelCode,
          tradeNo: state.tradeNo,
          unfreezeNo,
        });
      } catch (err) {
        outcome = { status: 'failed', reason: failureOf(err, 'channel_timeout').message };
      }
      if (outcome.status === 'not_needed') {
        await order.recordOrLog('recordProfitSharing', () =>
          dbActivities.recordProfitSharing({ tradeNo: state.tradeNo, status: 'cancelled', sharedAmount: 0 }),
        );
        return;
      }
      if (outcome.status === 'failed') this.unfreezeFailed(outcome.reason);
      // Released later (WeChat Pay: PROCESSING): asked again until the channel says so.
      if (outcome.status === 'processing') await this.followLater('unfreeze', unfreezeNo);
      await this.recordStep({
        stepNo: unfreezeNo,
        kind: 'unfreeze',
        receivers: [],
        amount: book.share.planned,
        status: outcome.status === 'finished' ? 'success' : outcome.status,
        failReason: outcome.reason ?? null,
      });
      return;
    }
    await order.recordOrLog('recordProfitSharing', () =>
      dbActivities.recordProfitSharing({
        tradeNo: state.tradeNo,
        status: 'processing',
        sharedAmount: due.amount,
      }),
    );
    const shareNo = `S${state.tradeNo.slice(1)}`;
    let outcome: 'finished' | 'failed' | 'unknown';
    let reason: string | null = null;
    try {
      outcome = await backgroundChannelActivities.shareProfit({
        channelCode: this.order.channelCode,
        tradeNo: state.tradeNo,
        receivers: due.parts.map((p) => ({
          type: p.type,
          account: p.account,
          ...(p.name === undefined ? {} : { name: p.name }),
          amount: p.shared,
        })),
      });
    } catch (err) {
      // Refused: not shared. No answer: not known, so the receivers are taken to have it.
      const cause = err instanceof ActivityFailure ? err.cause : err;
      outcome = cause instanceof ApplicationFailure && cause.nonRetryable ? 'failed' : 'unknown';
      reason = failureOf(err, 'channel_timeout').message;
    }
    if (outcome === 'unknown') {
      // It stays processing (refunds never count on it failing) and is asked again until the
      // channel says how it ended.
      log.warn('the channel did not say how the share ended; it is followed', {
        trade_no: state.tradeNo,
        reason,
      });
      await this.followLater('share', shareNo);
      await this.recordStep(this.shareStep(shareNo, 'processing', reason));
      return;
    }
    const settled = outcome;
    await order.exclusive(async () => shareSettled(book, settled));
    await this.recordStep(this.shareStep(shareNo, settled === 'finished' ? 'success' : 'failed', reason));
  }

  /** A step of the share, recorded with the order's totals as they stand now. */
  private recordStep(step: ShareStepRecord): Promise<void> {
    return this.order.recordOrLog('recordShareStep', () =>
      dbActivities.recordShareStep({ tradeNo: this.order.state.tradeNo, step, order: this.totals() }),
    );
  }

  /** The share's own step, with the parts it gives (the book's, or those it gave before it failed). */
  private shareStep(
    shareNo: string,
    status: ShareStepRecord['status'],
    failReason: string | null,
    parts: ReceiverPart[] = this.order.state.book!.share.parts,
  ): ShareStepRecord {
    return {
      stepNo: shareNo,
      kind: 'share',
      receivers: parts.map((p) => ({ type: p.type, account: p.account, amount: p.shared })),
      amount: parts.reduce((sum, p) => sum + p.shared, 0),
      status,
      failReason,
    };
  }

  private unfreezeFailed(reason: string | undefined): void {
    log.warn('the share was cancelled; the channel did not release the frozen amount', {
      trade_no: this.order.state.tradeNo,
      reason,
    });
  }

  /**
   * Asks the channel again, on the refund backoff, how a step it did not answer ended. Takes the
   * lock: never call it from a step that holds it.
   */
  followLater(kind: ShareFollow['kind'], no: string, part?: ShareFollow['part']): Promise<void> {
    const { state, input } = this.order;
    return this.order.exclusive(async () => {
      (state.follows ??= []).push({
        kind,
        no,
        ...(part ? { part } : {}),
        gap: 0,
        nextAtMs: Date.now() + pollGap(input.timings.refundPollGapsMs, 0),
        untilMs: Date.now() + input.timings.refundPollForMs,
        notFound: 0,
      });
    });
  }

  /** When the next followed step is due to be asked about; undefined when none is followed. */
  nextFollowAtMs(): number | undefined {
    const follows = this.order.state.follows ?? [];
    return follows.length === 0 ? undefined : Math.min(...follows.map((f) => f.nextAtMs));
  }

  /** Whether some followed step is due to be asked about now. */
  isFollowDue(): boolean {
    const at = this.nextFollowAtMs();
    return at !== undefined && Date.now() >= at;
  }

  /** Whether a step of the share is still followed (the order does not end before it ends). */
  isFollowing(): boolean {
    return (this.order.state.follows ?? []).length > 0;
  }

  /**
   * Asks the channel about every followed step that is due, and settles those it has an end
   * for: a share made or not, a frozen amount released or not, a part of the share back with
   * the merchant or still the receiver's. One the channel does not know of, twice in a row, it
   * never took. Past the refund polling window a step is left for an operator.
   */
  async followSteps(): Promise<void> {
    const { order } = this;
    const { state, input } = order;
    const book = state.book!;
    for (const f of [...(state.follows ?? [])]) {
      if (Date.now() < f.nextAtMs) continue;
      let seen: Awaited<ReturnType<Activities['queryShareStep']>>;
      try {
        seen = await backgroundChannelActivities.queryShareStep({
          channelCode: this.order.channelCode,
          tradeNo: state.tradeNo,
          kind: f.kind,
          no: f.no,
        });
      } catch (err) {
        seen = { status: 'processing', reason: failureOf(err, 'channel_timeout').message };
      }
      // What the answer changes, under the lock: the step's next ask, or its end and the book's.
      const ended = await order.exclusive(async () => {
        f.notFound = seen.status === 'not_found' ? f.notFound + 1 : 0;
        if (f.notFound >= 2) seen = { status: 'failed', reason: `the channel has no ${f.kind} ${f.no}` };
        if (seen.status === 'processing' || seen.status === 'not_found') {
          if (Date.now() < f.untilMs) {
            f.gap += 1;
            f.nextAtMs = Date.now() + pollGap(input.timings.refundPollGapsMs, f.gap);
            return undefined;
          }
          log.error('the channel never said how a step of the share ended; an operator must look', {
            trade_no: state.tradeNo,
            kind: f.kind,
            step_no: f.no,
          });
        }
        state.follows = (state.follows ?? []).filter((x) => x !== f);
        if (seen.status !== 'finished' && seen.status !== 'failed') return undefined;
        const parts = book.share.parts;
        if (f.kind === 'share') shareSettled(book, seen.status);
        if (f.kind === 'return') unsettledReturnEnded(book, f.part!, seen.status === 'finished');
        return { ...seen, parts };
      });
      if (ended) await this.recordFollowed(f, ended);
    }
  }

  /** Records how a followed step ended, with the order's totals as they stand now. */
  private async recordFollowed(
    f: ShareFollow,
    ended: Extract<Awaited<ReturnType<Activities['queryShareStep']>>, { status: 'finished' | 'failed' }> & {
      parts: ReceiverPart[];
    },
  ): Promise<void> {
    const book = this.order.state.book!;
    const status = ended.status === 'finished' ? 'success' : 'failed';
    const failReason = ended.status === 'failed' ? ended.reason : null;
    if (f.kind === 'share') {
      await this.recordStep(this.shareStep(f.no, status, failReason, ended.parts));
    } else if (f.kind === 'unfreeze') {
      if (ended.status === 'failed') this.unfreezeFailed(ended.reason);
      await this.recordStep({
        stepNo: f.no,
        kind: 'unfreeze',
        receivers: [],
        amount: book.share.planned,
        status,
        failReason,
      });
    } else {
      const part = f.part!;
      const receiver = this.receiverOf(part);
      await this.recordStep({
        stepNo: f.no,
        kind: 'return',
        refundNo: part.refundNo,
        receivers: [{ type: receiver.type, account: receiver.account, amount: part.amount }],
        amount: part.amount,
        status,
        channelNo: ended.status === 'finished' ? (ended.channelNo ?? null) : null,
        failReason,
      });
    }
  }
}
