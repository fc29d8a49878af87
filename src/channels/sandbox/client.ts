/**
 * The sandbox simulator's transport, shared by the adapter's ports: every request signed with
 * Sandbox-Signature over a pooled connection. HTTP 4xx is a refusal (with the simulator's own
 * text), 5xx or a failed connection is "unreachable", no answer within timeoutMs is "timeout".
 */
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { ChannelError } from '../errors';
import type { PaymentState } from '../ports';
import { SANDBOX_SIGNATURE_HEADER, signSandboxPayload } from './signature';
import { parseErrorBody, parseJson, parsePaymentState } from './transformers';

export interface SandboxChannelOptions {
  /** Where the simulator's router is mounted, e.g. http://127.0.0.1:8080/sandbox. */
  baseUrl: string;
  secret: string;
  /** Deadline of one call, connection included. */
  timeoutMs: number;
  /** A lower per-order limit than 10^12, to rehearse a real channel's limit (SANDBOX_MAX_AMOUNT). */
  maxAmount?: number;
}

interface Answer {
  status: number;
  text: string;
}

const TIMEOUT_CODES = new Set<unknown>([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

// Duck-typed: socket errors come from node's realm, which under jest is not this module's.
function errorCode(err: unknown): unknown {
  return typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
}

function describe(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const { code, message, errors } = err as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  if (Array.isArray(errors) && errors.length > 0) return errors.map(describe).join('; ');
  return typeof message === 'string' && message !== '' ? message : 'request failed';
}

/** How long a file the simulator makes on request (a day's statement) may take to start. */
const SANDBOX_FILE_FIRST_BYTE_MS = 5 * 60_000;

export class SandboxClient {
  readonly baseUrl: string;
  private readonly agent: Agent;

  constructor(readonly options: SandboxChannelOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`sandbox base URL must be http or https, not ${url.protocol}`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.agent = new Agent({
      connect: { timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /** Ends the pooled connections (for tests and shutdown); the channel is unusable afterwards. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  paymentState(what: string, answer: Answer): PaymentState {
    if (this.isUnknown(answer, 'order_not_found')) return { status: 'not_found' };
    return parsePaymentState(this.ok(what, answer));
  }

  /** A 404 about the object itself, not about a wrong base URL (which answers without our code). */
  isUnknown(answer: Answer, code: string): boolean {
    return answer.status === 404 && parseErrorBody(answer.status, answer.text).code === code;
  }

  ok(what: string, answer: Answer): unknown {
    if (answer.status >= 200 && answer.status < 300) return parseJson(`${what} answer`, answer.text);
    const { error } = parseErrorBody(answer.status, answer.text);
    if (answer.status >= 400 && answer.status < 500) throw new ChannelError('refused', error);
    throw new ChannelError('unreachable', `sandbox could not ${what}: ${error}`);
  }

  /**
   * A signed GET whose 200 body is a file, streamed to `path`: the bytes written and the answer's
   * headers; any other status answers its (short) text instead, for `ok` or `isUnknown`.
   */
  async download(
    path: string,
    dest: string,
  ): Promise<{ status: 200; size: number; headers: Record<string, string> } | Answer> {
    const headers = { [SANDBOX_SIGNATURE_HEADER]: signSandboxPayload(this.options.secret, '') };
    const { timeoutMs } = this.options;
    // The simulator makes a statement when it is asked for it (a real channel's is made
    // beforehand), so its first byte may take a while for a long day; the bytes after it may not.
    const firstByteMs = Math.max(timeoutMs, SANDBOX_FILE_FIRST_BYTE_MS);
    try {
      const res = await request(`${this.baseUrl}${path}`, {
        method: 'GET',
        headers,
        dispatcher: this.agent,
        headersTimeout: firstByteMs,
        bodyTimeout: timeoutMs,
      });
      if (res.statusCode !== 200) return { status: res.statusCode, text: await res.body.text() };
      await pipeline(res.body, createWriteStream(dest));
      const flat: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (typeof value === 'string') flat[name.toLowerCase()] = value;
      }
      return { status: 200, size: (await stat(dest)).size, headers: flat };
    } catch (err) {
      // The local file could not be written: not the simulator's doing.
      if (typeof (err as { path?: unknown }).path === 'string') throw err;
      if (TIMEOUT_CODES.has(errorCode(err))) {
        throw new ChannelError(
          'timeout',
          `sandbox gave no answer to GET ${path} in time (${firstByteMs} ms for the first byte, ${timeoutMs} ms between bytes)`,
        );
      }
      throw new ChannelError('unreachable', `sandbox unreachable at ${this.baseUrl}: ${describe(err)}`);
    }
  }

  async call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    timeoutMs = this.options.timeoutMs,
  ): Promise<Answer> {
    const payload = body === undefined ? '' : JSON.stringify(body);
    const headers: Record<string, string> = {
      accept: 'application/json',
      [SANDBOX_SIGNATURE_HEADER]: signSandboxPayload(this.options.secret, payload),
    };
    if (body !== undefined) headers['content-type'] = 'application/json';

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const res = await request(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : payload,
        dispatcher: this.agent,
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      return { status: res.statusCode, text: await res.body.text() };
    } catch (err) {
      if (timedOut || TIMEOUT_CODES.has(errorCode(err))) {
        throw new ChannelError(
          'timeout',
          `sandbox gave no answer to ${method} ${path} within ${timeoutMs} ms`,
        );
      }
      throw new ChannelError('unreachable', `sandbox unreachable at ${this.baseUrl}: ${describe(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }
}
