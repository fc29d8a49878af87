/**
 * The console's JSON API (docs/console.md): every answer is the API's envelope, every change
 * carries the session's CSRF token, and a 401 anywhere ends the session in the app too.
 */

export const API_BASE = '/console/api';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

interface Envelope<T> {
  code: string;
  message: string;
  data: T;
  request_id?: string;
}

let csrfToken: string | null = null;
let onUnauthorized: (() => void) | null = null;

/** The token every change must carry; set from the session answer. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** What to do when the server says the session is gone (the app returns to the login page). */
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  onUnauthorized = handler;
}

export type Query = Record<string, string | number | boolean | null | undefined>;

/** `/path?a=1&b=2`, leaving out empty values. */
export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

interface RequestOptions {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: unknown;
  query?: Query;
  /** The login itself: its 401 is an answer to show, not a lost session. */
  isLogin?: boolean;
  signal?: AbortSignal;
}

export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (method !== 'GET') {
    headers['Content-Type'] = 'application/json';
    if (csrfToken) headers['X-CSRF-Token'] = csrfToken;
  }
  let response: Response;
  try {
    response = await fetch(API_BASE + withQuery(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: method === 'GET' ? undefined : JSON.stringify(options.body ?? {}),
      signal: options.signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network_error', 'The console cannot reach the server. Check your connection.');
  }
  let envelope: Envelope<T> | null = null;
  try {
    envelope = (await response.json()) as Envelope<T>;
  } catch {
    envelope = null;
  }
  if (response.ok && envelope && envelope.code === 'success') return envelope.data;
  const code = envelope?.code ?? (response.status === 401 ? 'unauthorized' : 'internal_system');
  const message = envelope?.message ?? `The server answered ${response.status} ${response.statusText}`.trim();
  if (response.status === 401 && !options.isLogin) onUnauthorized?.();
  throw new ApiError(response.status, code, message, envelope?.request_id);
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) => request<T>(path, { query, signal }),
  post: <T>(path: string, body: unknown = {}) => request<T>(path, { method: 'POST', body }),
  delete: <T>(path: string) => request<T>(path, { method: 'DELETE' }),
};

/** The message to show for any error: the server's own where it gave one. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** A path segment, encoded. */
export const seg = (value: string) => encodeURIComponent(value);
