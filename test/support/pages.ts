/**
 * One check for every paged list, console or API: walk it page by page, writing new rows between
 * pages, and hold it to its promise — the rows in the documented order, every row that was there
 * before the walk listed exactly once, no page longer than asked, and the last page saying so.
 *
 * A list added later gets the check by describing how to read one of its pages (`keysetPages` for
 * the console's `{list, next}` lists, `offsetPages` for the API's `{list, limit, offset}` ones).
 */

/** One page as the check reads it: its rows, and where the next starts (null: this was the last). */
export interface WalkPage<T> {
  rows: T[];
  next: string | null;
}

export interface PagedList<T> {
  /**
   * `keyset`: the next page starts after the last row read, so rows written during the walk move
   * nothing (exactly once, always). `offset` (SPEC §5.3's `limit`/`offset`): the next page starts
   * `limit` rows further, so a row written ahead of the walk pushes the rest one row on and the
   * next page starts with a row already seen; nothing is ever skipped.
   */
  paging: 'keyset' | 'offset';
  /** The page after `cursor` (null: the first), at most `limit` rows. */
  page(cursor: string | null, limit: number): Promise<WalkPage<T>>;
  /** The row's identity (trade_no, id, …). */
  key(row: T): string;
}

export interface WalkOptions {
  /** Rows per page; the expected rows must fill more than two pages. */
  limit: number;
  /** Writes rows of the list between pages (after page n, n from 1); returns how many it wrote. */
  during?: (pageNo: number) => Promise<number>;
}

export interface Walk<T> {
  pages: T[][];
  /** Every key listed, in the order listed. */
  keys: string[];
  /** How many rows `during` wrote. */
  written: number;
}

const MAX_PAGES = 1_000;

/**
 * Walks `list` and checks it against `expected`: the keys of the rows that were there before the
 * walk (and that the list, with its filters, shows), in the order the list promises. Rows that are
 * not in `expected` (another app's, or written during the walk) may be listed too, each once.
 */
export async function expectEveryRowOnce<T>(
  list: PagedList<T>,
  expected: readonly string[],
  options: WalkOptions,
): Promise<Walk<T>> {
  const { limit } = options;
  if (expected.length <= 2 * limit) {
    throw new Error(`expected ${expected.length} rows fill no third page of ${limit}: make more rows`);
  }
  const pages: T[][] = [];
  let cursor: string | null = null;
  let written = 0;
  for (;;) {
    const page: WalkPage<T> = await list.page(cursor, limit);
    if (page.rows.length > limit) {
      throw new Error(
        `page ${pages.length + 1} holds ${page.rows.length} rows, more than the limit ${limit}`,
      );
    }
    pages.push(page.rows);
    if (page.next === null) break;
    if (page.rows.length === 0) throw new Error(`page ${pages.length} is empty yet names a next page`);
    if (pages.length >= MAX_PAGES) throw new Error(`the list did not end within ${MAX_PAGES} pages`);
    cursor = page.next;
    if (options.during) written += await options.during(pages.length);
  }

  const keys = pages.flat().map((r) => list.key(r));
  const wanted = new Set(expected);
  const seen = new Map<string, number>();
  for (const k of keys) seen.set(k, (seen.get(k) ?? 0) + 1);
  const repeated = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
  const missing = expected.filter((k) => !seen.has(k));
  if (missing.length > 0) {
    throw new Error(`rows skipped by the walk: ${missing.join(', ')} (listed: ${keys.join(', ')})`);
  }

  if (list.paging === 'keyset') {
    if (repeated.length > 0) {
      throw new Error(`rows listed twice: ${repeated.join(', ')} (listed: ${keys.join(', ')})`);
    }
    const inOrder = keys.filter((k) => wanted.has(k));
    if (inOrder.join('\n') !== expected.join('\n')) {
      throw new Error(
        `rows out of order:\n  listed   ${inOrder.join(', ')}\n  expected ${expected.join(', ')}`,
      );
    }
  } else {
    // Offset pages: a row is repeated only where a row written during the walk pushed it over a
    // page boundary, so at most once for each row written, and only across a boundary.
    const repeats = keys.length - seen.size;
    if (repeats > written) {
      throw new Error(
        `${repeats} rows listed again with ${written} written during the walk: ${repeated.join(', ')}`,
      );
    }
    const firsts = keys.filter((k, i) => keys.indexOf(k) === i && wanted.has(k));
    if (firsts.join('\n') !== expected.join('\n')) {
      throw new Error(
        `rows out of order:\n  listed   ${firsts.join(', ')}\n  expected ${expected.join(', ')}`,
      );
    }
    // And only as the first rows of a page: the rows the page before ended with, pushed on.
    const before = new Set<string>();
    pages.forEach((page, n) => {
      const ks = page.map((r) => list.key(r));
      const firstNew = ks.findIndex((k) => !before.has(k));
      if (firstNew >= 0 && ks.slice(firstNew).some((k) => before.has(k))) {
        throw new Error(`page ${n + 1} lists a row again after a new one: ${ks.join(', ')}`);
      }
      ks.forEach((k) => before.add(k));
    });
  }
  return { pages, keys, written };
}

interface Answered<D> {
  status: number;
  code?: string;
  message?: string;
  data?: D | null;
}

function mustSucceed<D>(path: string, a: Answered<D>): D {
  if (a.status !== 200 || a.data === undefined || a.data === null) {
    throw new Error(`GET ${path} answered ${a.status} ${a.code}: ${a.message}`);
  }
  return a.data;
}

const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

/** A console list (`{list, next}`, `limit` and `after`) read by `get`. */
export function keysetPages<T = Record<string, unknown>>(
  get: (path: string) => Promise<Answered<{ list: T[]; next: string | null }>>,
  path: string,
  key: (row: T) => string,
): PagedList<T> {
  return {
    paging: 'keyset',
    key,
    async page(cursor, limit) {
      const url = withQuery(path, `limit=${limit}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
      const data = mustSucceed(url, await get(url));
      return { rows: data.list, next: data.next };
    },
  };
}

/**
 * An API list (`{list, limit, offset}`, SPEC §5.3) read by `get`: a page shorter than the limit
 * is the last, and the answer must echo the limit and offset asked.
 */
export function offsetPages<T = Record<string, unknown>>(
  get: (path: string) => Promise<Answered<{ list: T[]; limit: number; offset: number }>>,
  path: string,
  key: (row: T) => string,
): PagedList<T> {
  return {
    paging: 'offset',
    key,
    async page(cursor, limit) {
      const offset = cursor === null ? 0 : Number(cursor);
      const url = withQuery(path, `limit=${limit}&offset=${offset}`);
      const data = mustSucceed(url, await get(url));
      if (data.limit !== limit || data.offset !== offset) {
        throw new Error(`GET ${url} echoed limit ${data.limit} and offset ${data.offset}`);
      }
      return { rows: data.list, next: data.list.length < limit ? null : String(offset + limit) };
    },
  };
}
