import type { IncomingMessage } from 'node:http';

export type BoundedBody = { ok: true; body: Buffer } | { ok: false; declared: boolean };

/**
 * Reads a request's body as sent (never inflated), at most `limit` bytes of it. A body declared
 * larger (Content-Length) is refused before a byte of it is read; one that turns out larger as
 * it arrives is refused at the first byte past the limit and the stream is left paused, so
 * nothing after it is read. Either way the caller answers with `Connection: close`, and the
 * connection ends with the answer instead of draining the rest (as body-parser does before it
 * reports a body too large). Rejects when the client goes away before the body is whole.
 */
export function readBoundedBody(req: IncomingMessage, limit: number): Promise<BoundedBody> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false, declared: true });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        stop();
        req.pause();
        resolve({ ok: false, declared: false });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve({ ok: true, body: Buffer.concat(chunks, length) });
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    const onClose = () => {
      stop();
      reject(new Error('the request body was not received whole'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
