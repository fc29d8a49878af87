import {
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../worker/activities';
import {
  activityProfiles,
  localActivityProfiles,
  searchAttributes,
} from '../../platform/workflow/definitions';
import {
  patches,
  resendNotificationSignal,
  type NotificationOutcome,
  type NotificationWorkflowInput,
} from './messages';

const remoteDb = proxyActivities<Activities>(activityProfiles.dbWrite);
const localDb = proxyLocalActivities<Activities>(localActivityProfiles.dbWrite);
// A failed HTTP attempt is a result, not an error; only infrastructure failures retry here.
const { deliverNotification } = proxyActivities<Activities>(activityProfiles.notifyDelivery);

/**
 * Delivers one notification (SPEC §6): an attempt now, then one after each gap of the
 * schedule, until a 2xx. Waits are durable timers, so a worker restart neither loses nor
 * repeats an attempt. A resend signal starts a fresh series at once.
 */
export async function notificationWorkflow(input: NotificationWorkflowInput): Promise<NotificationOutcome> {
  // Opening a series is one short database write: no need for a round trip through the server.
  const { beginNotificationSeries } = patched(patches.notificationLocalSeries) ? localDb : remoteDb;
  let resendRequested = false;
  setHandler(resendNotificationSignal, () => {
    resendRequested = true;
  });
  const { runId } = workflowInfo();
  const attempts = input.gapsMs.length + 1;
  let outcome: NotificationOutcome = 'failed';
  let seriesIndex = 0;

  do {
    resendRequested = false;
    seriesIndex += 1;
    const series = await beginNotificationSeries({
      notificationId: input.notificationId,
      token: `${runId}:${seriesIndex}`,
    });
    upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: 'pending' }]);
    outcome = 'failed';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const final = attempt === attempts;
      const result = await deliverNotification({
        notificationId: input.notificationId,
        series,
        attempt,
        final,
        nextGapMs: final ? null : input.gapsMs[attempt - 1]!,
      });
      if (result.outcome === 'delivered') {
        outcome = 'delivered';
        break;
      }
      if (result.outcome === 'failed' || final) break;
      // Wakes early only for a resend, which starts a new series.
      if (await condition(() => resendRequested, input.gapsMs[attempt - 1]!)) break;
    }
    upsertSearchAttributes([
      { key: searchAttributes.BizStatus, value: resendRequested ? 'pending' : outcome },
    ]);
  } while (resendRequested);

  return outcome;
}
