import type { Server } from 'node:http';
import { envelope } from '../support/http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/api/app';
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { createChannelRegistry } from '../../src/channels/registry';
import { loadConfig } from '../../src/config';
import { authDeps, probeConnection, readinessProbes } from '../../src/api/server';
import { connectDatabase } from '../../src/platform/db';
import { freePort } from '../support/ports';
import { captureLogger, startTestStack, type TestStack } from '../support/harness';
import { globalState } from '../support/state';
import { parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { responseConformance } from '../support/openapi-conformance';

jest.setTimeout(60_000);

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

describe('API skeleton', () => {
  test('when /livez is called, then it answers 200 in the success envelope', async () => {
    const res = await fetch(`${stack.baseUrl}/livez`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ code: 'success', data: { status: 'ok' } });
  });

  test('when /healthz is called, then it answers 200 in the success envelope', async () => {
    const res = await fetch(`${stack.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await envelope(res);
    expect(body).toEqual({
      code: 'success',
      message: 'success',
      data: { status: 'ok' },
      request_id: res.headers.get('x-request-id'),
    });
  });

  test('when the database and Temporal answer, then /readyz is 200', async () => {
    const res = await fetch(`${stack.baseUrl}/readyz`);
    expect(res.status).toBe(200);
    expect((await envelope(res)).data).toEqual({ status: 'ready', database: 'ok', temporal: 'ok' });
  });

  test('when a valid X-Request-Id is sent, then it is echoed in the header and the body', async () => {
    const res = await fetch(`${stack.baseUrl}/healthz`, { headers: { 'X-Request-Id': 'abc.DEF_123-x' } });
    expect(res.headers.get('x-request-id')).toBe('abc.DEF_123-x');
    expect((await envelope(res)).request_id).toBe('abc.DEF_123-x');
  });

  test.each([
    ['too long', 'a'.repeat(129)],
    ['with a space', 'has space'],
    ['with a slash', 'a/b'],
  ])('when the X-Request-Id is invalid (%s), then a fresh one is generated', async (_label, value) => {
    const res = await fetch(`${stack.baseUrl}/healthz`, { headers: { 'X-Request-Id': value } });
    const id = res.headers.get('x-request-id');
    expect(id).not.toBe(value);
    expect(id).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });

  test('when no X-Request-Id is sent, then each response carries a different generated one', async () => {
    const a = (await fetch(`${stack.baseUrl}/healthz`)).headers.get('x-request-id');
    const b = (await fetch(`${stack.baseUrl}/healthz`)).headers.get('x-request-id');
    expect(a).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    expect(a).not.toBe(b);
  });

  test('when the route is unknown, then it answers 404 not_found in the failure envelope', async () => {
    const res = await fetch(`${stack.baseUrl}/api/v1/nothing-here`);
    expect(res.status).toBe(404);
    const body = await envelope(res);
    expect(body).toEqual({
      code: 'not_found',
      message: 'no route for GET /api/v1/nothing-here',
      data: null,
      request_id: res.headers.get('x-request-id'),
    });
  });

  test('when a body is larger than 1 MiB, then it answers 400 invalid_param', async () => {
    const res = await fetch(`${stack.baseUrl}/api/v1/pay/unified-order`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ padding: 'x'.repeat(1024 * 1024) }),
    });
    expect(res.status).toBe(400);
    const body = await envelope(res);
    expect(body.code).toBe('invalid_param');
    expect(body.message).toBe('request body is larger than 1 MiB');
    expect(body.data).toBeNull();
  });

  test('when requests are served, then each is logged as a JSON line with its request id', async () => {
    await fetch(`${stack.baseUrl}/healthz`, { headers: { 'X-Request-Id': 'log-probe-1' } });
    const line = stack
      .logs()
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.request_id === 'log-probe-1' && l.message === 'request');
    expect(line).toMatchObject({ method: 'GET', path: '/healthz', status: 200, level: 'info' });
  });
});

describe('readiness when a dependency is down', () => {
  async function serve(databaseUrl: string, temporalAddress: string) {
    const db = connectDatabase(databaseUrl, { acquireTimeoutMs: 1_000 });
    const temporal = probeConnection(temporalAddress);
    const { logger, lines } = captureLogger();
    const app = createApp({
      logger,
      readiness: readinessProbes(db, temporal),
      auth: authDeps(db, randomBytes(32), { perSecond: 100, burst: 200 }),
      services: {
        db,
        client: new Client({ connection: temporal }),
        taskQueue: 'unused',
        notifications: loadConfig({}).notifications,
        timeScale: 1,
        channels: createChannelRegistry([]),
        publicBaseUrl: 'http://127.0.0.1:9',
        defaultChannel: 'sandbox',
        profitShareDelayMs: 60_000,
        orderIdleEndMs: 600_000,
        requestTimeoutMs: 10_000,
        payloadKeys: parsePayloadKeys(globalState().payloadKeys, 'test'),
      },
    });
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    responseConformance().register(url);
    return {
      url,
      logs: () => lines().map((l) => JSON.parse(l) as Record<string, unknown>),
      async close() {
        await new Promise((r) => server.close(r));
        await Promise.allSettled([db.close(), temporal.close()]);
      },
    };
  }

  test('when the database is unreachable, then /readyz answers 503 naming the database, and only the log says why', async () => {
    const port = await freePort();
    const api = await serve(
      `postgres://postgres:pw-of-this-test-only@127.0.0.1:${port}/nowhere`,
      globalState().temporalAddress,
    );
    try {
      const res = await fetch(`${api.url}/readyz`);
      expect(res.status).toBe(503);
      const body = await envelope(res);
      expect(body.code).toBe('internal_system');
      expect(body.data).toBeNull();
      // The dependency's name, never the driver's words or where it looked (SPEC §9).
      expect(body.message).toBe('not ready: database down');
      const logged = api.logs().find((l) => l.message === 'readiness probe failed');
      expect(logged).toMatchObject({ level: 'warn', dependency: 'database', request_id: body.request_id });
      expect(String(logged?.error)).toContain(String(port));
      expect(JSON.stringify(api.logs())).not.toContain('pw-of-this-test-only');
    } finally {
      await api.close();
    }
  });

  test('when Temporal is unreachable, then /readyz answers 503 naming Temporal, and only the log says why', async () => {
    const port = await freePort();
    const api = await serve(stack.database.url, `127.0.0.1:${port}`);
    try {
      const res = await fetch(`${api.url}/readyz`);
      expect(res.status).toBe(503);
      const body = await envelope(res);
      expect(body.message).toBe('not ready: temporal down');
      const logged = api.logs().find((l) => l.message === 'readiness probe failed');
      expect(logged).toMatchObject({ level: 'warn', dependency: 'temporal' });
      expect(String(logged?.error)).toContain(String(port));
    } finally {
      await api.close();
    }
  });
});
