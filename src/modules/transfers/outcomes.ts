/**
 * What a failed workflow call means for a transfer request: the business failure it carries, or
 * a run that has ended / an answer that did not come in time (the row then says where the
 * transfer stands). Temporal's errors are read by name along their cause chain.
 */
import { isTransientUpdateError } from '../../platform/temporal-updates';

function causeChain(err: unknown): { type?: unknown; message?: unknown; name?: unknown }[] {
  const out: { type?: unknown; message?: unknown; name?: unknown }[] = [];
  for (let e: unknown = err; e && out.length < 8; e = (e as { cause?: unknown }).cause) out.push(e as never);
  return out;
}

/** The type of the ApplicationFailure an update failed with, if it failed with one. */
export function failureType(err: unknown): string | undefined {
  const failure = causeChain(err).find((e) => (e as { name?: unknown }).name === 'ApplicationFailure');
  return typeof failure?.type === 'string' ? failure.type : undefined;
}

export function failureMessage(err: unknown): string {
  const failure = causeChain(err).find((e) => (e as { name?: unknown }).name === 'ApplicationFailure');
  return String(failure?.message ?? (err instanceof Error ? err.message : err));
}

/** A run that has ended (started again: refused), or an answer that did not come in time. */
export function endedOrSlow(err: unknown): boolean {
  return causeChain(err).some(
    (e) =>
      e.name === 'WorkflowExecutionAlreadyStartedError' ||
      e.name === 'WorkflowNotFoundError' ||
      e.name === 'WorkflowUpdateRPCTimeoutOrCancelledError' ||
      (e as { code?: unknown }).code === 4 ||
      isTransientUpdateError(e),
  );
}
