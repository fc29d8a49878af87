/** Onboarding applications (SPEC §5.6, §5.7): states, the audit schedule, file references. */

/** Application states (SPEC §5.7); the last three are final. */
export const APPLICATION_STATUSES = [
  'submitted',
  'auditing',
  'to_be_confirmed',
  'to_be_signed',
  'finished',
  'rejected',
  'canceled',
] as const;

/** States after which the channel decides nothing more. */
export const FINAL_APPLICATION_STATUSES: readonly string[] = ['finished', 'rejected', 'canceled'];

/** SPEC §5.7: an application's audit is polled after 5 s, 10 s, 30 s, 1 min, 5 min, 15 min, then hourly… */
export const AUDIT_POLL_SCHEDULE_MS = [5_000, 10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000];
/** …for up to 30 days. */
export const AUDIT_WINDOW_MS = 30 * 24 * 3_600_000;

/** An application's state. */
export type ApplicationStatus = (typeof APPLICATION_STATUSES)[number];

/** One text inside an application's submit_data, with where it stands (`docs[0].front`). */
export interface SubmitDataText {
  path: string;
  value: string;
}

/**
 * Every text value in submit_data that could name an uploaded file (SPEC §5.6): at most
 * 128 characters, the longest file id a channel may assign. Keys are never file ids.
 */
export function fileIdCandidates(submitData: Record<string, unknown>): SubmitDataText[] {
  const out: SubmitDataText[] = [];
  const stack: { value: unknown; path: string }[] = [{ value: submitData, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.length > 0 && value.length <= 128) out.push({ path, value });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push({ value: v, path: `${path}[${i}]` }));
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: path ? `${path}.${k}` : k });
    }
  }
  return out;
}
