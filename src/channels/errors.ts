/**
 * How a channel call fails, and the one map from such a failure to the SPEC error code a client
 * is answered with (and to whether the activity that made the call may try again). Adapters
 * throw ChannelError only; activities hand whatever they caught to toActivityFailure.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ErrorCode } from '../platform/errors';

/**
 * Why a channel call did not succeed: the channel said no (`refused`), could not be reached or
 * failed on its side (`unreachable`), did not answer in time (`timeout`), does not offer the
 * operation (`not_supported`), or answered something that could not be read (`invalid_response`).
 */
export type ChannelErrorKind = 'refused' | 'unreachable' | 'timeout' | 'not_supported' | 'invalid_response';

export class ChannelError extends Error {
  override name = 'ChannelError';
  constructor(
    readonly kind: ChannelErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** The operations whose failures mean different things to a client. */
export type ChannelOperation =
  | 'create'
  | 'query'
  | 'close'
  | 'refund'
  | 'refund_query'
  | 'profit_share'
  | 'onboarding'
  | 'transfer'
  | 'transfer_query'
  | 'barcode'
  | 'reverse'
  | 'complaint';

/** Anything that is not a ChannelError (a bug, a lost database connection): treated as unreachable. */
type FailureKind = ChannelErrorKind | 'other';

/** An answer (refused, unreadable, not offered) is final; a missing one may be tried again. */
const RETRYABLE: Record<FailureKind, boolean> = {
  refused: false,
  invalid_response: false,
  not_supported: false,
  unreachable: true,
  timeout: true,
  other: true,
};

/**
 * SPEC §3: a refused create is `channel_create_fail`, a refused refund `channel_refund_fail`;
 * a channel that cannot be reached, or that would not say how a payment stands (query, close),
 * leaves the outcome unknown: `channel_timeout`. A share is the creation of a share order at
 * the channel. Onboarding (SPEC §5.5, §5.6): every failure is `internal_system`.
 */
function payments(refused: ErrorCode): Record<FailureKind, ErrorCode> {
  return {
    refused,
    invalid_response: refused,
    not_supported: 'channel_not_support',
    unreachable: 'channel_timeout',
    timeout: 'channel_timeout',
    other: 'channel_timeout',
  };
}

const CODES: Record<ChannelOperation, Record<FailureKind, ErrorCode>> = {
  create: payments('channel_create_fail'),
  query: payments('channel_timeout'),
  close: payments('channel_timeout'),
  refund: payments('channel_refund_fail'),
  refund_query: payments('channel_refund_fail'),
  profit_share: payments('channel_create_fail'),
  transfer: payments('channel_transfer_fail'),
  transfer_query: payments('channel_transfer_fail'),
  // SPEC §14: a code the channel refused is a payment not made; an answer that cannot be read
  // leaves it unknown, like no answer, and the payment is reversed.
  barcode: { ...payments('order_not_paid'), invalid_response: 'channel_timeout' },
  // A reverse the channel refuses leaves a payment it holds: the order is paid.
  reverse: { ...payments('order_already_paid'), invalid_response: 'channel_timeout' },
  // SPEC §16: the channel refusing a reply or a completion has decided the complaint (it is
  // processed there, or takes no more); its message says why.
  complaint: { ...payments('complaint_processed'), invalid_response: 'channel_timeout' },
  onboarding: {
    refused: 'internal_system',
    invalid_response: 'internal_system',
    not_supported: 'internal_system',
    unreachable: 'internal_system',
    timeout: 'internal_system',
    other: 'internal_system',
  },
};

export interface ChannelFailure {
  code: ErrorCode;
  retryable: boolean;
  message: string;
}

/** What a failed channel call means for a client: the SPEC code, retryability and a message. */
export function channelFailure(err: unknown, operation: ChannelOperation): ChannelFailure {
  const kind: FailureKind = err instanceof ChannelError ? err.kind : 'other';
  const text = err instanceof Error ? err.message : String(err);
  const retryable = RETRYABLE[kind];
  // Payment-side messages have always said that a retry is coming; onboarding's are shown as they are.
  const message =
    err instanceof ChannelError && retryable && operation !== 'onboarding'
      ? `channel unreachable: ${text}`
      : text;
  return { code: CODES[operation][kind], retryable, message };
}

/**
 * A failed channel call as an activity failure whose type is the SPEC code (which the workflow
 * passes on as is). A failure that already carries a code is left as it is.
 */
export function toActivityFailure(err: unknown, operation: ChannelOperation): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const { code, retryable, message } = channelFailure(err, operation);
  return retryable
    ? ApplicationFailure.retryable(message, code)
    : ApplicationFailure.nonRetryable(message, code);
}
