/**
 * What a failed workflow call means for a transfer request (read by
 * platform/temporal-failures.ts): the business failures it hands on, or no answer — a run that
 * has ended or an answer that did not come in time, when the row says where the transfer stands.
 */
import type { WorkflowCallErrors } from '../../platform/temporal-failures';

/** A create: only the channel's refusal is handed on, named by the transfer. */
export function createFailures(transferNo: string): WorkflowCallErrors {
  return {
    codes: ['channel_transfer_fail'],
    message: (failure) => `transfer ${transferNo}: ${failure}`,
    endedRunIsUnanswered: true,
  };
}

/** A cancel: the channel's refusal, a channel that cannot cancel, or one that did not answer. */
export const CANCEL_FAILURES: WorkflowCallErrors = {
  codes: ['channel_transfer_fail', 'channel_not_support', 'channel_timeout'],
  endedRunIsUnanswered: true,
};
