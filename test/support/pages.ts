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
  /**
   * Writes rows of the list between pages (after page n, n from 1); returns the keys of the rows
   * it wrote that the list (with its filters) shows.
   */
  during?: (pageNo: number) => Promise<string[]>;
}

export interface Walk<T> {
  pages: T[][];
  /** Every key listed, in the order listed. */
  keys: string[];
  /** The keys of the rows `during` wrote. */
  written: string[];
  /** How many rows were listed a second time (offset pages only). */
  repeats: number;
}

const MAX_PAGES = 1_000;

/**
 * Walks `list` and checks it against `expected`: the keys of every row that was there before the
 * walk and that the list, with its filters, shows, in the order the list promises. Nothing else
 * may be listed but rows `during` wrote.
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
  const written: string[] = [];
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
    if (options.during) written.push(...(await options.during(pages.length)));
  }

  const keys = pages.flat().map((r) => list.key(r));
  const wanted = new Set(expected);
  const seen = new Map<string, number>();
  for (const k of keys) seen.set(k, (seen.get(k) ?? 0) + 1);
  const repeated = [...seen].filter(([, n]) => n > 1).map(([k]) => k);
  const missing = expected.filter((k) => !seen.has(k));
  const foreign = [...seen.keys()].filter((k) => !wanted.has(k) && !written.includes(k));
  if (foreign.length > 0) {
    throw new Error(`rows listed that the list does not hold: ${foreign.join(', ')}`);
  }
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
    // Offset pages: a row written during the walk lands either ahead of the rows already read,
    // pushing the last of them onto the next page (read again, the new row never seen), or among
    // the rows not read yet (listed once, nothing read again). So each row written is exactly one
    // of the two.
    const repeats = keys.length - seen.size;
    const listedWritten = written.filter((k) => seen.has(k)).length;
    if (repeats + listedWritten !== written.length) {
      throw new Error(
        `${written.length} rows written during the walk, yet ${repeats} rows read again and ${listedWritten} of them listed: ${repeated.join(', ')}`,
      );
    }
    const firsts = keys.filter((k, i) => keys.indexOf(k) === i && wanted.has(k));
    if (firsts.join('\n') !== expected.join('\n')) {
      throw new Error(
        `rows out of order:\n  listed   ${firsts.join(', ')}\n  expected ${expected.join(', ')}`,
      );
    }
    // And only as the first rows of a page: the last rows of the page before, pushed on.
    const before = new Set<string>();
    pages.forEach((page, n) => {
      const ks = page.map((r) => list.key(r));
      let again = 0;
      while (again < ks.length && before.has(ks[again]!)) again++;
      const tail = n === 0 || again === 0 ? [] : pages[n - 1]!.slice(-again).map((r) => list.key(r));
      if (ks.slice(again).some((k) => before.has(k)) || ks.slice(0, again).join('\n') !== tail.join('\n')) {
        throw new Error(`page ${n + 1} lists again rows that did not end the page before: ${ks.join(', ')}`);
      }
      ks.forEach((k) => before.add(k));
    });
  }
  return { pages, keys, written, repeats: keys.length - seen.size };
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
