/** Reading a workflow's history in tests: which activities it called, regular or local; replaying it. */
import fs from 'node:fs';
import type { Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { sealedDataConverter } from '../../src/platform/data-converter';
import { globalState } from './state';

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

/** Every payload anywhere in a history (inputs, results, signals, updates, markers, failures, headers), with where it is. */
export function payloadsAt(value: unknown, at = '', found: { at: string; payload: Payload }[] = []) {
  if (Array.isArray(value)) {
    value.forEach((v, i) => payloadsAt(v, `${at}[${i}]`, found));
  } else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (o.metadata && typeof o.metadata === 'object' && 'data' in o)
      found.push({ at, payload: o as Payload });
    for (const [key, v] of Object.entries(o)) {
      // Search attributes are payloads the UI must read to query; they carry no secrets (SPEC §7).
      if (key === 'searchAttributes') continue;
      payloadsAt(v, `${at}.${key}`, found);
    }
  }
  return found;
}

/**
 * Payloads written in the clear by Temporal itself, never by durapay, holding only its own
 * bookkeeping: the id of a patch (`patched`) in its marker, a local activity's sequence number,
 * type and times in its marker (its result is sealed), and why the server cancelled an activity
 * that had not started. Works on a history as the client reads it and as the CLI prints it.
 */
export function writtenByTemporal(history: unknown, at: string): boolean {
  type Event = {
    markerRecordedEventAttributes?: { markerName?: string };
    activityTaskCanceledEventAttributes?: {
      details?: { payloads?: { data?: Uint8Array | string | null }[] };
    };
  };
  const index = /^\.events\[(\d+)\]/.exec(at)?.[1];
  const event = (history as { events?: Event[] }).events?.[Number(index)];
  const marker = event?.markerRecordedEventAttributes?.markerName;
  if (marker === 'core_patch') return true;
  if (marker === 'core_local_activity' && at.includes('.markerRecordedEventAttributes.details.data.'))
    return true;
  const cancelled = event?.activityTaskCanceledEventAttributes?.details?.payloads;
  if (at.includes('.activityTaskCanceledEventAttributes.details.') && cancelled?.length === 1) {
    const data = cancelled[0]!.data;
    const text = (
      typeof data === 'string' ? Buffer.from(data, 'base64') : Buffer.from(data ?? [])
    ).toString();
    return text === '"ACTIVITY_ID_NOT_STARTED"';
  }
  return false;
}

export function payloadsOf(value: unknown): Payload[] {
  return payloadsAt(value).map((p) => p.payload);
}

/**
 * Replays histories against the bundled workflow code of this test run, with the given payload
 * keys (the run's own by default); each result's error is undefined when it replayed cleanly.
 */
export async function replayHistories(
  histories: { workflowId: string; history: temporal.api.history.v1.IHistory }[],
  keys: string = globalState().payloadKeys,
): Promise<{ workflowId: string; error?: string }[]> {
  const results = [];
  for await (const result of Worker.runReplayHistories(
    {
      workflowBundle: { code: fs.readFileSync(globalState().bundlePath, 'utf8') },
      // Sealed payloads open with the keys; those recorded before the codec pass through.
      dataConverter: sealedDataConverter(parsePayloadKeys(keys, 'the test payload keys')),
    },
    histories,
  )) {
    results.push({ workflowId: result.workflowId, error: result.error?.message });
  }
  return results;
}
