import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { RefundActivities as Activities } from './activities';
import { activityProfiles, searchAttributes } from '../../platform/workflow/definitions';
import {
  applyAbnormalRefundUpdate,
  refundResultSignal,
  type AbnormalRefundResult,
  type RefundSignal,
  type RefundWorkflowInput,
} from './messages';
import { handlerLock } from '../../platform/workflow/lock';
import type { ErrorCode } from '../../platform/errors';
import { pollingOptions, pollUnless } from '../../platform/workflow/polling';
import { pollGap } from '../../platform/workflow/schedule';
import type { RefundState } from '../../channels/ports';
import { refundSettledSignal } from '../orders/messages';
import { unlessRefusedForGood } from '../../platform/workflow/refused-writes';

const channel = proxyActivities<Activities>(activityProfiles.channelBackground);
const channelCall = proxyActivities<Activities>(activityProfiles.channelCall);
const db = proxyActivities<Activities>(activityProfiles.dbWrite);
// Publishing an event makes the notification's first attempt (modules/notifications/service.ts).
const publish = proxyActivities<Activities>(activityProfiles.publish);

/**
 * Follows one refund (SPEC §3.5) from the channel's acceptance to its final status: by
 * callback (a signal) or by polling on the order backoff for up to 24 h. Records the result,
 * notifies the merchant and tells the order, which releases a failed refund's amount.
 *
 * A refund the channel ends ABNORMAL (the money left, the buyer's account did not take it) is
 * recorded and notified as `abnormal`, and the run ends; an operator's `applyAbnormalRefund`
 * (POST /api/v1/pay/refund/abnormal) asks the channel to pay it out another way, in this run if
 * it is still open, else in a new run of the same id (`resume: 'abnormal'`), which then follows
 * the refund again until it succeeds (or stays abnormal with the channel's reason).
 */
export async function refundWorkflow(input: RefundWorkflowInput): Promise<'success' | 'failed' | 'abnormal'> {
  const results: RefundSignal[] = [];
  setHandler(refundResultSignal, (s) => {
    results.push(s);
  });
  // abnormal: waiting for an operator; following: asking the channel (again).
  let phase: 'following' | 'abnormal' = input.resume === 'abnormal' ? 'abnormal' : 'following';
  let amountCounted = input.resume === 'abnormal';
  const lock = handlerLock();
  setHandler(applyAbnormalRefundUpdate, (req) =>
    lock.runExclusive(async (): Promise<AbnormalRefundResult> => {
      if (phase !== 'abnormal') {
        throw ApplicationFailure.nonRetryable(
          `refund ${input.refundNo} is not abnormal: only an abnormal refund can be paid out another way`,
          'invalid_param',
        );
      }
      let st: RefundState;
      try {
        st = await channelCall.applyChannelAbnormalRefund({
          channelCode: input.channelCode,
          refundNo: input.refundNo,
          ...req,
        });
      } catch (err) {
        // The request may have reached the channel before it failed: the refund's own state
        // says whether the payout is under way.
        const now = await channel
          .queryChannelRefund({ channelCode: input.channelCode, refundNo: input.refundNo })
          .catch(() => undefined);
        if (now?.status !== 'processing' && now?.status !== 'success') {
          const cause = err instanceof ActivityFailure ? err.cause : err;
          if (cause instanceof ApplicationFailure && cause.type) {
            throw ApplicationFailure.nonRetryable(cause.message, cause.type as ErrorCode);
          }
          throw ApplicationFailure.nonRetryable(String(cause), 'channel_timeout');
        }
        st = now;
      }
      // The channel took it: follow the refund again (it says success when the money is paid out).
      phase = 'following';
      return {
        refund_no: input.refundNo,
        trade_no: input.tradeNo,
        refund_amount: input.amount,
        status: st.status === 'success' ? 'success' : 'abnormal',
        channel_refund_no: st.status === 'not_found' ? null : st.channelRefundNo,
      };
    }),
  );
  upsertSearchAttributes([
    { key: searchAttributes.AppId, value: input.appId },
    { key: searchAttributes.TradeNo, value: input.tradeNo },
    { key: searchAttributes.BizStatus, value: input.resume ?? 'processing' },
  ]);

  for (;;) {
    if (phase === 'abnormal') {
      // An operator already asking is answered in this run; a later one starts a new run. Only
      // a success the channel reported (the payout's callback) moves it on without one.
      await condition(allHandlersFinished);
      const paidOut = results.filter((r) => r.status === 'success');
      results.splice(0, results.length, ...paidOut);
      if (phase === 'abnormal' && paidOut.length === 0) return 'abnormal';
      phase = 'following';
    }
    const giveUpAt = Date.now() + input.pollForMs;
    const final = await followByActivity(input, giveUpAt, results);
    // No final answer within the polling window: recorded as failed for an operator to look at
    // (an abnormal refund paid out another way stays abnormal: its money has left the order).
    let outcome = final ?? {
      status: 'failed' as const,
      channelRefundNo: null,
      refundedAt: null,
      reason: 'no final status from the channel within the polling window',
    };
    if (amountCounted && outcome.status === 'failed') outcome = { ...outcome, status: 'abnormal' };
    // An operator may ask for the payout as soon as the row says abnormal (the service lets no
    // request through before): from its write on, the handler takes it, even while the order is
    // told and refund.abnormal announced. A payout taken meanwhile leaves the phase `following`.
    if (outcome.status === 'abnormal') phase = 'abnormal';

    const settled = {
      refundNo: input.refundNo,
      status: outcome.status,
      channelRefundNo: outcome.channelRefundNo,
      refundTime: outcome.status === 'success' ? (outcome.refundedAt ?? new Date().toISOString()) : null,
      failReason: outcome.status === 'success' ? null : outcome.reason,
    };
    // A row the database refuses to settle for good must not keep the order's amount reserved
    // for ever: the order is still told and the outcome still announced, and an operator is
    // told what to record.
    const recorded = await unlessRefusedForGood(
      "the refund's outcome",
      { refund_no: input.refundNo, trade_no: input.tradeNo, status: outcome.status },
      () => db.recordRefundSettled(settled),
    );
    // Tell the order, unless nothing changes for it (an abnormal refund still abnormal). An order
    // whose run has ended (its amounts final) needs no word of an abnormal refund paid out.
    if (!(amountCounted && outcome.status === 'abnormal')) {
      try {
        await getExternalWorkflowHandle(input.orderWorkflowId).signal(refundSettledSignal, {
          refundNo: input.refundNo,
          status: outcome.status,
          amount: input.amount,
        });
      } catch (err) {
        if (!amountCounted) throw err;
        log.info('the order has ended; an abnormal refund paid out changes none of its amounts', {
          refund_no: input.refundNo,
        });
      }
    }
    // The order knows already: a notification the database refuses is left to an operator.
    await unlessRefusedForGood(
      `the refund's ${outcome.status} notification`,
      { refund_no: input.refundNo, trade_no: input.tradeNo },
      () =>
        publish.notifyRefundEvent({
          refundNo: input.refundNo,
          type:
            outcome.status === 'success'
              ? 'refund.succeeded'
              : outcome.status === 'abnormal'
                ? 'refund.abnormal'
                : 'refund.failed',
          // The row still says what it said before: the notification says what happened.
          ...(recorded ? {} : { settled }),
        }),
    );
    upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: outcome.status }]);
    if (outcome.status !== 'abnormal') return outcome.status;
    amountCounted = true;
  }
}

const UNANSWERED_NOT_FOUND: RefundSignal = {
  status: 'failed',
  channelRefundNo: null,
  refundedAt: null,
  reason: 'the channel did not answer the refund request and has no such refund',
};

/** A final refund state as the result it settles; undefined while the refund is not final. */
function finalOf(st: RefundState): RefundSignal | undefined {
  if (st.status === 'success') {
    return {
      status: 'success',
      channelRefundNo: st.channelRefundNo,
      refundedAt: new Date(st.refundedAt).toISOString(),
      reason: null,
    };
  }
  if (st.status === 'failed') {
    return { status: 'failed', channelRefundNo: st.channelRefundNo, refundedAt: null, reason: st.reason };
  }
  if (st.status === 'abnormal') {
    return { status: 'abnormal', channelRefundNo: st.channelRefundNo, refundedAt: null, reason: st.reason };
  }
  return undefined;
}

/**
 * Waits for the refund's final status on one polling activity whose retries are the backoff
 * (platform/polling.ts); a callback cancels it. Undefined when the window ends with no answer.
 */
async function followByActivity(
  input: RefundWorkflowInput,
  giveUpAt: number,
  results: RefundSignal[],
): Promise<RefundSignal | undefined> {
  let unanswered = input.unanswered === true;
  let notFoundInARow = 0;
  let firstGap = 0;
  for (;;) {
    const awaitRefund = proxyActivities<Activities>(
      pollingOptions(giveUpAt, pollGap(input.pollGapsMs, Infinity)),
    ).awaitChannelRefund;
    const waited = await pollUnless(
      () =>
        awaitRefund({
          channelCode: input.channelCode,
          refundNo: input.refundNo,
          ...(unanswered ? { unanswered: true } : {}),
          gapsMs: input.pollGapsMs,
          firstGap,
          deadlineMs: giveUpAt,
          askAtDeadline: true,
        }),
      () => results.length > 0,
    );
    if ('interrupted' in waited) return results.shift();
    if ('failed' in waited) {
      log.warn('refund polling ended without an answer', {
        refund_no: input.refundNo,
        error: String(waited.failed),
      });
      return results.shift();
    }
    const outcome = waited.done;
    if ('due' in outcome) return results.shift();
    const final = finalOf(outcome.answer);
    if (final) return final;
    // Only a refund whose request went unanswered returns a state that is not final.
    notFoundInARow = outcome.answer.status === 'not_found' ? notFoundInARow + 1 : 0;
    if (notFoundInARow >= 2) return UNANSWERED_NOT_FOUND;
    // The channel has it: followed as any refund from now on.
    if (outcome.answer.status !== 'not_found') unanswered = false;
    firstGap = outcome.nextGap;
  }
}
