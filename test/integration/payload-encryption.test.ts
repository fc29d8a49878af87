/**
 * Sensitive data sealed at rest in Temporal (SPEC §7): every payload of an order's, a
 * notification's and an application's history is ciphertext to anyone reading the history
 * without durapay's keys; the codec server opens it for an authenticated operator (the Temporal
 * CLI is one here, the UI in test/e2e/browser.test.ts); keys rotate; a process started without a
 * key that sealed data refuses to start.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import express from 'express';
import { Client } from '@temporalio/client';
import { payloadsAt, payloadsOf, writtenByTemporal } from '../support/history';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { codecRoutes } from '../../src/api/codec';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { orderWorkflowId } from '../../src/modules/orders/messages';
import { applicationWorkflowId } from '../../src/modules/applications/messages';
import { keyCheckValue, retirePayloadKey } from '../../src/platform/crypto/key-registry';
import { newPayloadKeyEntry, parsePayloadKeys } from '../../src/platform/crypto/keyring';
import { sealedDataConverter } from '../../src/platform/data-converter';
import { EncryptionCodec, isEncryptedPayload } from '../../src/platform/payload-codec';
import { captureLogger, serveApi, startTestStack, uniqueName, type TestStack } from '../support/harness';
import { envelope } from '../support/http';
import { paymentsClient, type PaymentsClient } from '../support/payments';
import { startProductionApi } from '../support/production-api';
import { Receiver } from '../support/receiver';
import { signedFetch } from '../support/signing';
import { globalState, durapayBin } from '../support/state';
import { until } from '../support/wait';
import { spawnWorker } from '../support/worker-process';

jest.setTimeout(120_000);
const run = promisify(execFile);

let stack: TestStack;
let app: AppCredentials;
let receiver: Receiver;
let pay: PaymentsClient;

beforeAll(async () => {
  stack = await startTestStack();
  app = await stack.createApp(['payments', 'merchants']);
  receiver = await new Receiver().answer(200).start();
  pay = paymentsClient(stack, app, receiver);
});
afterAll(async () => {
  await receiver?.stop();
  await stack?.stop();
});

/** What a reader without the keys sees: the history with every payload's bytes read as text. */
function readableText(history: temporal.api.history.v1.IHistory): string {
  const bytes = payloadsOf(history).map((p) => Buffer.from(p.data ?? []).toString('latin1'));
  return `${JSON.stringify(historyToJSON(history))}\n${bytes.join('\n')}`;
}

async function historiesOf(
  query: string,
): Promise<{ workflowId: string; history: temporal.api.history.v1.IHistory }[]> {
  const out = [];
  for await (const wf of stack.client.workflow.list({ query })) {
    out.push({
      workflowId: wf.workflowId,
      history: await stack.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory(),
    });
  }
  return out;
}

describe('workflow histories', () => {
  test('when an order is created, paid and notified, then its histories hold no subject, notify_url or extra value in the clear, every payload is sealed, and with the codec they decode', async () => {
    const subject = `Secret subject ${randomUUID()}`;
    const clientIp = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    const openid = `o-${randomUUID()}`;
    const merchantOrderNo = `M-${randomUUID()}`;
    // payment.succeeded's first attempt fails, so that it is delivered by a workflow whose
    // history is read below (one its first attempt settles has none); 200 from then on.
    receiver.answer(500, 200);
    const created = await pay.paidOrder({
      merchant_order_no: merchantOrderNo,
      subject,
      extra: { client_ip: clientIp, openid },
    });
    await until('payment.succeeded delivered', async () =>
      pay.notificationsFor(created.trade_no, 'payment.succeeded').length > 0 ? true : undefined,
    );
    const refund = await pay.post<{ refund_no: string }>('/api/v1/pay/refund', {
      trade_no: created.trade_no,
      refund_amount: 30,
      reason: `reason ${openid}`,
    });
    expect(refund.code).toBe('success');
    await until('refund settled', async () =>
      (await pay.get<{ status: string }>(`/api/v1/pay/refund/query/${refund.data!.refund_no}`)).data!
        .status === 'success'
        ? true
        : undefined,
    );
    await until('the notification workflows are visible', async () =>
      (await stack.client.workflow.count(`TradeNo = '${created.trade_no}'`)).count >= 3 ? true : undefined,
    );

    const histories = await historiesOf(`TradeNo = '${created.trade_no}'`);
    const types = new Set(histories.map((h) => h.workflowId.split(':')[0]));
    expect([...types].sort()).toEqual(['notification', 'order', 'refund']);
    for (const { workflowId, history } of histories) {
      const text = readableText(history);
      for (const secret of [subject, receiver.url, clientIp, openid]) {
        expect([workflowId, secret, text.includes(secret)]).toEqual([workflowId, secret, false]);
      }
      const payloads = payloadsAt(history);
      expect(payloads.length).toBeGreaterThan(0);
      const plain = payloads.filter(
        (p) => !isEncryptedPayload(p.payload) && !writtenByTemporal(history, p.at),
      );
      expect([
        workflowId,
        plain.map(
          (p) =>
            `${p.at}: ${Buffer.from(p.payload.data ?? [])
              .toString('utf8')
              .slice(0, 80)}`,
        ),
      ]).toEqual([workflowId, []]);
    }

    // Decoded with the keys, the same order history holds what was sent.
    const order = histories.find((h) => h.workflowId === orderWorkflowId(app.app_id, merchantOrderNo))!;
    const codec = new EncryptionCodec(stack.payloadKeys.keyring);
    const opened = await codec.decode(payloadsOf(order.history));
    const openedText = opened.map((p) => Buffer.from(p.data ?? []).toString('utf8')).join('\n');
    for (const secret of [subject, receiver.url, clientIp, openid]) expect(openedText).toContain(secret);
  });

  test('when an application is submitted with an identity number, then its history holds it sealed only', async () => {
    const merchantId = `m-${randomUUID().slice(0, 8)}`;
    const idNumber = `1101011990${String(Date.now()).slice(-8)}`;
    const created = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/merchant', {
      json: { merchant_id: merchantId, merchant_name: 'Tea House' },
    });
    expect(created.status).toBe(200);
    const applied = await envelope<{ application_id: string }>(
      await signedFetch(stack.baseUrl, app, 'POST', `/api/v1/merchant/${merchantId}/apply`, {
        json: {
          channel_code: 'sandbox',
          submit_data: {
            legal_person: { name: 'Zhang San', id_card_number: idNumber },
            bank_account: '6222020200012345678',
          },
        },
      }),
    );
    expect(applied.code).toBe('success');
    const workflowId = applicationWorkflowId(applied.data!.application_id);
    await until('the application finished', async () => {
      const d = await stack.client.workflow.getHandle(workflowId).describe();
      return d.status.name === 'COMPLETED' ? true : undefined;
    });
    const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
    const text = readableText(history);
    expect(text).not.toContain(idNumber);
    expect(text).not.toContain('6222020200012345678');
    // The workflow never carries submit_data (its activity reads the sealed row): decoded, the
    // history is the application's progress, still without the applicant's data.
    const opened = await new EncryptionCodec(stack.payloadKeys.keyring).decode(payloadsOf(history));
    const openedText = opened.map((p) => Buffer.from(p.data ?? []).toString('utf8')).join('\n');
    expect(openedText).toContain(applied.data!.application_id);
    expect(openedText).toContain('"status":"finished"');
    expect(openedText).not.toContain(idNumber);
  });

  test("when the Temporal CLI shows an order's history, then without the codec server it shows ciphertext, and through the codec server with the operator token it shows the order", async () => {
    const subject = `CLI subject ${randomUUID()}`;
    const merchantOrderNo = `M-${randomUUID()}`;
    await pay.create({ merchant_order_no: merchantOrderNo, subject });
    const show = async (...extra: string[]) =>
      (
        await run(
          globalState().cliPath,
          [
            'workflow',
            'show',
            '--workflow-id',
            orderWorkflowId(app.app_id, merchantOrderNo),
            '--address',
            globalState().temporalAddress,
            '--namespace',
            'default',
            '--output',
            'json',
            ...extra,
          ],
          { maxBuffer: 32 * 1024 * 1024 },
        )
      ).stdout;
    // The CLI prints each payload's metadata and data in base64: read them as a person would.
    const payloadsShown = (json: string) => {
      const shown: unknown = JSON.parse(json);
      return payloadsAt(shown)
        .filter(({ at }) => !writtenByTemporal(shown, at))
        .map(({ payload }) => ({
          encoding: Buffer.from(String(payload.metadata!.encoding), 'base64').toString(),
          text: Buffer.from(String(payload.data ?? ''), 'base64').toString('latin1'),
        }));
    };
    const plain = payloadsShown(await show());
    expect(plain.length).toBeGreaterThan(2);
    expect(new Set(plain.map((p) => p.encoding))).toEqual(new Set(['binary/encrypted']));
    expect(plain.some((p) => p.text.includes(subject))).toBe(false);
    const decoded = payloadsShown(
      await show('--codec-endpoint', `${stack.baseUrl}/codec`, '--codec-auth', `Bearer ${stack.codecToken}`),
    );
    expect(decoded.some((p) => p.encoding === 'json/plain' && p.text.includes(subject))).toBe(true);
    // A wrong token decodes nothing.
    await expect(
      show(
        '--codec-endpoint',
        `${stack.baseUrl}/codec`,
        '--codec-auth',
        'Bearer not-the-token-at-all-000000',
      ),
    ).rejects.toThrow();
  });
});

describe('the codec server', () => {
  const sealedBody = async (value: unknown) => {
    const [sealed] = await new EncryptionCodec(stack.payloadKeys.keyring).encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) },
    ]);
    return {
      payloads: [
        {
          metadata: Object.fromEntries(
            Object.entries(sealed!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
          ),
          data: Buffer.from(sealed!.data!).toString('base64'),
        },
      ],
    };
  };
  const call = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${stack.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const dataOf = async (res: Response) =>
    ((await res.json()) as { payloads: { data: string }[] }).payloads.map((p) =>
      Buffer.from(p.data, 'base64').toString(),
    );

  test('when /codec/decode is called without the operator token or with a wrong one, then it answers 401 and decodes nothing', async () => {
    const body = await sealedBody({ subject: 'hidden' });
    const none = await call('/codec/decode', body);
    expect(none.status).toBe(401);
    expect(await none.text()).not.toContain('hidden');
    const wrong = await call('/codec/decode', body, { authorization: 'Bearer wrong-token-wrong-token-000' });
    expect((await envelope(wrong)).code).toBe('unauthorized');
    const cookie = await call('/codec/decode', body, { cookie: 'durapay_codec=forged' });
    expect(cookie.status).toBe(401);
  });

  test('when /codec/decode is called with the token, then it opens sealed payloads and passes others through; /codec/encode seals', async () => {
    const auth = { authorization: `Bearer ${stack.codecToken}`, 'x-namespace': 'default' };
    const decoded = await call('/codec/decode', await sealedBody({ subject: 'Oolong' }), auth);
    expect(decoded.status).toBe(200);
    expect(await dataOf(decoded)).toEqual(['{"subject":"Oolong"}']);
    const plain = {
      payloads: [
        {
          metadata: { encoding: Buffer.from('json/plain').toString('base64') },
          data: Buffer.from('1').toString('base64'),
        },
      ],
    };
    expect(await dataOf(await call('/codec/decode', plain, auth))).toEqual(['1']);
    const encoded = (await (await call('/codec/encode', plain, auth)).json()) as {
      payloads: { metadata: Record<string, string>; data: string }[];
    };
    expect(Buffer.from(encoded.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe(
      'binary/encrypted',
    );
    expect(await dataOf(await call('/codec/decode', encoded, auth))).toEqual(['1']);
  });

  test('when the body is not a list of payloads, then it answers 400 naming what is wrong', async () => {
    const auth = { authorization: `Bearer ${stack.codecToken}` };
    expect((await envelope(await call('/codec/decode', { nope: 1 }, auth))).message).toBe(
      '"payloads" must be an array',
    );
    const bad = await call('/codec/decode', { payloads: [{ metadata: { encoding: 5 } }] }, auth);
    expect([bad.status, (await envelope(bad)).message]).toEqual([
      400,
      '"payloads[0].metadata.encoding" must be base64',
    ]);
  });

  test("when the UI's origin sends a preflight, then it is allowed with credentials; another origin is refused", async () => {
    const ui = globalState().temporalUiUrl;
    const ok = await fetch(`${stack.baseUrl}/codec/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: ui,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ui);
    expect(ok.headers.get('access-control-allow-credentials')).toBe('true');
    expect(ok.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/i);
    const evil = await fetch(`${stack.baseUrl}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('when an operator signs in with the token, then the session cookie decodes; a wrong token is refused, and ten wrong tokens or sessions in a minute refuse the address', async () => {
    // A codec server of its own, so that this test's wrong tokens count alone.
    const token = 'a-token-of-this-test-only-0123456789';
    const server = express()
      .use(
        codecRoutes({
          codec: new EncryptionCodec(stack.payloadKeys.keyring),
          token,
          corsOrigins: [],
          secureCookie: false,
          logger: captureLogger().logger,
        }),
      )
      .listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const signIn = (value: string) =>
      fetch(`${base}/codec/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: value }).toString(),
      });
    const decode = async (headers: Record<string, string>) =>
      fetch(`${base}/codec/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(await sealedBody('tea')),
      });
    try {
      const ok = await signIn(token);
      expect(ok.status).toBe(200);
      const setCookie = ok.headers.get('set-cookie')!;
      expect(setCookie).toMatch(
        /^durapay_codec=\d+\.[A-Za-z0-9_-]+; Max-Age=43200; Path=\/codec; Expires=.*; HttpOnly; SameSite=Strict$/,
      );
      expect(setCookie).not.toContain(token);
      const session = setCookie.split(';')[0]!;
      const decoded = await decode({ cookie: session });
      expect(decoded.headers.get('cache-control')).toBe('no-store');
      expect(await dataOf(decoded)).toEqual(['"tea"']);
      // The session's end is the server's to check: an altered end does not verify.
      const [name, value] = session.split('=') as [string, string];
      const later = `${name}=${Number(value.split('.')[0]) + 1000}.${value.split('.')[1]}`;
      expect((await decode({ cookie: later })).status).toBe(401);

      expect((await signIn('wrong-wrong-wrong-wrong-wrong')).status).toBe(401);
      const statuses = [];
      for (let i = 0; i < 8; i++) {
        statuses.push((await decode({ authorization: `Bearer wrong-${i}-wrong-wrong-wrong-wrong` })).status);
      }
      // With the altered session and the wrong sign-in, ten failures in the minute: refused.
      expect(statuses).toEqual(Array(8).fill(401));
      const refused = await decode({ authorization: `Bearer ${token}` });
      expect([refused.status, (await envelope(refused)).code]).toEqual([429, 'rate_limited']);
      expect((await signIn(token)).status).toBe(429);
    } finally {
      server.close();
    }
  });

  describe('lockout behind a proxy', () => {
    const token = 'the-operators-codec-token-0123456789';
    /** A decode call as a proxy in front of the API would pass it on, for the client `forwardedFor`. */
    const decodeVia = async (baseUrl: string, forwardedFor: string | undefined, bearer: string) =>
      (
        await fetch(`${baseUrl}/codec/decode`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${bearer}`,
            ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
          },
          body: JSON.stringify(await sealedBody('tea')),
        })
      ).status;

    test('when TRUST_PROXY names the proxy and one client behind it sends ten wrong tokens, then an operator behind the same proxy still decodes, and that client is refused', async () => {
      const api = await startProductionApi(stack, { DURAPAY_CODEC_TOKEN: token, TRUST_PROXY: 'loopback' });
      try {
        const bad: number[] = [];
        for (let i = 0; i < 10; i++) {
          bad.push(await decodeVia(api.baseUrl, '203.0.113.5', `stale-${i}-token-of-a-bad-client-000`));
        }
        expect(bad).toEqual(Array(10).fill(401));
        expect(await decodeVia(api.baseUrl, '198.51.100.7', token)).toBe(200);
        // The bad client's address is what is refused, even with the right token now.
        expect(await decodeVia(api.baseUrl, '203.0.113.5', token)).toBe(429);
        // A client cannot step out of its address by naming another before it: the proxy's entry counts.
        expect(await decodeVia(api.baseUrl, '192.0.2.1, 203.0.113.5', token)).toBe(429);
      } finally {
        await api.stop();
      }
    });

    test('when a guesser rotates its address, then ten wrong tokens with one prefix refuse that prefix from any address, and an operator with another token still decodes', async () => {
      const api = await startProductionApi(stack, {
        DURAPAY_CODEC_TOKEN: token,
        TRUST_PROXY: '127.0.0.1/32',
      });
      try {
        const guesses: number[] = [];
        for (let i = 0; i < 10; i++) {
          guesses.push(
            await decodeVia(api.baseUrl, `203.0.113.${10 + i}`, `guessing-${i}-the-operators-token-0000`),
          );
        }
        expect(guesses).toEqual(Array(10).fill(401));
        expect(await decodeVia(api.baseUrl, '203.0.113.99', 'guessing-99-the-operators-token-000')).toBe(429);
        expect(await decodeVia(api.baseUrl, '198.51.100.7', token)).toBe(200);
      } finally {
        await api.stop();
      }
    });

    test('when TRUST_PROXY is not set, then X-Forwarded-For is not believed: rotating it escapes nothing', async () => {
      const api = await startProductionApi(stack, { DURAPAY_CODEC_TOKEN: token });
      try {
        const guesses: number[] = [];
        for (let i = 0; i < 10; i++) {
          guesses.push(
            await decodeVia(api.baseUrl, `203.0.113.${10 + i}`, `guess-${i}-of-a-rotating-client-0000`),
          );
        }
        expect(guesses).toEqual(Array(10).fill(401));
        expect(await decodeVia(api.baseUrl, '198.51.100.7', token)).toBe(429);
      } finally {
        await api.stop();
      }
    });
  });

  test('when no operator token is configured, then the codec server decodes nothing and says how to turn it on', async () => {
    const server = express()
      .use(
        codecRoutes({
          codec: new EncryptionCodec(stack.payloadKeys.keyring),
          corsOrigins: [],
          secureCookie: false,
          logger: captureLogger().logger,
        }),
      )
      .listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const res = await fetch(
        `http://127.0.0.1:${(server.address() as { port: number }).port}/codec/decode`,
        {
          method: 'POST',
          headers: { authorization: 'Bearer anything-anything-anything', 'content-type': 'application/json' },
          body: JSON.stringify(await sealedBody('x')),
        },
      );
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toMatch(/set DURAPAY_CODEC_TOKEN/);
    } finally {
      server.close();
    }
  });
});

describe('payload keys', () => {
  test('when keys rotate in the middle of an order, then the worker with the new current key finishes it and the history holds both keys', async () => {
    const oldKeys = stack.payloadKeys.env;
    const rotated = `${newPayloadKeyEntry('rotated-2')},${oldKeys}`;
    const taskQueue = uniqueName('tq-rotate');
    const client = (keys: string) =>
      new Client({
        connection: stack.connection,
        namespace: 'default',
        dataConverter: sealedDataConverter(parsePayloadKeys(keys, 'test')),
      });
    const env = {
      DATABASE_URL: stack.database.url,
      DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
      PUBLIC_BASE_URL: stack.baseUrl,
      SANDBOX_SECRET: stack.sandboxSecret,
      DURAPAY_TIME_SCALE: '0.0001',
    };

    // Before: the API and a worker with the old key alone; the order is created and pending.
    const before = await serveApi(stack, { taskQueue, client: client(oldKeys) });
    const first = spawnWorker(taskQueue, { ...env, DURAPAY_PAYLOAD_KEYS: oldKeys });
    let second: ReturnType<typeof spawnWorker> | undefined;
    let after: Awaited<ReturnType<typeof serveApi>> | undefined;
    try {
      await first.ready;
      const merchantOrderNo = `M-${randomUUID()}`;
      const own = paymentsClient({ ...stack, baseUrl: before.baseUrl }, app, receiver);
      const created = await own.create({ merchant_order_no: merchantOrderNo, expire_minutes: 1440 });
      await first.stop();

      // After: both with the new key current and the old one listed; the buyer pays, a refund follows.
      after = await serveApi(stack, { taskQueue, client: client(rotated) });
      second = spawnWorker(taskQueue, { ...env, DURAPAY_PAYLOAD_KEYS: rotated });
      await second.ready;
      const own2 = paymentsClient({ ...stack, baseUrl: after.baseUrl }, app, receiver);
      await own2.buyerPays(created.pay_credential.pay_url);
      await own2.statusIs(created.trade_no, 'paid');
      const refund = await own2.post('/api/v1/pay/refund', {
        trade_no: created.trade_no,
        refund_amount: 100,
      });
      expect(refund.code).toBe('success');
      await own2.statusIs(created.trade_no, 'refunded');

      const history = await stack.client.workflow
        .getHandle(orderWorkflowId(app.app_id, merchantOrderNo))
        .fetchHistory();
      const keyIds = new Set(
        payloadsOf(history)
          .filter(isEncryptedPayload)
          .map((p) => Buffer.from(p.metadata!['encryption-key-id']!).toString()),
      );
      expect([...keyIds].sort()).toEqual(['rotated-2', 'test-1']);
    } finally {
      await first.stop();
      await second?.stop();
      await before.close();
      await after?.close();
    }
  });

  test('when a worker starts without a key that sealed data, or with another key under its id, then it refuses naming the key; retiring it waits until no row needs it', async () => {
    // The tests' key has sealed this database's histories and applicant data (the application
    // above), as every API and worker process records it.
    const tests = stack.payloadKeys.keyring.current;
    const merchant = await signedFetch(stack.baseUrl, app, 'POST', '/api/v1/merchant', {
      json: {
        merchant_id: `m-${randomUUID().slice(0, 8)}`,
        merchant_name: 'Keys Tea',
        bank_account: '6222020200099990000',
      },
    });
    expect(merchant.status).toBe(200);
    await stack.database.db.sequelize.query(
      'INSERT INTO payload_keys (key_id, check_value) VALUES (:id, :check) ON CONFLICT (key_id) DO NOTHING',
      { replacements: { id: tests.id, check: keyCheckValue(tests.key) } },
    );
    const fresh = newPayloadKeyEntry('fresh-9');
    const env = (keys: string) => ({
      DATABASE_URL: stack.database.url,
      DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
      DURAPAY_PAYLOAD_KEYS: keys,
    });
    const refusal = async (keys: string) => {
      const worker = spawnWorker(uniqueName('tq-keys'), env(keys));
      return worker.ready.then(
        async () => {
          await worker.stop();
          return 'started';
        },
        (err: Error) => err.message,
      );
    };

    const missing = await refusal(fresh);
    expect(missing).toMatch(
      /test-1.* sealed data this service keeps \(workflow histories, applicant data\) but .*missing from DURAPAY_PAYLOAD_KEYS/,
    );
    // Key ids only: no key material in what it says.
    expect(missing).not.toContain(fresh.split(':')[1]!);
    const impostor = await refusal(`${fresh},${newPayloadKeyEntry('test-1')}`);
    expect(impostor).toMatch(/gives test-1 a different key than the one that sealed data under that id/);
    // Neither refused process recorded its key.
    const [recorded] = await stack.database.db.sequelize.query(
      "SELECT 1 FROM payload_keys WHERE key_id = 'fresh-9'",
    );
    expect(recorded).toEqual([]);

    // Other keys of this file's tests sealed histories only (say they aged out).
    const [rows] = await stack.database.db.sequelize.query(
      "SELECT key_id FROM payload_keys WHERE retired_at IS NULL AND key_id NOT IN ('fresh-9', 'test-1')",
    );
    for (const { key_id } of rows as { key_id: string }[]) {
      expect(await retirePayloadKey(stack.database.db, key_id, 'fresh-9')).toBe(true);
    }
    // Rotating: the new key first, the old one listed; the rows still sealed with the old key keep
    // it from being retired until they are sealed again.
    const both = `${fresh},${stack.payloadKeys.env}`;
    const cli = (...args: string[]) =>
      run(process.execPath, [durapayBin(), 'keys', ...args], {
        env: { ...process.env, ...env(both), LOG_LEVEL: 'error' },
      });
    const early = await cli('retire', 'test-1').then(
      () => 'retired',
      (err: { stderr: string }) => err.stderr,
    );
    expect(early).toMatch(
      /payload key test-1 still opens applicant data in [1-9]\d* row\(s\): run `durapay keys reseal --rotate` first/,
    );
    expect((await cli('reseal', '--rotate')).stderr).toMatch(
      /sealed [1-9]\d* merchant\(s\) and \d+ application\(s\) with payload key fresh-9/,
    );
    expect((await cli('retire', 'test-1')).stderr).toMatch(/payload key test-1 retired/);

    expect(await refusal(fresh)).toBe('started');
  });
});
