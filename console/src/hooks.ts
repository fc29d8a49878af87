import { App, type FormInstance } from 'antd';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, errorMessage, type Query } from './api/client';
import type { Page } from './api/types';

/** The document's title: "<page> · durapay console" (null: left to a page inside). */
export function usePageTitle(title: string | null): void {
  useEffect(() => {
    if (title !== null) document.title = `${title} · durapay console`;
  }, [title]);
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** GETs `path` (with `query`) now and whenever either changes or `reload` is called. */
export function useApiData<T>(path: string | null, query?: Query): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(path !== null);
  const [round, setRound] = useState(0);
  const queryKey = JSON.stringify(query ?? {});

  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setLoading(true);
    setError(undefined);
    api
      .get<T>(path, JSON.parse(queryKey) as Query, controller.signal)
      .then((answer) => {
        setData(answer);
        setLoading(false);
      })
      .catch((err: unknown) => {
        if (err instanceof DOMException && err.name === 'AbortError') return;
        setError(err);
        setLoading(false);
      });
    return () => controller.abort();
  }, [path, queryKey, round]);

  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data, error, loading, reload };
}

export const PAGE_SIZES = [20, 50, 100] as const;

export interface ListPage<T> extends Loaded<Page<T>> {
  /** The filters as the URL holds them (`limit` and `after` left out). */
  filters: Record<string, string>;
  setFilters: (filters: Record<string, string | undefined>) => void;
  limit: number;
  setLimit: (limit: number) => void;
  /** Whether this is a later page than the first. */
  paged: boolean;
  nextPage: () => void;
  firstPage: () => void;
}

/**
 * A list whose filters and page live in the URL's query string, so that a link, a reload or the
 * back button shows the same page: the filters are the API's own, `after` its cursor.
 */
export function useListPage<T>(path: string, fixed: Record<string, string> = {}): ListPage<T> {
  const [params, setParams] = useSearchParams();
  const filters = useMemo(() => {
    const out: Record<string, string> = {};
    params.forEach((value, key) => {
      if (key !== 'limit' && key !== 'after' && value !== '') out[key] = value;
    });
    return out;
  }, [params]);
  const limitParam = Number(params.get('limit'));
  const limit = Number.isInteger(limitParam) && limitParam >= 1 && limitParam <= 100 ? limitParam : 20;
  const after = params.get('after') ?? undefined;
  const fixedKey = JSON.stringify(fixed);
  const query = useMemo<Query>(
    () => ({ ...filters, ...(JSON.parse(fixedKey) as Record<string, string>), limit, after }),
    [filters, fixedKey, limit, after],
  );
  const loaded = useApiData<Page<T>>(path, query);

  const write = useCallback(
    (next: Record<string, string | undefined>) => {
      const p = new URLSearchParams();
      for (const [k, v] of Object.entries(next)) if (v !== undefined && v !== '') p.set(k, v);
      setParams(p);
    },
    [setParams],
  );
  const limitText = params.get('limit') ?? undefined;

  return {
    ...loaded,
    filters,
    setFilters: (f) => write({ ...f, limit: limitText }),
    limit,
    setLimit: (l) => write({ ...filters, limit: String(l) }),
    paged: after !== undefined,
    nextPage: () => {
      const next = loaded.data?.next;
      if (next) write({ ...filters, limit: limitText, after: next });
    },
    firstPage: () => write({ ...filters, limit: limitText }),
  };
}

/** A form's values, or null while a field is invalid (the form itself says which and why). */
export async function validValues<T>(form: FormInstance<T>): Promise<T | null> {
  try {
    return await form.validateFields();
  } catch {
    return null;
  }
}

/**
 * A dialog's form sent to the API: validated first (the form says what is wrong), sent once at
 * a time (`busy` meanwhile), and its outcome said. `send` answers the success message (null:
 * nothing was sent); a refusal shows the server's own message and leaves the dialog open.
 */
export function useFormSubmit<V>(
  form: FormInstance<V>,
  send: (values: V) => Promise<string | null>,
  onDone: () => void,
): { busy: boolean; submit: () => void } {
  const [busy, setBusy] = useState(false);
  const { message } = App.useApp();
  const run = async () => {
    const values = await validValues(form);
    if (!values) return;
    setBusy(true);
    try {
      const said = await send(values);
      if (said === null) return;
      message.success(said);
      onDone();
    } catch (err) {
      message.error(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, submit: () => void run() };
}
