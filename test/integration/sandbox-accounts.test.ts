/**
 * The sandbox adapter confirming a claimed sub_merchant_no with the simulator (on a real
 * Postgres), over signed HTTP: the numbers its onboarding issues and any made-up one are this
 * platform's, a number starting `foreign` is refused with the simulator's reason.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createSandboxRouter } from '../../sandbox';
import { Background } from '../../sandbox/background';
import { SandboxChannel } from '../../src/channels/sandbox';
import { ChannelError, type ChannelErrorKind } from '../../src/channels/errors';
import { captureLogger, createTestDatabase, type TestDatabase } from '../support/harness';
import { freePort } from '../support/ports';

jest.setTimeout(60_000);

const SECRET = `sbx_${randomBytes(16).toString('hex')}`;

let database: TestDatabase;
let server: http.Server;
let origin = '';
let background: Background;
const channels: SandboxChannel[] = [];

function adapter(options: { baseUrl?: string; secret?: string } = {}): SandboxChannel {
  const channel = new SandboxChannel({
    baseUrl: `${origin}/sandbox`,
    secret: SECRET,
    timeoutMs: 3_000,
    ...options,
  });
  channels.push(channel);
  return channel;
}

async function refusal(promise: Promise<unknown>): Promise<ChannelError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ChannelError)) throw new Error(`expected a ChannelError, got ${String(err)}`);
  return err;
}

beforeAll(async () => {
  database = await createTestDatabase();
  const { logger } = captureLogger();
  background = new Background((err) => logger.error('sandbox task failed', { error: String(err) }));
  const app = express();
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  app.use(
    '/sandbox',
    createSandboxRouter({
      db: database.db,
      secret: SECRET,
      publicBaseUrl: origin,
      refundDelayMs: 200,
      logger,
      background,
    }),
  );
});

afterAll(async () => {
  await Promise.all(channels.map((c) => c.close()));
  background.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await database.drop();
});

describe('confirming a sub_merchant_no', () => {
  test('when the number was issued by the sandbox’s onboarding, then it is confirmed as the account number', async () => {
    const channel = adapter();
    const applicationId = `app-${randomBytes(6).toString('hex')}`;
    const merchant = { merchantId: 'm-1', merchantName: 'Tea House' };
    await channel.onboarding.submit({}, { applicationId, merchant, submitData: {} });
    await channel.onboarding.query({}, applicationId);
    const finished = await channel.onboarding.query({}, applicationId);
    expect(finished.subMerchantNo).toMatch(/^SBXM/);
    await expect(
      channel.accounts.confirm({}, { kind: 'sub_merchant_no', value: finished.subMerchantNo! }),
    ).resolves.toEqual({ accountNo: finished.subMerchantNo });
  });

  test('when the number is made up and does not start with foreign, then it is confirmed, so that demos can attach any', async () => {
    await expect(
      adapter().accounts.confirm({}, { kind: 'sub_merchant_no', value: 'demo merchant/42' }),
    ).resolves.toEqual({ accountNo: 'demo merchant/42' });
  });

  test('when the number starts with foreign, then it is refused with the sandbox’s reason', async () => {
    const err = await refusal(
      adapter().accounts.confirm({}, { kind: 'sub_merchant_no', value: 'foreign-1' }),
    );
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toBe('sub-merchant foreign-1 does not belong to this platform');
  });

  test('when the claim is not a sub_merchant_no, then it is refused', async () => {
    const err = await refusal(adapter().accounts.confirm({}, { kind: 'sub_mchid', value: '1900000109' }));
    expect(err.kind).toBe<ChannelErrorKind>('refused');
  });

  test('when the request is not signed with the sandbox’s secret, then nothing is confirmed', async () => {
    const err = await refusal(
      adapter({ secret: 'not-the-secret' }).accounts.confirm({}, { kind: 'sub_merchant_no', value: 'SBXM1' }),
    );
    expect(err.kind).toBe<ChannelErrorKind>('refused');
    expect(err.message).toMatch(/signature/i);
  });

  test('when the sandbox cannot be reached, then the confirmation is unreachable, not refused', async () => {
    const closed = adapter({ baseUrl: `http://127.0.0.1:${await freePort()}/sandbox` });
    const err = await refusal(closed.accounts.confirm({}, { kind: 'sub_merchant_no', value: 'SBXM1' }));
    expect(err.kind).toBe<ChannelErrorKind>('unreachable');
  });
});
