import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import type { Logger } from '../platform/logger';
import type { Tracing } from '../platform/tracing';

/** What Node's HTTP parser refused, as the status it would have sent and a sentence of ours. */
function refusalOf(err: NodeJS.ErrnoException): { status: number; reason: string; message: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: 'Request Header Fields Too Large',
        message: 'the request line and headers are larger than 16 KiB',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', message: 'the request was not received in time' };
    default:
      return {
        status: 400,
        reason: 'Bad Request',
        message: `the request is not well-formed HTTP/1.1 (${String(err.code ?? 'parse error')})`,
      };
  }
}

/**
 * Requests that Node's HTTP parser refuses (headers over 16 KiB, a raw non-ASCII byte in the
 * path, Content-Length with Transfer-Encoding, …) never reach Express; Node would answer them
 * with an empty body. They get the envelope of SPEC §1 instead, with code `invalid_param`.
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const { status, reason, message } = refusalOf(err);
    logger.info('request refused by the HTTP parser', { request_id: requestId, status, code: err.code });
    const body = JSON.stringify({ code: 'invalid_param', message, data: null, request_id: requestId });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}

/**
 * Serves the API on host:port, with the parser's refusals answered in the envelope; with
 * `tracing`, each request in a span of its own.
 */
export function listenApi(
  app: Express,
  port: number,
  host: string,
  logger: Logger,
  tracing?: Pick<Tracing, 'serve'>,
): Promise<Server> {
  const server = createServer(tracing ? tracing.serve(app) : app);
  answerClientErrors(server, logger);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
