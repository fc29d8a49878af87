export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/**
 * The list parameters of SPEC §5.3 (seed §4.3): absent → default; not an integer → 0;
 * negative → 0; a limit above 100 → 100. Never an error.
 */
export function parsePage(query: { limit?: unknown; offset?: unknown }): { limit: number; offset: number } {
  return {
    limit: Math.min(MAX_LIMIT, readInt(query.limit, DEFAULT_LIMIT)),
    offset: readInt(query.offset, 0),
  };
}

function readInt(value: unknown, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (typeof value !== 'string' || !/^[+-]?\d+$/.test(value.trim())) return 0;
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n) || n < 0) return 0;
  return n;
}

/**
 * Where a page of a list read newest first by keyset ends (the operator console's lists): its
 * last row's creation time, in UTC to the microsecond as Postgres keeps it (a time cut to the
 * millisecond would skip rows created in the same millisecond), and the row's key. `rank` orders
 * groups before time where a list has them (failed notifications first).
 */
export interface KeysetPosition {
  at: string;
  key: string;
  rank?: number;
}

/** A page to read: at most `limit` rows after `after` (from the newest when absent). */
export interface KeysetPage {
  limit: number;
  after?: KeysetPosition;
}

/** A page read, and where the next one starts (null: this was the last). */
export interface KeysetResult<T> {
  rows: T[];
  next: KeysetPosition | null;
}

/** SQL for a timestamptz column as a keyset position keeps it (see KeysetPosition.at). */
export function keysetAt(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * The page of `rows`, read with `LIMIT limit + 1`: the extra row, when there is one, says that
 * another page follows, which starts after the page's last row.
 */
export function keysetPageOf<T>(
  rows: T[],
  limit: number,
  positionOf: (row: T) => KeysetPosition,
): KeysetResult<T> {
  if (rows.length <= limit) return { rows, next: null };
  const page = rows.slice(0, limit);
  return { rows: page, next: positionOf(page[page.length - 1]!) };
}

/**
 * The WHERE of a search from optional filters, with its named replacements: each filter given
 * adds one condition, one left out adds none. Column names are the caller's constants; values
 * only ever travel as replacements.
 */
export class SearchConditions {
  private readonly conditions: string[] = [];
  readonly replacements: Record<string, unknown>;

  constructor(replacements: Record<string, unknown> = {}) {
    this.replacements = { ...replacements };
  }

  /** A condition of the caller's own, with the values it names. */
  where(sql: string, values: Record<string, unknown> = {}): this {
    this.conditions.push(sql);
    Object.assign(this.replacements, values);
    return this;
  }

  /** `column = :name` when `value` is given, the value cast to `type` when one is named. */
  equals(column: string, name: string, value: unknown, type?: string): this {
    if (value === undefined) return this;
    return this.where(`${column} = ${type ? `CAST(:${name} AS ${type})` : `:${name}`}`, { [name]: value });
  }

  /** `column op :name` when `value` is given, the value cast to `type` when one is named. */
  compare(column: string, op: '>=' | '<' | '<=', name: string, value: unknown, type?: string): this {
    if (value === undefined) return this;
    const param = type ? `CAST(:${name} AS ${type})` : `:${name}`;
    return this.where(`${column} ${op} ${param}`, { [name]: value });
  }

  /** Rows after a keyset position, newest first: `(time, key…) < (position)`. */
  after(
    timeColumn: string,
    keys: { column: string; value: string; type?: string }[],
    at: string | undefined,
  ): this {
    if (at === undefined) return this;
    const values: Record<string, unknown> = { afterAt: at };
    const params = keys.map((k, i) => {
      values[`afterKey${i}`] = k.value;
      return k.type ? `CAST(:afterKey${i} AS ${k.type})` : `:afterKey${i}`;
    });
    return this.where(
      `(${[timeColumn, ...keys.map((k) => k.column)].join(', ')}) < (CAST(:afterAt AS timestamptz), ${params.join(', ')})`,
      values,
    );
  }

  /** `WHERE a AND b …`, or nothing when no filter was given. */
  sql(): string {
    return this.conditions.length > 0 ? `WHERE ${this.conditions.join(' AND ')}` : '';
  }
}
