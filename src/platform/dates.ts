/** RFC 3339 in UTC with milliseconds, or null (SPEC §1). */
export function isoOrNull(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString();
}
