import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSigner, httpbis } from 'http-message-signatures';
import { createApp } from '../../src/api/app';
import { readinessProbes } from '../../src/api/server';
import { RequestAdmission, type AppCredentials } from '../../src/modules/apps/repository';
import { captureLogger, startTestStack, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { signRequest } from '../../src/platform/crypto/http-signature';
import { signedFetch } from '../support/signing';
import { until } from '../support/wait';

jest.setTimeout(60_000);

let stack: TestStack;
let app: AppCredentials;
beforeAll(async () => {
  stack = await startTestStack();
  app = await stack.createApp(['payments', 'merchants']);
});
afterAll(async () => {
  await stack?.stop();
});

/**
 * The probes ask for an order that does not exist: an authenticated request reaches the
 * business route (422 order_not_found); a refused one ends in its 401/403/429.
 */
const PASSED_AUTH = { status: 422, code: 'order_not_found' };

async function outcome(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = await envelope(res);
  return { status: res.status, code: body.code, message: body.message };
}

describe('RFC 9421 request signatures', () => {
  test('when a GET is signed by the SDK signer, then it passes authentication', async () => {
    const res = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1');
    expect(await outcome(res)).toMatchObject(PASSED_AUTH);
  });

  test('when a POST with a JSON body is signed, then it passes authentication', async () => {
    const res = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/pay/close', {
      json: { trade_no: 'P1' },
    });
    expect(await outcome(res)).toMatchObject(PASSED_AUTH);
  });

  describe('signed by an independent implementation (http-message-signatures)', () => {
    async function independentlySigned(method: string, target: string, body?: string) {
      const headers: Record<string, string> = {};
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-digest'] = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
      }
      const fields = ['@method', '@path', '@query', ...(body !== undefined ? ['content-digest'] : [])];
      const signed = await httpbis.signMessage(
        {
          key: createSigner(Buffer.from(app.secret, 'utf8'), 'hmac-sha256', app.app_id),
          fields,
          params: ['keyid', 'alg', 'created', 'nonce'],
          paramValues: { nonce: randomBytes(12).toString('hex') },
        },
        { method, url: `${stack.baseUrl}${target}`, headers },
      );
      return signed.headers as Record<string, string>;
    }

    test('when it signs a POST with a body and a query, then durapay accepts it', async () => {
      const body = JSON.stringify({ trade_no: 'P42' });
      const headers = await independentlySigned('POST', '/api/v1/pay/close?lang=en', body);
      const res = await fetch(`${stack.baseUrl}/api/v1/pay/close?lang=en`, { method: 'POST', headers, body });
      expect(await outcome(res)).toMatchObject(PASSED_AUTH);
    });

    test('when it signs a GET without a query string, then durapay accepts it and answers', async () => {
      const headers = await independentlySigned('GET', '/api/v1/notifications');
      const res = await fetch(`${stack.baseUrl}/api/v1/notifications`, { headers });
      expect(res.status).toBe(200);
      expect(await envelope(res)).toMatchObject({
        code: 'success',
        data: { list: [], limit: 20, offset: 0 },
      });
    });

    type Change = { body?: string; target?: string; method?: string };
    test.each<[string, Change]>([
      ['the body', { body: JSON.stringify({ trade_no: 'P43' }) }],
      ['the path', { target: '/api/v1/pay/refund?lang=en' }],
      ['the query', { target: '/api/v1/pay/close?lang=fr' }],
      ['the method', { method: 'PUT' }],
    ])('when %s is changed after signing, then durapay refuses it with 401', async (_what, change) => {
      const body = JSON.stringify({ trade_no: 'P42' });
      const headers = await independentlySigned('POST', '/api/v1/pay/close?lang=en', body);
      const res = await fetch(`${stack.baseUrl}${change.target ?? '/api/v1/pay/close?lang=en'}`, {
        method: change.method ?? 'POST',
        headers,
        body: change.body ?? body,
      });
      expect(await outcome(res)).toMatchObject({ status: 401, code: 'unauthorized' });
    });
  });
});

describe('SPEC §2 error table', () => {
  const unauthorized = { status: 401, code: 'unauthorized' };

  test('when the signature headers are absent, then 401 unauthorized', async () => {
    const res = await fetch(`${stack.baseUrl}/api/v1/pay/query/P1`);
    expect(await outcome(res)).toEqual({
      ...unauthorized,
      message: 'Signature and Signature-Input headers are required',
    });
  });

  test.each([
    [
      'Signature-Input is not a structured field',
      { 'signature-input': 'sig1=("@method"', signature: 'sig1=:AAAA:' },
    ],
    ['Signature is not a byte sequence', { signature: 'sig1="abc"' }],
    ['the labels do not match', { signature: 'other=:AAAA:' }],
  ])('when %s, then 401 unauthorized', async (_what, headers) => {
    const res = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', { headers });
    expect(await outcome(res)).toMatchObject(unauthorized);
  });

  test('when the signature is wrong, then 401 unauthorized', async () => {
    const res = await signedFetch(
      stack.baseUrl,
      { ...app, secret: `${app.secret.slice(0, -1)}x` },
      'GET',
      '/api/v1/pay/query/P1',
    );
    expect(await outcome(res)).toEqual({ ...unauthorized, message: 'signature does not match' });
  });

  test('when "@query" is not covered, then 401 unauthorized naming it', async () => {
    const res = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', {
      headers: {
        'signature-input': `sig1=("@method" "@path");created=${Math.floor(Date.now() / 1000)};nonce="n-${randomBytes(6).toString('hex')}";keyid="${app.app_id}"`,
      },
    });
    expect(await outcome(res)).toEqual({ ...unauthorized, message: 'signature must cover "@query"' });
  });

  test('when a request with a body does not cover content-digest, then 401 unauthorized', async () => {
    const created = Math.floor(Date.now() / 1000);
    const res = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/pay/close', {
      json: { trade_no: 'P1' },
      headers: {
        'signature-input': `sig1=("@method" "@path" "@query");created=${created};nonce="nonce-${created}";keyid="${app.app_id}"`,
      },
    });
    expect(await outcome(res)).toEqual({ ...unauthorized, message: 'signature must cover "content-digest"' });
  });

  test.each([
    ['keyid', 'signature parameter keyid is required'],
    ['created', 'signature parameter created is required (integer unix seconds)'],
    ['nonce', 'signature parameter nonce is required'],
  ])('when the %s parameter is missing, then 401 unauthorized', async (param, message) => {
    const params: Record<string, string> = {
      created: String(Math.floor(Date.now() / 1000)),
      nonce: `"n-${randomBytes(6).toString('hex')}"`,
      keyid: `"${app.app_id}"`,
    };
    delete params[param];
    const input = `sig1=("@method" "@path" "@query")${Object.entries(params)
      .map(([k, v]) => `;${k}=${v}`)
      .join('')}`;
    const res = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', {
      headers: { 'signature-input': input },
    });
    expect(await outcome(res)).toEqual({ ...unauthorized, message });
  });

  test('when alg names another algorithm, then 401 unauthorized', async () => {
    const input = `sig1=("@method" "@path" "@query");created=${Math.floor(Date.now() / 1000)};nonce="n-alg-123";keyid="${app.app_id}";alg="ed25519"`;
    const res = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', {
      headers: { 'signature-input': input },
    });
    expect(await outcome(res)).toEqual({
      ...unauthorized,
      message: 'signature parameter alg must be hmac-sha256',
    });
  });

  test.each([
    ['shorter than 8 characters', 'short12'],
    ['longer than 128 characters', 'n'.repeat(129)],
  ])('when the nonce is %s, then 401 unauthorized', async (_what, nonce) => {
    const res = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', { sign: { nonce } });
    expect(await outcome(res)).toMatchObject(unauthorized);
  });

  test.each([
    ['301 s old', -301],
    ['301 s in the future', 301],
  ])('when created is %s, then 401 unauthorized', async (_what, offset) => {
    // The server reads its clock in whole seconds, as `created` is: a request answered in a later
    // second than it was signed in may have been checked at 300 s, not 301, and is made again.
    for (let attempt = 1; ; attempt++) {
      const signedAt = Math.floor(Date.now() / 1000);
      const res = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', {
        sign: { created: signedAt + offset },
      });
      const out = await outcome(res);
      if (Math.floor(Date.now() / 1000) !== signedAt && attempt < 10) continue;
      expect(out).toMatchObject(unauthorized);
      expect(out.message).toMatch(/allowed ±300 s$/);
      return;
    }
  });

  test('when created is 290 s old, then the request passes', async () => {
    const res = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', {
      sign: { created: Math.floor(Date.now() / 1000) - 290 },
    });
    expect(await outcome(res)).toMatchObject(PASSED_AUTH);
  });

  test('when a nonce is replayed, then the second request gets 401 unauthorized', async () => {
    const nonce = `replay-${randomBytes(8).toString('hex')}`;
    const first = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', { sign: { nonce } });
    expect(await outcome(first)).toMatchObject(PASSED_AUTH);
    const second = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', { sign: { nonce } });
    expect(await outcome(second)).toEqual({ ...unauthorized, message: 'nonce already used' });
  });

  test('when the same nonce is used by two different apps, then both pass', async () => {
    const other = await stack.createApp(['payments']);
    const nonce = `shared-${randomBytes(8).toString('hex')}`;
    const a = await signedFetch(stack.baseUrl, app, 'GET', '/api/v1/pay/query/P1', { sign: { nonce } });
    const b = await signedFetch(stack.baseUrl, other, 'GET', '/api/v1/pay/query/P1', { sign: { nonce } });
    expect(await outcome(a)).toMatchObject(PASSED_AUTH);
    expect(await outcome(b)).toMatchObject(PASSED_AUTH);
  });

  test('when a request with a body is validly signed without Content-Digest, then 401 unauthorized', async () => {
    // A real signature over method, path and query only: nothing binds the body, so a body
    // changed on the way would pass unless the digest is required.
    const res = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/pay/close', {
      send: { body: JSON.stringify({ trade_no: 'P1' }) },
      headers: { 'content-type': 'application/json' },
    });
    const answer = await outcome(res);
    expect(answer).toMatchObject(unauthorized);
    expect(answer.message).toMatch(/content-digest|Content-Digest/);
  });

  test('when a signature covers Content-Digest but the header is not sent, then 401 unauthorized', async () => {
    const body = JSON.stringify({ trade_no: 'P1' });
    const signed = signRequest({
      method: 'POST',
      target: '/api/v1/pay/close',
      body,
      keyId: app.app_id,
      secret: app.secret,
    });
    const res = await fetch(`${stack.baseUrl}/api/v1/pay/close`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'signature-input': signed['signature-input'],
        signature: signed.signature,
      },
    });
    expect(await outcome(res)).toEqual({
      ...unauthorized,
      message: 'covered header "content-digest" is missing',
    });
  });

  test('when Content-Digest does not match the body, then 401 unauthorized', async () => {
    // The signature covers the (wrong) digest header, so only the digest check can catch this.
    const res = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/pay/close', {
      json: { trade_no: 'P1' },
      send: { body: JSON.stringify({ trade_no: 'P2' }) },
    });
    expect(await outcome(res)).toEqual({
      ...unauthorized,
      message: 'Content-Digest does not match the body',
    });
  });

  test('when keyid names no app, then 401 app_not_found', async () => {
    const res = await signedFetch(
      stack.baseUrl,
      { app_id: 'app_aaaaaaaaaaaaaaaa', secret: app.secret },
      'GET',
      '/api/v1/pay/query/P1',
    );
    expect(await outcome(res)).toEqual({ status: 401, code: 'app_not_found', message: 'app not found' });
  });

  test('when the app is disabled, then 403 permission_denied; enabled again, it passes', async () => {
    const target = await stack.createApp(['payments']);
    await stack.auth.apps.setStatus(target.app_id, 'disabled');
    const refused = await signedFetch(stack.baseUrl, target, 'GET', '/api/v1/pay/query/P1');
    expect(await outcome(refused)).toEqual({
      status: 403,
      code: 'permission_denied',
      message: 'app is disabled',
    });
    await stack.auth.apps.setStatus(target.app_id, 'active');
    const accepted = await signedFetch(stack.baseUrl, target, 'GET', '/api/v1/pay/query/P1');
    expect(await outcome(accepted)).toMatchObject(PASSED_AUTH);
  });

  test.each([
    [['merchants'], '/api/v1/pay/query/P1', 'payments'],
    [['merchants'], '/api/v1/notifications', 'payments'],
    [['payments'], '/api/v1/merchant', 'merchants'],
    [['payments'], '/api/v1/merchant/m1/audit', 'merchants'],
  ] as const)(
    'when an app with scopes %p calls %s, then 403 permission_denied',
    async (scopes, path, needed) => {
      const limited = await stack.createApp([...scopes]);
      const res = await signedFetch(stack.baseUrl, limited, 'GET', path);
      expect(await outcome(res)).toEqual({
        status: 403,
        code: 'permission_denied',
        message: `app lacks the ${needed} scope`,
      });
    },
  );

  test('when a disabled app signs badly, then authentication (401) is answered before permission (403)', async () => {
    const target = await stack.createApp(['payments']);
    await stack.auth.apps.setStatus(target.app_id, 'disabled');
    const res = await signedFetch(
      stack.baseUrl,
      { ...target, secret: app.secret },
      'GET',
      '/api/v1/pay/query/P1',
    );
    expect(await outcome(res)).toMatchObject(unauthorized);
  });

  test('when another process disables an app this API has cached, then its next requests are refused once Postgres tells it', async () => {
    const target = await stack.createApp(['payments']);
    // Verified once: the app is now in this process's cache.
    expect(
      await outcome(await signedFetch(stack.baseUrl, target, 'GET', '/api/v1/pay/query/P1')),
    ).toMatchObject(PASSED_AUTH);
    // What `durapay apps disable` does in its own process: the row, and the notification.
    await stack.database.db.sequelize.query(
      "UPDATE apps SET status = 'disabled' WHERE app_id = :id; SELECT pg_notify('durapay_app_changes', :id)",
      { replacements: { id: target.app_id } },
    );
    // Well within the cache's 10 s life: the notification, not the expiry, is what refuses it.
    const refused = await until(
      'the disabled app refused',
      async () => {
        const res = await signedFetch(stack.baseUrl, target, 'GET', '/api/v1/pay/query/P1');
        return res.status === 403 ? res : undefined;
      },
      3_000,
    );
    expect(await outcome(refused)).toEqual({
      status: 403,
      code: 'permission_denied',
      message: 'app is disabled',
    });
  });

  test('when a secret is rotated, then the old one is refused and the new one accepted', async () => {
    const target = await stack.createApp(['payments']);
    const fresh = await stack.auth.apps.rotate(target.app_id, 'secret');
    const old = await signedFetch(stack.baseUrl, target, 'GET', '/api/v1/pay/query/P1');
    expect(await outcome(old)).toMatchObject(unauthorized);
    const renewed = await signedFetch(
      stack.baseUrl,
      { ...target, secret: fresh! },
      'GET',
      '/api/v1/pay/query/P1',
    );
    expect(await outcome(renewed)).toMatchObject(PASSED_AUTH);
  });
});

describe('rate limit', () => {
  test('when an app exceeds its burst, then 429 rate_limited with Retry-After, and other apps are unaffected', async () => {
    const { logger } = captureLogger();
    const limited = createApp({
      logger,
      readiness: readinessProbes(stack.database.db, stack.connection),
      auth: { ...stack.auth, admission: new RequestAdmission(stack.database.db, 1, 3) },
      services: stack.services,
    });
    const server = await new Promise<Server>((resolve) => {
      const s = limited.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const busy = await stack.createApp(['payments']);
      const quiet = await stack.createApp(['payments']);
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 5; i++) {
        const res = await signedFetch(url, busy, 'GET', '/api/v1/pay/query/P1');
        statuses.push(res.status);
        if (res.status === 429) {
          retryAfter = res.headers.get('retry-after');
          expect(await envelope(res)).toMatchObject({
            code: 'rate_limited',
            message: 'rate limit exceeded',
            data: null,
          });
        }
      }
      // Burst 3: three pass (422 from the route behind auth), then the bucket is empty.
      expect(statuses.slice(0, 3)).toEqual([422, 422, 422]);
      expect(statuses.slice(3)).toContain(429);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      const other = await signedFetch(url, quiet, 'GET', '/api/v1/pay/query/P1');
      expect(other.status).toBe(422);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('replays and the rate limit', () => {
  test('when a nonce is replayed many times, then each replay is refused and none takes a token from the bucket', async () => {
    const { logger } = captureLogger();
    const limited = createApp({
      logger,
      readiness: readinessProbes(stack.database.db, stack.connection),
      auth: { ...stack.auth, admission: new RequestAdmission(stack.database.db, 0.001, 3) },
      services: stack.services,
    });
    const server = await new Promise<Server>((resolve) => {
      const s = limited.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const target = await stack.createApp(['payments']);
      const nonce = `replay-${randomBytes(8).toString('hex')}`;
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        statuses.push(
          (await signedFetch(url, target, 'GET', '/api/v1/pay/query/P1', { sign: { nonce } })).status,
        );
      }
      // Burst 3: the first took one token, the five replays none, so two fresh requests still pass.
      for (let i = 0; i < 3; i++)
        statuses.push((await signedFetch(url, target, 'GET', '/api/v1/pay/query/P1')).status);
      expect(statuses).toEqual([422, 401, 401, 401, 401, 401, 422, 422, 429]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('secrets in logs', () => {
  test('when requests are authenticated or refused, then no secret or signature appears in any log line', async () => {
    const target = await stack.createApp(['payments']);
    const ok = await signedFetch(stack.baseUrl, target, 'POST', '/api/v1/pay/close', {
      json: { trade_no: 'P1' },
    });
    expect(ok.status).toBe(422);
    const bad = await signedFetch(
      stack.baseUrl,
      { ...target, secret: 'wrong-secret-value-0000000000000000000000000' },
      'GET',
      '/api/v1/pay/query/P1',
    );
    expect(bad.status).toBe(401);
    const text = stack.logs().join('\n');
    expect(text).toContain(target.app_id);
    expect(text).not.toContain(target.secret);
    expect(text).not.toContain(target.webhook_secret);
    expect(text).not.toContain('wrong-secret-value');
    expect(text).not.toMatch(/sig1=:/);
  });
});
