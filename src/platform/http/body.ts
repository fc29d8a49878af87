import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors';
import { readRawBody } from './raw-body';

export const MAX_JSON_BODY_BYTES = 1024 * 1024;

export function isMultipart(req: Request): boolean {
  return (req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/');
}

export function requestHasBody(req: Request): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/**
 * durapay accepts bodies as sent, uncompressed (`identity`): the Content-Digest a request is
 * signed with covers the content as sent (RFC 9530), and a compressed body would have to be
 * inflated, without a bound, before any check. Anything else is refused before it is read.
 */
export function contentEncodingProblem(req: Request): AppError | undefined {
  const encoding = req.headers['content-encoding'];
  if (encoding === undefined || !requestHasBody(req)) return undefined;
  const codings = encoding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return undefined;
  return new AppError(
    'invalid_param',
    `Content-Encoding ${codings.join(', ').slice(0, 64)} is not accepted: send the body uncompressed`,
  );
}

/** Refuses a body with a Content-Encoding durapay does not accept (400 invalid_param). */
export function refuseEncodedBodies() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    next(contentEncodingProblem(req));
  };
}

/**
 * Reads every non-multipart body raw, up to 1 MiB, whatever its content type, and keeps it on
 * `req.rawBody`. Multipart uploads are left to stream to their own route.
 */
export function captureRawBody() {
  // Never inflated: a body is checked and stored as sent (see refuseEncodedBodies).
  return readRawBody({ limit: MAX_JSON_BODY_BYTES, type: (req) => !isMultipart(req) });
}

/** Parses the raw body as JSON for routes that take JSON. An empty body parses to undefined. */
export function parseJsonBody() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const raw = req.rawBody;
    if (!raw || raw.length === 0) {
      req.body = undefined;
      return next();
    }
    try {
      req.body = JSON.parse(raw.toString('utf8'));
    } catch {
      return next(new AppError('invalid_param', 'request body is not valid JSON'));
    }
    next();
  };
}

/** Turns body-parser's failures into the SPEC's 400 invalid_param. */
export function bodyParserError(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null || !('type' in err)) return undefined;
  switch ((err as { type: unknown }).type) {
    case 'entity.too.large':
      return new AppError('invalid_param', 'request body is larger than 1 MiB');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('invalid_param', 'request body has an unsupported encoding');
    case 'request.aborted':
    case 'request.size.invalid':
      return new AppError('invalid_param', 'request body was not received whole');
    default:
      return undefined;
  }
}
