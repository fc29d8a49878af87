import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ApplicationActivities as Activities } from './activities';
import type { ApplicationState } from '../../channels/ports';
import { FINAL_APPLICATION_STATUSES } from './rules';
import { pollGap } from '../../platform/workflow/schedule';
import { handlerLock } from '../../platform/workflow/lock';
import { pollingOptions } from '../../platform/workflow/polling';
import { activityProfiles, searchAttributes } from '../../platform/workflow/definitions';
import { submitApplicationUpdate, type MerchantApplicationInput } from './messages';
import { unlessRefusedForGood } from '../../platform/workflow/refused-writes';

const channel = proxyActivities<Activities>(activityProfiles.channelCall);
const db = proxyActivities<Activities>(activityProfiles.dbWrite);
// Publishing an event makes the notification's first attempt (modules/notifications/service.ts).
const publish = proxyActivities<Activities>(activityProfiles.publish);

/**
 * One onboarding application (SPEC §5.6–5.7): submits it, then follows the channel's audit on
 * a durable backoff (5 s, 10 s, 30 s, 1 min, 5 min, 15 min, then hourly) for up to 30 days,
 * recording and notifying every change, and moving the merchant with it.
 */
export async function merchantApplicationWorkflow(input: MerchantApplicationInput): Promise<string> {
  let phase = 'new' as 'new' | 'submitted' | 'failed';
  let failure: { message: string } | undefined;
  let state: ApplicationState | undefined;
  let seq = 0;

  upsertSearchAttributes([
    { key: searchAttributes.AppId, value: input.appId },
    { key: searchAttributes.MerchantId, value: input.merchantId },
    { key: searchAttributes.ChannelCode, value: input.channelCode },
    { key: searchAttributes.BizStatus, value: 'submitted' },
  ]);

  async function record(next: ApplicationState): Promise<void> {
    seq += 1;
    // The channel's answer stands whether or not the database takes its row: the audit goes on
    // from it (a submission the channel accepted is not cancelled here), and a later answer is
    // recorded in full, the merchant and the notification with it.
    await unlessRefusedForGood(
      "the application's state",
      { application_id: input.applicationId, status: next.status },
      () => publish.recordApplicationState({ applicationId: input.applicationId, state: next, seq }),
    );
    if (!state || state.status !== next.status) {
      upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: next.status }]);
    }
    state = next;
  }

  // Submits one at a time: a second submit waits for the first and answers what it decided.
  const lock = handlerLock();
  setHandler(submitApplicationUpdate, () => lock.runExclusive(submit));

  async function submit() {
    if (phase === 'submitted') return { application_id: input.applicationId };
    if (phase === 'failed') throw ApplicationFailure.nonRetryable(failure!.message, 'internal_system');
    try {
      const accepted = await channel.submitMerchantApplication({ applicationId: input.applicationId });
      await record(accepted);
      phase = 'submitted';
      return { application_id: input.applicationId };
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : err;
      failure = { message: cause instanceof Error ? cause.message : String(cause) };
      phase = 'failed';
      // The client hears the channel's refusal, whether or not the database takes the cancel.
      const reason = `submission failed: ${failure.message}`;
      await unlessRefusedForGood(
        'the cancel of a refused submission',
        { application_id: input.applicationId },
        () => db.cancelMerchantApplication({ applicationId: input.applicationId, reason }),
      );
      throw ApplicationFailure.nonRetryable(failure.message, 'internal_system');
    }
  }

  // A cancel here (never submitted, or no decision within the audit window) that the database
  // refuses for good fails the run, visibly: nothing else waits for it.
  await condition(() => phase !== 'new', '5 minutes');
  if (phase !== 'submitted') {
    if (phase === 'new') {
      await db.cancelMerchantApplication({ applicationId: input.applicationId, reason: 'never submitted' });
    } else {
      // The submit that failed is still writing the cancel and answering its client.
      await condition(allHandlersFinished);
    }
    return 'canceled';
  }

  const giveUpAt = Date.now() + input.pollForMs;
  const gaveUp = () =>
    db.cancelMerchantApplication({
      applicationId: input.applicationId,
      reason: 'the channel did not decide within the audit window',
    });

  // One polling activity per change of the audit; its retries are the backoff.
  let firstGap = 0;
  while (state && !FINAL_APPLICATION_STATUSES.includes(state.status)) {
    const awaitChange = proxyActivities<Activities>(
      pollingOptions(giveUpAt, pollGap(input.pollGapsMs, Infinity)),
    ).awaitApplicationChange;
    let outcome;
    try {
      outcome = await awaitChange({
        applicationId: input.applicationId,
        channelCode: input.channelCode,
        known: state,
        gapsMs: input.pollGapsMs,
        firstGap,
        deadlineMs: giveUpAt,
        askAtDeadline: true,
      });
    } catch (err) {
      log.warn('audit polling ended without an answer', {
        application_id: input.applicationId,
        error: String(err),
      });
    }
    if (!outcome || 'due' in outcome) {
      await gaveUp();
      return 'canceled';
    }
    await record(outcome.answer);
    firstGap = outcome.nextGap;
  }
  return state?.status ?? 'canceled';
}
