import { AppError } from '../../platform/errors';
import { workflowCallError } from '../../platform/temporal-failures';

/**
 * What a client is told when the request deadline passed before the order decided: the channel
 * may be slow, or no worker may be running; either way the request may still take effect, and
 * only sending it again (it is idempotent) says how it ended.
 */
const OUTCOME_UNKNOWN = {
  create:
    'the outcome is not known yet: the order was not decided within the request deadline ' +
    '(the channel or durapay is slow or unavailable); send the same request again to learn it, ' +
    'the order is created at most once',
  close:
    'the outcome is not known yet: the close was not decided within the request deadline ' +
    '(the channel or durapay is slow or unavailable); send it again to learn it',
  refund:
    'the outcome is not known yet: the refund was not decided within the request deadline ' +
    '(the channel or durapay is slow or unavailable) and may still be made; send the request ' +
    'again with the same merchant_refund_no to learn it',
} as const;

export type OrderOperation = keyof typeof OUTCOME_UNKNOWN;

/**
 * An order's workflow update that failed: its business failure becomes the SPEC error it carries
 * (any code); no answer within the deadline is an unknown outcome (502 channel_timeout, send it
 * again), never a 500.
 */
export function toAppError(err: unknown, operation: OrderOperation): AppError {
  const answer = workflowCallError(err, { codes: 'every' });
  return answer === 'unanswered' ? new AppError('channel_timeout', OUTCOME_UNKNOWN[operation]) : answer;
}
