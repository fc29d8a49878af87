import { AppError } from '../errors';
import { DEFAULT_LIMIT, type KeysetPage, type KeysetPosition } from '../pagination';
/** A list's paging as validated: `limit` 1–100 and `after`, the `next` of the page before (texts). */
export interface Paging {
  limit?: string;
  after?: string;
}

// The keyset lists' cursors (the console's, docs/console.md, and the API's complaints): a page's `next` is where the list goes on, the
// position of its last row, opaque to the console (base64url of JSON) so that its form can change.

/** A row's creation time as positions keep it: UTC, to the microsecond (platform/pagination.ts). */
const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * Whether a position's time is one Postgres takes: the pattern, and a real calendar time (Date.parse
 * rolls 02-31 into March and takes year 0, which Postgres refuses), so a crafted cursor is a 400, not a 500.
 */
function isInstant(at: string): boolean {
  if (!AT.test(at) || at < '1970') return false;
  const ms = Date.parse(at);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === at.slice(0, 19);
}

function badCursor(): AppError {
  return new AppError(
    'invalid_param',
    '"after" is not a cursor of this list: pass the "next" of the page before',
  );
}

export function encodeCursor(position: KeysetPosition | null): string | null {
  if (!position) return null;
  const parts: unknown[] = [position.at, position.key];
  if (position.rank !== undefined) parts.push(position.rank);
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

/**
 * The position a cursor names; `400 invalid_param` naming `after` for anything no list gave:
 * not base64url JSON, a time that is not one, a key that does not look like the list's keys.
 */
export function decodeCursor(cursor: string, key: RegExp = /^.{1,200}$/su): KeysetPosition {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw badCursor();
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(parts) || parts.length < 2 || parts.length > 3) throw badCursor();
  const [at, k, rank] = parts as unknown[];
  if (typeof at !== 'string' || !isInstant(at)) throw badCursor();
  // U+0000 is no key of any list, and Postgres takes no text holding it.
  if (typeof k !== 'string' || k.includes('\u0000') || !key.test(k)) throw badCursor();
  if (parts.length === 3 && rank !== 0 && rank !== 1) throw badCursor();
  return { at, key: k, ...(parts.length === 3 ? { rank: rank as number } : {}) };
}

/** The page a list's validated `limit` and `after` ask for. */
export function pageOf(query: Paging, key?: RegExp): KeysetPage {
  return {
    limit: query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit),
    ...(query.after === undefined ? {} : { after: decodeCursor(query.after, key) }),
  };
}

/** A list's answer: `{list, next}`. */
export function listOf<T>(found: { rows: T[]; next: KeysetPosition | null }, view: (row: T) => unknown) {
  return { list: found.rows.map(view), next: encodeCursor(found.next) };
}
