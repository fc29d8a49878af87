import type { Server } from 'node:http';
import { envelope } from '../support/http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import express from 'express';
import { sendData } from '../../src/platform/http/envelope';
import { captureRawBody, parseJsonBody } from '../../src/platform/http/body';
import { errorHandler } from '../../src/api/middleware/errors';
import { requestContext } from '../../src/api/middleware/request-context';
import { createLogger } from '../../src/platform/logger';

let server: Server;
let url: string;
beforeAll(async () => {
  const logger = createLogger({ level: 'error', stream: new PassThrough().resume() });
  const app = express();
  app.use(requestContext(logger));
  app.use(captureRawBody());
  app.post('/echo', parseJsonBody(), (req, res) =>
    sendData(res, { body: req.body ?? null, raw: req.rawBody?.length ?? 0 }),
  );
  app.post('/boom', () => {
    throw new Error('SELECT secret FROM apps -- must never reach a client');
  });
  app.use(errorHandler(logger));
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const post = (path: string, body: string, type = 'application/json') =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': type }, body });

describe('JSON bodies', () => {
  test('when the body is valid JSON, then the route sees it parsed and the raw bytes kept', async () => {
    const res = await post('/echo', '{"amount": 100}');
    expect(res.status).toBe(200);
    expect((await envelope(res)).data).toEqual({ body: { amount: 100 }, raw: 15 });
  });

  test.each([['{"amount": '], ['not json'], ['{"a":1}}']])(
    'when the body is %p, then it answers 400 invalid_param',
    async (body) => {
      const res = await post('/echo', body);
      expect(res.status).toBe(400);
      expect(await envelope(res)).toMatchObject({
        code: 'invalid_param',
        message: 'request body is not valid JSON',
        data: null,
      });
    },
  );

  test('when the body is over 1 MiB, then it answers 400 invalid_param', async () => {
    const res = await post('/echo', JSON.stringify({ x: 'y'.repeat(1024 * 1024) }));
    expect(res.status).toBe(400);
    expect((await envelope(res)).code).toBe('invalid_param');
  });

  test('when the body is exactly 1 MiB, then it is accepted', async () => {
    const body = JSON.stringify({ x: '' });
    const padded = JSON.stringify({ x: 'y'.repeat(1024 * 1024 - body.length) });
    expect(Buffer.byteLength(padded)).toBe(1024 * 1024);
    const res = await post('/echo', padded);
    expect(res.status).toBe(200);
  });

  test('when the body is empty, then the route sees no body', async () => {
    const res = await post('/echo', '');
    expect((await envelope(res)).data).toEqual({ body: null, raw: 0 });
  });

  test('when a handler throws an unknown error, then it answers 500 internal_system without its text', async () => {
    const res = await post('/boom', '{}');
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({
      code: 'internal_system',
      message: 'internal system error',
      data: null,
    });
    expect(text).not.toContain('SELECT');
  });
});
