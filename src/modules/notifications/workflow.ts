import {
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { NotificationActivities as Activities } from './activities';
import {
  activityProfiles,
  localActivityProfiles,
  searchAttributes,
} from '../../platform/workflow/definitions';
import {
  resendNotificationSignal,
  type NotificationOutcome,
  type NotificationWorkflowInput,
} from './messages';

// Opening a series is one short database write: a local activity, no round trip through the server.
const { beginNotificationSeries } = proxyLocalActivities<Activities>(localActivityProfiles.dbWrite);
// A failed HTTP attempt is a result, not an error; only infrastructure failures retry here.
const { deliverNotification } = proxyActivities<Activities>(activityProfiles.notifyDelivery);

/**
 * Delivers one notification (SPEC §6): an attempt now, then one after each gap of the
 * schedule, until a 2xx. Waits are durable timers, so a worker restart neither loses nor
 * repeats an attempt. A resend signal starts a fresh series at once.
 *
 * The publisher usually makes attempt 1 of the first series itself (`input.firstAttempt`):
 * then a delivered or refused notification ends in this workflow's first task, with no
 * activity, and one that should be retried waits the first gap and goes on from attempt 2.
 * A run started without one (a resend, or a first series the publisher did not claim) opens its
 * series itself and makes attempt 1.
 *
 * A write the database refuses for good (opening a series, recording an attempt) fails the run
 * at once (activities/permanent-database-errors.ts), and that is what it should do: nothing
 * else waits on a notification, the failed run and the worker's error name the write, and
 * `POST /api/v1/notifications/{id}/resend` starts a new run once the cause is mended.
 */
export async function notificationWorkflow(input: NotificationWorkflowInput): Promise<NotificationOutcome> {
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
    const made = seriesIndex === 1 ? input.firstAttempt : undefined;
    let series: number;
    let next = 1;
    outcome = 'failed';
    if (made) {
      // The search attribute was set at start from this outcome.
      series = made.series;
      if (made.outcome === 'delivered') outcome = 'delivered';
      next = made.outcome === 'retry' && !(await condition(() => resendRequested, input.gapsMs[0]!)) ? 2 : 0;
    } else {
      series = await beginNotificationSeries({
        notificationId: input.notificationId,
        token: `${runId}:${seriesIndex}`,
      });
      upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: 'pending' }]);
    }
    for (let attempt = next; attempt >= 1 && attempt <= attempts; attempt++) {
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
    const shown = resendRequested ? 'pending' : outcome;
    // A first attempt that settled the series left the attribute as it was started.
    if (!(made && made.outcome !== 'retry' && shown === made.outcome)) {
      upsertSearchAttributes([{ key: searchAttributes.BizStatus, value: shown }]);
    }
  } while (resendRequested);

  return outcome;
}
