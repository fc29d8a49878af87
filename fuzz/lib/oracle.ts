/**
 * What every answer must be, whatever was asked (SPEC §1, §4): the envelope with a status that
 * matches its code, the callback's plain `fail`, no 5xx for the client's own fault, nothing of
 * the server's insides in a message, and an answer within the request deadline.
 */
import { ERROR_STATUS, INTERNAL_SYSTEM_MESSAGE, isErrorCode } from '../../src/platform/errors';

export interface Observed {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: Buffer;
  ms: number;
}

export interface Asked {
  method: string;
  /** Path and query as sent; `(raw)` for bytes written on a socket. */
  target: string;
}

/** Texts that betray the server's insides: stack frames, SQL, driver and module names. */
const LEAKS: [RegExp, string][] = [
  [/\n\s+at |\bat [\w.<>]+ \(.*:\d+:\d+\)/, 'a stack trace'],
  [/\b(SELECT|INSERT|UPDATE|DELETE)\b[\s\S]*\b(FROM|INTO|SET|WHERE)\b/, 'SQL text'],
  [
    /sequelize|node_modules|ECONNREFUSED|ECONNRESET|violates|relation "|syntax error at/i,
    "the server's insides",
  ],
];

const CALLBACK_PATH = /^\/api\/v1\/notify\/payment(\/|$|\?)/;

/** The 5xx answers SPEC gives for situations a client can cause on purpose. */
function allowedServerError(asked: Asked, code: string, message: string, status: number): boolean {
  const path = asked.target.split('?')[0]!;
  if (status === 502 && code.startsWith('channel_')) {
    return /^\/api\/v1\/pay\/(unified-order|close|refund)$/.test(path);
  }
  if (status === 503) return path === '/readyz' && code === 'internal_system';
  if (status !== 500) return false;
  // SPEC §5.1: any failure of the creation, a duplicate merchant_id included.
  if (code === 'database_error') return path === '/api/v1/merchant' && message !== '';
  // SPEC §5.5, §5.6: a channel without onboarding, or one that refused the application.
  if (code === 'internal_system' && message !== INTERNAL_SYSTEM_MESSAGE) {
    return (
      /^\/api\/v1\/merchant\/(upload-file|[^/]+\/apply)$/.test(path) &&
      /does not support onboarding|did not accept the application/.test(message)
    );
  }
  return false;
}

/** The violations of one answer; empty when it is as the contract says. */
export function violations(asked: Asked, seen: Observed, deadlineMs: number): string[] {
  const out: string[] = [];
  if (seen.ms > deadlineMs)
    out.push(`answered after ${Math.round(seen.ms)} ms, past the ${deadlineMs} ms deadline`);
  const type = seen.headers['content-type'] ?? '';
  const path = asked.target.split('?')[0]!;

  if (
    asked.method === 'POST' &&
    CALLBACK_PATH.test(path) &&
    seen.status === 200 &&
    type.startsWith('text/plain')
  ) {
    // A callback's answer: nothing the fuzzer sends is signed by the channel.
    if (seen.body.toString() !== 'fail')
      out.push(`callback answered ${JSON.stringify(seen.body.toString().slice(0, 60))}, not fail`);
    return out;
  }
  if (
    asked.method === 'POST' &&
    CALLBACK_PATH.test(path) &&
    /^\/api\/v1\/notify\/payment(\/[^/]*)?\/?$/.test(path)
  ) {
    out.push(`callback answered ${seen.status} ${type}, not 200 text/plain fail`);
    return out;
  }
  if (asked.method === 'HEAD') {
    if (seen.status >= 500 && seen.status !== 503) out.push(`HEAD answered ${seen.status}`);
    return out;
  }

  if (!type.startsWith('application/json')) {
    out.push(`answered ${seen.status} with ${type || 'no content type'}, not the JSON envelope`);
    return out;
  }
  let body: unknown;
  try {
    body = JSON.parse(seen.body.toString('utf8'));
  } catch {
    out.push(`answered ${seen.status} with a body that is not JSON`);
    return out;
  }
  const env = body as Record<string, unknown>;
  const keys = Object.keys(env ?? {})
    .sort()
    .join(',');
  if (keys !== 'code,data,message,request_id') {
    out.push(`envelope has keys ${keys}`);
    return out;
  }
  const {
    code,
    message,
    data,
    request_id: requestId,
  } = env as {
    code: unknown;
    message: unknown;
    data: unknown;
    request_id: unknown;
  };
  if (typeof requestId !== 'string' || requestId !== seen.headers['x-request-id']) {
    out.push('request_id is not the X-Request-Id header');
  }
  if (typeof message !== 'string') out.push('message is not a text');
  if (code === 'success') {
    if (seen.status !== 200) out.push(`success with status ${seen.status}`);
    return out;
  }
  if (!isErrorCode(code)) {
    out.push(`unknown code ${String(code)}`);
    return out;
  }
  if (data !== null) out.push(`failure ${code} carries data`);
  const msg = String(message);
  for (const [pattern, what] of LEAKS)
    if (pattern.test(msg)) out.push(`message shows ${what}: ${msg.slice(0, 120)}`);
  const expected = ERROR_STATUS[code];
  const overridden =
    (code === 'order_not_found' && seen.status === 404 && path.startsWith('/api/v1/merchant')) ||
    (code === 'internal_system' && seen.status === 503 && path === '/readyz') ||
    // What Node's parser refused keeps the parser's status (431 for an oversized request line or headers).
    (code === 'invalid_param' && seen.status === 431) ||
    (code === 'invalid_param' && asked.target === '(raw)' && [400, 408].includes(seen.status));
  if (seen.status !== expected && !overridden)
    out.push(`code ${code} with status ${seen.status}, not ${expected}`);
  if (seen.status >= 500 && !allowedServerError(asked, code, msg, seen.status)) {
    out.push(`${seen.status} ${code} (${msg.slice(0, 120)}) where the client is at fault`);
  }
  return out;
}
