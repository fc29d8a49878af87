/**
 * The operator console from a test: an operator made in the stack's database, signed in over
 * HTTP like the console's page (its cookie and CSRF token kept), and requests sent as it sends them.
 */
import { OperatorService, type OperatorRole } from '../../src/modules/operators';
import { DEFAULT_CONSOLE_SETTINGS, type CoreConfig } from '../../src/platform/config';
import type { TestStack } from './harness';
import { uniqueName } from './harness';
import type { Envelope } from './http';

export interface ConsoleAnswer<T = Record<string, unknown>> extends Envelope<T> {
  status: number;
  headers: Headers;
}

export interface ConsoleClient {
  operatorId: string;
  username: string;
  password: string;
  role: OperatorRole;
  /** The session cookie's value, as the browser would send it (`durapay_console=…`). */
  cookie: string;
  csrfToken: string;
  get<T = Record<string, unknown>>(path: string): Promise<ConsoleAnswer<T>>;
  post<T = Record<string, unknown>>(
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ConsoleAnswer<T>>;
  delete<T = Record<string, unknown>>(path: string): Promise<ConsoleAnswer<T>>;
}

/** The service the console's routes use, on the stack's database (to make operators in tests). */
export function operatorsOf(
  stack: TestStack,
  settings: CoreConfig['console'] = DEFAULT_CONSOLE_SETTINGS,
): OperatorService {
  return new OperatorService({
    db: stack.database.db,
    payloadKeys: stack.payloadKeys.keyring,
    consoleSettings: settings,
  });
}

/** Any request to the console's API, with the headers given and nothing else. */
export async function consoleRequest<T = Record<string, unknown>>(
  stack: TestStack,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<ConsoleAnswer<T>> {
  const res = await fetch(`${stack.baseUrl}/console/api${path}`, {
    method,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let parsed: Envelope<T>;
  try {
    parsed = JSON.parse(text) as Envelope<T>;
  } catch {
    throw new Error(
      `${method} /console/api${path} answered ${res.status} with no JSON: ${text.slice(0, 200)}`,
    );
  }
  return { ...parsed, status: res.status, headers: res.headers };
}

/** The `name=value` of a Set-Cookie answer's session cookie. */
export function sessionCookieOf(headers: Headers): string | undefined {
  const line = headers.getSetCookie().find((c) => c.startsWith('durapay_console='));
  return line?.split(';')[0];
}

/** Signs in an operator with a password. */
export async function signInAs(
  stack: TestStack,
  username: string,
  password: string,
  totpCode?: string,
): Promise<ConsoleAnswer<{ operator: { operator_id: string; role: OperatorRole }; csrf_token: string }>> {
  return consoleRequest(stack, 'POST', '/session', {
    body: { username, password, ...(totpCode !== undefined ? { totp_code: totpCode } : {}) },
  });
}

/** A client signed in with an existing operator's password. */
export async function clientFor(
  stack: TestStack,
  who: { operatorId: string; username: string; password: string; role: OperatorRole },
): Promise<ConsoleClient> {
  const answer = await signInAs(stack, who.username, who.password);
  if (answer.status !== 200)
    throw new Error(`sign-in of ${who.username} answered ${answer.status} ${answer.code}: ${answer.message}`);
  const cookie = sessionCookieOf(answer.headers)!;
  const csrfToken = answer.data!.csrf_token;
  const send = <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    consoleRequest<T>(stack, method, path, {
      body,
      headers: { cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': csrfToken }), ...headers },
    });
  return {
    ...who,
    cookie,
    csrfToken,
    get: (path) => send('GET', path),
    post: (path, body = {}, headers) => send('POST', path, body, headers),
    delete: (path) => send('DELETE', path),
  };
}

/** A new operator of `role` (default `operator`), signed in. */
export async function signIn(stack: TestStack, role: OperatorRole = 'operator'): Promise<ConsoleClient> {
  const username = uniqueName(`op-${role}`).slice(0, 60);
  const password = `pw-${uniqueName('secret')}-long-enough`;
  const made = await operatorsOf(stack).create(
    { operatorId: null, username: 'test' },
    { username, role, password },
  );
  return clientFor(stack, { operatorId: made.operator.operatorId, username, password, role });
}
