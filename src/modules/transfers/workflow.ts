import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  log,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { TransferActivities as Activities } from './activities';
import { activityProfiles, searchAttributes } from '../../platform/workflow/definitions';
import { handlerLock } from '../../platform/workflow/lock';
import { pollingOptions, pollUnless } from '../../platform/workflow/polling';
import { pollGap } from '../../platform/workflow/schedule';
import { unlessRefusedForGood } from '../../platform/workflow/refused-writes';
import type { ErrorCode } from '../../platform/errors';
import {
  cancelTransferUpdate,
  transferCreatedUpdate,
  transferResultSignal,
  type TransferWorkflowInput,
} from './messages';
import { isFinalStatus, statusOfStep, stepChanges, type TransferStatus, type TransferStep } from './rules';

// Sent once, whatever happens: an answer that does not come is followed by query (SPEC §11).
const once = proxyActivities<Activities>(activityProfiles.channelOnce);
const db = proxyActivities<Activities>(activityProfiles.dbWrite);
const publish = proxyActivities<Activities>(activityProfiles.publish);

/** The types of failure the create activity ends with (./activities.ts). */
const REFUSED = 'channel_transfer_fail';

/**
 * A create that was never answered, and that the channel still does not know a long quiet period
 * after it was sent (`neverReceivedAfterMs`, far past any request's own deadline), never reached it.
 */
const NEVER_RECEIVED: TransferStep = {
  status: 'failed',
  channelTransferNo: null,
  reason: 'the channel did not answer the transfer request and still has no such transfer: nothing was paid',
};

function causeOf(err: unknown): unknown {
  return err instanceof ActivityFailure ? err.cause : err;
}

/**
 * One transfer (SPEC §11), `transfer:{transfer_no}`: asks the channel to make it, once; follows
 * it by callback (a signal) and by polling on the backoff until it ends (`success`, `failed`,
 * `cancelled`), however long that takes (WeChat Pay waits up to 24 h for the payee to confirm);
 * records every state in the read model; announces the end once. A create that was not answered
 * is never sent again, under any number: the transfer is followed by query instead.
 *
 * Every request for the transfer waits on `transferCreated` (answered once the channel was asked),
 * so that any number of identical requests make one channel call; `cancelTransfer` asks the
 * channel to cancel, after the create and one handler at a time.
 */
export async function transferWorkflow(input: TransferWorkflowInput): Promise<TransferStatus> {
  const { transferNo } = input;
  const lock = handlerLock();
  const callbacks: TransferStep[] = [];
  let known: TransferStep | undefined;
  let asked = false;
  let refusal: string | undefined;
  /** Bumped by a cancel that recorded something: the poll waiting for the old state stops. */
  let changes = 0;

  const ended = () => known !== undefined && isFinalStatus(known.status);

  async function apply(step: TransferStep, refusedAtCreate = false): Promise<void> {
    if (!stepChanges(known, step)) return;
    // A state the database refuses for good is left to an operator (logged); the transfer is
    // still followed to its end and announced.
    await unlessRefusedForGood("the transfer's state", { transfer_no: transferNo, status: step.status }, () =>
      db.recordTransferStep({ transferNo, step, ...(refusedAtCreate ? { refusedAtCreate } : {}) }),
    );
    known = step;
    upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: statusOfStep(step) }]);
  }

  setHandler(transferResultSignal, (step) => {
    callbacks.push(step);
  });
  setHandler(transferCreatedUpdate, async () => {
    await condition(() => asked);
    if (refusal !== undefined) throw ApplicationFailure.nonRetryable(refusal, REFUSED);
  });
  setHandler(cancelTransferUpdate, async () => {
    await condition(() => asked);
    await lock.runExclusive(async () => {
      if (ended()) return;
      let step: TransferStep | null;
      try {
        step = await once.cancelChannelTransfer({ transferNo });
      } catch (err) {
        const cause = causeOf(err);
        if (cause instanceof ApplicationFailure && cause.type) {
          throw ApplicationFailure.nonRetryable(cause.message, cause.type as ErrorCode);
        }
        throw ApplicationFailure.nonRetryable(
          'the channel did not answer the cancel in time; ask for the transfer to see where it stands',
          'channel_timeout',
        );
      }
      if (step) await apply(step);
      changes++;
    });
  });

  upsertSearchAttributes([
    { key: searchAttributes.AppId, value: input.appId },
    { key: searchAttributes.ChannelCode, value: input.channelCode },
    ...(input.merchantId ? [{ key: searchAttributes.MerchantId, value: input.merchantId }] : []),
    { key: searchAttributes.BizStatus, value: 'processing' },
  ]);

  let unanswered = false;
  const sentAt = Date.now();
  await lock.runExclusive(async () => {
    let first: TransferStep;
    try {
      first = await once.createChannelTransfer({ transferNo, callbackUrl: input.callbackUrl });
    } catch (err) {
      const cause = causeOf(err);
      if (cause instanceof ApplicationFailure && cause.type === REFUSED) {
        refusal = cause.message;
        first = { status: 'failed', channelTransferNo: null, reason: cause.message };
      } else {
        // No answer (or the worker was lost mid-call): whether the channel has it is asked, not re-sent.
        unanswered = true;
        asked = true;
        return;
      }
    }
    await apply(first, refusal !== undefined);
    asked = true;
  });

  let firstGap = 0;
  let notFoundInARow = 0;
  while (!ended()) {
    // A handler that recorded something (a cancel; the created update's answer) has finished and
    // answered before the loop issues its next command: the order of an update's completion and
    // the loop's commands is then the same whatever wraps the handlers (tracing interceptors).
    await condition(allHandlersFinished);
    if (ended()) break;
    const deadlineMs = Date.now() + input.pollForMs;
    const seen = changes;
    const awaitTransfer = proxyActivities<Activities>(
      pollingOptions(deadlineMs, pollGap(input.pollGapsMs, Infinity)),
    ).awaitChannelTransfer;
    const waiting = known?.status ?? (unanswered ? null : 'processing');
    const waited = await pollUnless(
      () =>
        awaitTransfer({
          transferNo,
          known: waiting,
          callbackUrl: input.callbackUrl,
          gapsMs: input.pollGapsMs,
          firstGap,
          deadlineMs,
          askAtDeadline: false,
        }),
      () => callbacks.length > 0 || changes !== seen,
    );
    await lock.runExclusive(async () => {
      if ('interrupted' in waited) {
        for (const step of callbacks.splice(0)) await apply(step);
        return;
      }
      if ('failed' in waited) {
        log.warn('transfer polling ended without an answer; following again', {
          transfer_no: transferNo,
          error: String(waited.failed),
        });
        await sleep(pollGap(input.pollGapsMs, firstGap));
        return;
      }
      // A cancel recorded a newer state while this poll answered about the older one.
      if (changes !== seen) return;
      const outcome = waited.done;
      if ('due' in outcome) {
        // Another window, at the schedule's longest gap: the transfer is followed until it ends.
        firstGap = input.pollGapsMs.length;
        return;
      }
      firstGap = outcome.nextGap;
      const answer = outcome.answer;
      if (answer === null) {
        // Only once the request cannot still be on its way (and twice in a row) is it never coming.
        notFoundInARow += 1;
        const quietFor = Date.now() - sentAt;
        if (notFoundInARow >= 2 && quietFor >= (input.neverReceivedAfterMs ?? input.pollForMs)) {
          await apply(NEVER_RECEIVED);
        }
        return;
      }
      notFoundInARow = 0;
      unanswered = false;
      await apply(answer);
    });
  }

  await condition(allHandlersFinished);
  await unlessRefusedForGood(
    `the transfer's ${known!.status} notification`,
    { transfer_no: transferNo },
    () => publish.notifyTransferEvent({ transferNo }),
  );
  await condition(allHandlersFinished);
  return statusOfStep(known!);
}
