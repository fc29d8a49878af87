import express, { type NextFunction, type Request, type Response } from 'express';

declare module 'express-serve-static-core' {
  interface Request {
    /** The body exactly as received; signatures and channel callbacks are checked against it. */
    rawBody?: Buffer;
  }
}

export interface RawBodyOptions {
  /** Bytes; a larger body fails with body-parser's `entity.too.large` (status 413). */
  limit: number;
  /** Which requests to read; the others are left unread. Every request unless set. */
  type?: (req: Request) => boolean;
}

/**
 * Reads the body as sent onto `req.rawBody`, whatever its content type, up to `limit`, and never
 * inflates it: a signature covers the bytes as sent, and a compressed body would have to be
 * inflated, without a bound, before any check. A body an earlier middleware already read is kept
 * as it is, so a router that reads its own bodies can also be mounted behind one that does.
 */
export function readRawBody(options: RawBodyOptions) {
  const only = options.type;
  const raw = express.raw({
    type: only ? (req) => only(req as Request) : () => true,
    limit: options.limit,
    inflate: false,
  });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (Buffer.isBuffer(req.rawBody)) return next();
    raw(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (Buffer.isBuffer(req.body)) {
        req.rawBody = req.body;
        req.body = undefined;
      }
      next();
    });
  };
}
