/** RFC 3339 in UTC with milliseconds, or null (SPEC §1). */
export function isoOrNull(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString();
}

/**
 * SQL (a WITH item, `days`) for the days from `:back` days before today to today in `:timeZone`, each with the instants it
 * starts and ends at: a tally joins its rows to them through their created_at index, so that
 * each row's day is a range it falls in, not a text computed for every row and grouped on
 * (materialized: each day's bounds and text are computed once, not once per row joined).
 */
export const DAYS_IN_ZONE = `days AS MATERIALIZED (
  SELECT to_char(d, 'YYYY-MM-DD') AS day, d AT TIME ZONE :timeZone AS starts,
         (d + interval '1 day') AT TIME ZONE :timeZone AS ends
    FROM (SELECT date_trunc('day', now() AT TIME ZONE :timeZone) - make_interval(days => g) AS d
            FROM generate_series(0, :back) g) back)`;
