import { createHmac } from 'node:crypto';
import type { NextFunction, Request, Response, Router } from 'express';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { sameSecret } from '../platform/crypto/same-secret';
import { AppError } from '../platform/errors';
import { sendError } from '../platform/http/envelope';
import { escapeHtml } from '../platform/http/html';
import { readRawBody } from '../platform/http/raw-body';
import { apiRouter } from '../platform/http/router';
import type { Logger } from '../platform/logger';
import { Lockout } from './codec-lockout';

/**
 * The codec server (SPEC §7): the Temporal UI (and `temporal workflow show --codec-endpoint`)
 * posts the payloads it shows to `/codec/decode` and reads them back decrypted; `/codec/encode`
 * seals what an operator sends. Every call needs the operator token, as `Authorization: Bearer
 * <token>` or as the session cookie `/codec/login` sets, which the UI sends when its Data Encoder
 * setting "Include cross-origin credentials" is on. The UI's origins are allowed by CORS.
 */
export interface CodecServerOptions {
  codec: PayloadCodec;
  /** The operator token; without one every call is refused (the codec server is off). */
  token?: string;
  /** Origins allowed to call from a browser, e.g. `http://localhost:8233`. */
  corsOrigins: readonly string[];
  /** Mark the session cookie Secure (the API is reached over https). */
  secureCookie: boolean;
  logger: Logger;
}

/** A history's payloads in one call; the UI decodes a page of events at once. */
const MAX_CODEC_BODY_BYTES = 8 * 1024 * 1024;
const SESSION_COOKIE = 'durapay_codec';
const SESSION_HOURS = 12;
/** Payloads in one codec call, and bytes they may open to in all (a history's page is far less). */
const MAX_PAYLOADS_PER_CALL = 10_000;
const MAX_DECODED_BYTES = 64 * 1024 * 1024;

interface WirePayload {
  metadata?: Record<string, string>;
  data?: string;
}

function fromWire(p: WirePayload, i: number): Payload {
  if (typeof p !== 'object' || p === null)
    throw new AppError('invalid_param', `"payloads[${i}]" must be an object`);
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) {
    if (typeof v !== 'string')
      throw new AppError('invalid_param', `"payloads[${i}].metadata.${k}" must be base64`);
    metadata[k] = Buffer.from(v, 'base64');
  }
  if (p.data !== undefined && typeof p.data !== 'string') {
    throw new AppError('invalid_param', `"payloads[${i}].data" must be base64`);
  }
  return { metadata, data: Buffer.from(p.data ?? '', 'base64') };
}

function toWire(p: Payload): WirePayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]),
    ),
    data: Buffer.from(p.data ?? []).toString('base64'),
  };
}

/**
 * A session cookie's value: when it ends and an HMAC of that under the token, so the server
 * itself ends it after SESSION_HOURS, and a new token ends every session at once.
 */
function sessionValue(token: string, expiresAt: number): string {
  const mac = createHmac('sha256', token).update(`durapay codec session v1:${expiresAt}`).digest('base64url');
  return `${expiresAt}.${mac}`;
}

function validSession(token: string, value: string, now: number): boolean {
  const dot = value.indexOf('.');
  const expiresAt = Number(value.slice(0, dot));
  if (dot <= 0 || !Number.isSafeInteger(expiresAt) || expiresAt <= now) return false;
  if (expiresAt > now + SESSION_HOURS * 3600_000) return false;
  return sameSecret(value, sessionValue(token, expiresAt));
}

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><link rel="icon" href="data:,">
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}button{font:inherit;padding:.4rem 1rem;margin-top:.6rem}
code{background:#f3f3f3;padding:0 .2rem}.error{color:#b00020}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function codecRoutes(opts: CodecServerOptions): Router {
  const router = apiRouter();
  const allowed = new Set(opts.corsOrigins);
  const lockout = new Lockout();
  /** The client's address: behind proxies named in TRUST_PROXY, the one they served (Express's req.ip). */
  const clientOf = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';
  /** What the request presents as the operator's credential, as it is counted. */
  const presentedKey = (req: Request) => {
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ')) return lockout.credentialKey({ token: auth.slice(7).trim() });
    return lockout.credentialKey({ session: cookie(req, SESSION_COOKIE) });
  };

  /** CORS for the UI's origins only; credentials allowed, since the session is a cookie. */
  const cors = (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    res.vary('Origin');
    if (origin !== undefined && allowed.has(origin)) {
      res.set('Access-Control-Allow-Origin', origin);
      res.set('Access-Control-Allow-Credentials', 'true');
    }
    next();
  };

  /** Whether the request carries the token or a live session; undefined when it carries neither. */
  const credentials = (req: Request): boolean | undefined => {
    if (opts.token === undefined) return false;
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ')) return sameSecret(auth.slice(7).trim(), opts.token);
    const fromCookie = cookie(req, SESSION_COOKIE);
    if (fromCookie !== undefined) return validSession(opts.token, fromCookie, Date.now());
    return undefined;
  };
  const authenticated = (req: Request) => credentials(req) === true;

  const requireOperator = (req: Request, res: Response, next: NextFunction) => {
    if (opts.token === undefined) {
      return sendError(
        res,
        new AppError(
          'permission_denied',
          'the codec server is off: set DURAPAY_CODEC_TOKEN to let operators decode payloads',
        ),
      );
    }
    const from = clientOf(req);
    const presented = presentedKey(req);
    if (lockout.refuses(from, presented)) {
      return sendError(res, new AppError('rate_limited', 'too many wrong tokens or sessions: wait a minute'));
    }
    const valid = credentials(req);
    if (valid !== true) {
      if (valid === false) lockout.failed(from, presented);
      return sendError(
        res,
        new AppError(
          'unauthorized',
          'operator authentication required: the codec token, or a session from /codec/login',
        ),
      );
    }
    next();
  };

  const readBody = readRawBody({ limit: MAX_CODEC_BODY_BYTES });
  const body = (req: Request, res: Response, next: NextFunction) =>
    readBody(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type === 'entity.too.large') {
        return next(new AppError('invalid_param', 'a codec request is at most 8 MiB'));
      }
      next(err);
    });

  const payloadsOf = (req: Request): Payload[] => {
    let parsed: unknown;
    try {
      parsed = JSON.parse((req.rawBody ?? Buffer.alloc(0)).toString('utf8'));
    } catch {
      throw new AppError('invalid_param', 'request body is not valid JSON');
    }
    const payloads = (parsed as { payloads?: unknown } | null)?.payloads;
    if (!Array.isArray(payloads)) throw new AppError('invalid_param', '"payloads" must be an array');
    if (payloads.length > MAX_PAYLOADS_PER_CALL) {
      throw new AppError('invalid_param', `"payloads" holds at most ${MAX_PAYLOADS_PER_CALL} payloads`);
    }
    return payloads.map((p, i) => fromWire(p as WirePayload, i));
  };

  for (const op of ['decode', 'encode'] as const) {
    router.options(`/codec/${op}`, cors, (req, res) => {
      if (!allowed.has(req.headers.origin ?? '')) {
        return sendError(res, new AppError('permission_denied', 'this origin may not call the codec server'));
      }
      res
        .set('Access-Control-Allow-Methods', 'POST')
        .set('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization')
        .set('Access-Control-Max-Age', '600')
        .status(204)
        .end();
    });
    router.post(`/codec/${op}`, cors, requireOperator, body, async (req, res) => {
      const payloads = payloadsOf(req);
      const out: Payload[] = [];
      let bytes = 0;
      // One at a time, so that a call opening to more than MAX_DECODED_BYTES stops there.
      for (const payload of payloads) {
        let one: Payload | undefined;
        try {
          [one] = op === 'decode' ? await opts.codec.decode([payload]) : await opts.codec.encode([payload]);
        } catch (err) {
          // A key missing from the configuration is named; what a payload held never is.
          throw new AppError('invalid_param', `could not ${op} the payloads: ${(err as Error).message}`);
        }
        bytes += one!.data?.length ?? 0;
        if (bytes > MAX_DECODED_BYTES) {
          throw new AppError('invalid_param', `the payloads ${op} to more than 64 MiB: send fewer at once`);
        }
        out.push(one!);
      }
      (res.locals.log as Logger | undefined)?.info('codec', {
        operation: op,
        payloads: payloads.length,
        namespace: req.headers['x-namespace'],
      });
      res
        .type('application/json')
        .set('Cache-Control', 'no-store')
        .json({ payloads: out.map(toWire) });
    });
  }

  router.get('/codec/login', (req, res) => {
    res
      .type('html')
      .set('Content-Security-Policy', PAGE_CSP)
      .set('Cache-Control', 'no-store')
      .send(
        page(
          'durapay codec server',
          opts.token === undefined
            ? '<p class="error">The codec server is off: set <code>DURAPAY_CODEC_TOKEN</code>.</p>'
            : `<p>${authenticated(req) ? 'Signed in.' : 'Operators sign in with the codec token to read workflow payloads in the Temporal UI.'}</p>
<form method="post" action="/codec/session"><label for="token">Codec token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
        ),
      );
  });

  router.post('/codec/session', body, (req, res) => {
    const from = clientOf(req);
    const token = new URLSearchParams((req.rawBody ?? Buffer.alloc(0)).toString('utf8')).get('token') ?? '';
    const respond = (status: number, html: string) =>
      res
        .status(status)
        .type('html')
        .set('Content-Security-Policy', PAGE_CSP)
        .set('Cache-Control', 'no-store')
        .send(html);
    if (opts.token === undefined) {
      return respond(
        403,
        page(
          'durapay codec server',
          '<p class="error">The codec server is off: set <code>DURAPAY_CODEC_TOKEN</code>.</p>',
        ),
      );
    }
    const presented = lockout.credentialKey({ token });
    if (lockout.refuses(from, presented)) {
      return respond(
        429,
        page('durapay codec server', '<p class="error">Too many wrong tokens: wait a minute.</p>'),
      );
    }
    if (!sameSecret(token, opts.token)) {
      lockout.failed(from, presented);
      opts.logger.warn('codec sign-in refused', { remote_address: from });
      return respond(
        401,
        page(
          'durapay codec server',
          '<p class="error">That is not the codec token.</p><p><a href="/codec/login">Try again</a></p>',
        ),
      );
    }
    lockout.signedIn(from);
    res.cookie(SESSION_COOKIE, sessionValue(opts.token, Date.now() + SESSION_HOURS * 3600_000), {
      httpOnly: true,
      sameSite: 'strict',
      secure: opts.secureCookie,
      path: '/codec',
      maxAge: SESSION_HOURS * 3600_000,
    });
    opts.logger.info('codec sign-in', { remote_address: from });
    const endpoint = `${req.protocol}://${req.headers.host ?? 'localhost'}/codec`;
    respond(
      200,
      page(
        'Signed in',
        `<p>For the next ${SESSION_HOURS} hours this browser may decode payloads.</p>
<p>In the Temporal UI, open <b>Data Encoder</b>, set the endpoint to <code>${escapeHtml(endpoint)}</code> and tick <b>Include cross-origin credentials</b>.</p>`,
      ),
    );
  });

  router.post('/codec/logout', (_req, res) => {
    res.clearCookie(SESSION_COOKIE, {
      path: '/codec',
      httpOnly: true,
      sameSite: 'strict',
      secure: opts.secureCookie,
    });
    res.status(204).end();
  });

  return router;
}
