/** Reading a workflow's history in tests: which activities it called, regular or local. */
import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * The activity types a history called, in order: each regular activity's scheduled event and
 * each local activity's marker (which records the attempt that ended it).
 */
export function activityCalls(events: HistoryEvent[] | null | undefined): string[] {
  const out: string[] = [];
  for (const e of events ?? []) {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) out.push(scheduled);
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = marker.details?.data?.payloads?.[0]?.data;
      if (data) {
        const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string };
        if (parsed.activity_type) out.push(parsed.activity_type);
      }
    }
  }
  return out;
}
