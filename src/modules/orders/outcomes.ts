import { WorkflowUpdateFailedError, type WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AppError, isErrorCode } from '../../platform/errors';
import { isTransientUpdateError } from '../../platform/temporal-updates';

/** gRPC DEADLINE_EXCEEDED anywhere in the chain: the request deadline passed at the server. */
function deadlineExceeded(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === 4) return true;
  }
  return false;
}

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

/** The type of the application failure a workflow update failed with, if it failed with one. */
export function failureType(err: unknown): string | undefined {
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure)
    return err.cause.type ?? undefined;
  return undefined;
}

/** A workflow update's business failure becomes the SPEC error it carries. */
export function toAppError(err: unknown, operation: OrderOperation): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const type = err.cause.type;
    if (isErrorCode(type)) return new AppError(type, err.cause.message);
  }
  if (err instanceof ApplicationFailure && isErrorCode(err.type)) return new AppError(err.type, err.message);
  if (
    (err as WorkflowUpdateRPCTimeoutOrCancelledError)?.name === 'WorkflowUpdateRPCTimeoutOrCancelledError' ||
    // Still refused as transient when the deadline came (the update was not applied, the request
    // may be sent again), or the deadline itself: the outcome is unknown, never a 500.
    isTransientUpdateError(err) ||
    deadlineExceeded(err)
  ) {
    return new AppError('channel_timeout', OUTCOME_UNKNOWN[operation]);
  }
  throw err;
}
