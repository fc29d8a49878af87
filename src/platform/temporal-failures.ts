/**
 * What a failed workflow call (an update, an update-with-start, a start) tells the client that
 * made it: the business failure the workflow answered with, or no answer at all. The one reader
 * of those failures; each module passes in which SPEC codes it hands on and how their messages
 * read (orders/outcomes.ts, transfers/outcomes.ts). Temporal's errors are read by name along
 * their cause chain, so a failure wrapped once more is still read the same.
 */
import { AppError, isErrorCode, type ErrorCode } from './errors';
import { isTransientUpdateError } from './temporal-updates';

interface Link {
  name?: unknown;
  type?: unknown;
  message?: unknown;
  code?: unknown;
}

function causeChain(err: unknown): Link[] {
  const out: Link[] = [];
  for (let e: unknown = err; e && out.length < 8; e = (e as { cause?: unknown }).cause) out.push(e as Link);
  return out;
}

/** The ApplicationFailure a workflow call failed with, if it failed with one. */
function applicationFailure(err: unknown): Link | undefined {
  return causeChain(err).find((e) => e.name === 'ApplicationFailure');
}

/** The type of the ApplicationFailure a workflow call failed with, if it failed with one. */
export function failureType(err: unknown): string | undefined {
  const type = applicationFailure(err)?.type;
  return typeof type === 'string' ? type : undefined;
}

/**
 * No answer came, and the call may still take effect: the update's wait timed out or was
 * cancelled, the request deadline passed at the server (gRPC DEADLINE_EXCEEDED), or the server
 * still refused it as transient when the deadline came (temporal-updates.ts).
 */
function unanswered(err: unknown): boolean {
  return (
    causeChain(err).some((e) => e.name === 'WorkflowUpdateRPCTimeoutOrCancelledError' || e.code === 4) ||
    isTransientUpdateError(err)
  );
}

/** The workflow's run has ended (not found), or was not started again (already started). */
function runEnded(err: unknown): boolean {
  return causeChain(err).some(
    (e) => e.name === 'WorkflowNotFoundError' || e.name === 'WorkflowExecutionAlreadyStartedError',
  );
}

/** A module's reading of its workflow calls' failures. */
export interface WorkflowCallErrors {
  /** The business failures handed on as the SPEC errors they carry: every SPEC code, or these. */
  codes: 'every' | readonly ErrorCode[];
  /** How a handed-on failure's message reads (default: as the workflow wrote it). */
  message?: (failureMessage: string) => string;
  /** A run that has ended (or was not started again) counts as no answer: the read model says. */
  endedRunIsUnanswered?: boolean;
}

/**
 * What a failed workflow call answers: the AppError of a business failure it carries (an
 * AppError as it is), or `'unanswered'` when no answer came in time, for the caller to say how
 * it stands. Anything else is thrown again as it is: a bug or an outage is never disguised.
 */
export function workflowCallError(err: unknown, errors: WorkflowCallErrors): AppError | 'unanswered' {
  if (err instanceof AppError) return err;
  const failure = applicationFailure(err);
  const type = failure?.type;
  if (isErrorCode(type) && (errors.codes === 'every' || errors.codes.includes(type))) {
    const message = String(failure!.message);
    return new AppError(type, errors.message ? errors.message(message) : message);
  }
  if (unanswered(err) || (errors.endedRunIsUnanswered === true && runEnded(err))) return 'unanswered';
  throw err;
}
