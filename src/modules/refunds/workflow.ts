import {
  condition,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../../worker/activities';
import { pollGap } from '../orders/rules';
import { activityProfiles, searchAttributes } from '../../platform/workflow/definitions';
import { refundResultSignal, type RefundSignal, type RefundWorkflowInput } from './messages';
import { refundSettledSignal } from '../orders/messages';

const channel = proxyActivities<Activities>(activityProfiles.channelBackground);
const db = proxyActivities<Activities>(activityProfiles.dbWrite);

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
      if (st.status === 'success') {
        final = {
          status: 'success',
          channelRefundNo: st.channelRefundNo,
          refundedAt: new Date(st.refundedAt).toISOString(),
          reason: null,
        };
      } else if (st.status === 'failed') {
        final = {
          status: 'failed',
          channelRefundNo: st.channelRefundNo,
          refundedAt: null,
          reason: st.reason,
        };
      }
      notFoundInARow = st.status === 'not_found' ? notFoundInARow + 1 : 0;
      if (input.unanswered && notFoundInARow >= 2) {
        final = {
          status: 'failed',
          channelRefundNo: null,
          refundedAt: null,
          reason: 'the channel did not answer the refund request and has no such refund',
        };
      }
    } catch (err) {
      log.warn('refund query failed; will poll again', { refund_no: input.refundNo, error: String(err) });
    }
  }
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
  await db.notifyRefundEvent({
    refundNo: input.refundNo,
    type: outcome.status === 'success' ? 'refund.succeeded' : 'refund.failed',
  });
  upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: outcome.status }]);
  return outcome.status;
}
