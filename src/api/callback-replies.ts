/**
 * What the routes channels post to share (payment callbacks, complaint notifications): the
 * limit on what fails verification, the headers as channels sign them, the channel's own replies,
 * and the body as the callback log keeps it.
 */
import type { Request, Response } from 'express';
import type { CallbackReply, CallbacksPort } from '../channels/ports';
import { requestHasBody } from '../platform/http/body';

/** The shape of a channel code; a path value of any other shape names no channel. */
export const CHANNEL_CODE = /^[a-z0-9_-]{1,32}$/;

/** SPEC §9: callbacks that fail verification, per second per source address. */
export const DEFAULT_CALLBACK_RATE_LIMIT = 50;

export interface CallbackRateLimit {
  /** Callbacks failing verification per second per source address (CALLBACK_RATE_LIMIT). */
  perSecond: number;
  /** The limit's clock in milliseconds (tests hold it still). */
  now?: () => number;
}

/** The first value of each header, as channels sign them. */
export function firstValues(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values?.[0] !== undefined) out[name] = values[0];
  }
  return out;
}

/** The answer when no channel's own is known (not a channel, a path that does not decode). */
const FAIL: CallbackReply = { status: 200, contentType: 'text/plain', body: 'fail' };

export function reply(res: Response, answer: CallbackReply): void {
  res.status(answer.status).type(answer.contentType).send(answer.body);
}

/**
 * An answer given without reading the body, or with the rest of it unread: the connection
 * closes after it, so that Node does not read the rest to keep the connection for another
 * request (a refused body is never read to its end).
 */
export function replyUnread(req: Request, res: Response, answer: CallbackReply): void {
  if (requestHasBody(req) && !req.complete) res.set('Connection', 'close');
  reply(res, answer);
}

/**
 * The channel's answer for a callback that must be sent again (or, `unknown`, that names nothing
 * durapay has, for a channel that answers that apart), or the generic one.
 */
export function failReply(res: Response, reason: string, unknown = false): CallbackReply {
  const callbacks = res.locals.callbacks as CallbacksPort | undefined;
  return callbacks ? callbacks.reply({ ok: false, reason, ...(unknown ? { unknown } : {}) }) : FAIL;
}

/** The body as text for the callback log: lossless for any real callback (UTF-8 without U+0000). */
export function loggableBody(raw: Buffer): string {
  return raw.toString('utf8').replaceAll('\u0000', '\ufffd');
}
