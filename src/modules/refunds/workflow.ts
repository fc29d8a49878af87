import {
  condition,
  getExternalWorkflowHandle,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../../worker/activities';
import { pollGap } from '../orders/rules';
import { activityProfiles, searchAttributes } from '../../platform/workflow/definitions';
import { patches, refundResultSignal, type RefundSignal, type RefundWorkflowInput } from './messages';
import { pollingOptions, pollUnless } from '../../platform/workflow/polling';
import type { RefundState } from '../../channels/ports';
import { refundSettledSignal } from '../orders/messages';

const channel = proxyActivities<Activities>(activityProfiles.channelBackground);
const db = proxyActivities<Activities>(activityProfiles.dbWrite);
// Publishing an event makes the notification's first attempt (modules/notifications/service.ts).
const publish = proxyActivities<Activities>(activityProfiles.publish);

/**
 * Follows one refund (SPEC §3.5) from the channel's acceptance to its final status: by
 * callback (a signal) or by polling on the order backoff for up to 24 h. Records the result,
 * notifies the merchant and tells the order, which releases a failed refund's amount.
 */
export async function refundWorkflow(input: RefundWorkflowInput): Promise<'success' | 'failed'> {
  const results: RefundSignal[] = [];
  setHandler(refundResultSignal, (s) => {
    results.push(s);
  });
  upsertSearchAttributes([
    { key: searchAttributes.AppId, value: input.appId },
    { key: searchAttributes.TradeNo, value: input.tradeNo },
    { key: searchAttributes.BizStatus, value: 'processing' },
  ]);

  const giveUpAt = Date.now() + input.pollForMs;
  const final = patched(patches.refundPollsAsActivity)
    ? await followByActivity(input, giveUpAt, results)
    : await followByTimers(input, giveUpAt, results);
  // No final answer within the polling window: recorded as failed for an operator to look at.
  const outcome = final ?? {
    status: 'failed' as const,
    channelRefundNo: null,
    refundedAt: null,
    reason: 'no final status from the channel within the polling window',
  };

  await db.recordRefundSettled({
    refundNo: input.refundNo,
    status: outcome.status,
    channelRefundNo: outcome.channelRefundNo,
    refundTime: outcome.status === 'success' ? (outcome.refundedAt ?? new Date().toISOString()) : null,
    failReason: outcome.status === 'failed' ? outcome.reason : null,
  });
  await getExternalWorkflowHandle(input.orderWorkflowId).signal(refundSettledSignal, {
    refundNo: input.refundNo,
    status: outcome.status,
    amount: input.amount,
  });
  await publish.notifyRefundEvent({
    refundNo: input.refundNo,
    type: outcome.status === 'success' ? 'refund.succeeded' : 'refund.failed',
  });
  upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: outcome.status }]);
  return outcome.status;
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

/** As recorded before polling became one activity: a timer and a query at every gap. */
async function followByTimers(
  input: RefundWorkflowInput,
  giveUpAt: number,
  results: RefundSignal[],
): Promise<RefundSignal | undefined> {
  let final: RefundSignal | undefined;
  let notFoundInARow = 0;
  for (let i = 0; !final; i++) {
    const remaining = giveUpAt - Date.now();
    if (remaining <= 0) break;
    await condition(() => results.length > 0, Math.min(pollGap(input.pollGapsMs, i), remaining));
    if (results.length > 0) {
      final = results.shift();
      break;
    }
    try {
      const st = await channel.queryChannelRefund({
        channelCode: input.channelCode,
        refundNo: input.refundNo,
      });
      final = finalOf(st);
      notFoundInARow = st.status === 'not_found' ? notFoundInARow + 1 : 0;
      if (input.unanswered && notFoundInARow >= 2) final = UNANSWERED_NOT_FOUND;
    } catch (err) {
      log.warn('refund query failed; will poll again', { refund_no: input.refundNo, error: String(err) });
    }
  }
  return final;
}
