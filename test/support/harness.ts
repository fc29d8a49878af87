/**
 * Per-test-file infrastructure on top of the global setup: a fresh database cloned from the
 * migrated template, a Temporal client, an in-process worker on a task queue of its own, and
 * the API listening on a random port. Everything is real; nothing is mocked.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import { PassThrough } from 'node:stream';
import { Client as PgClient } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createApp } from '../../src/api/app';
import { listenApi } from '../../src/api/http-server';
import { authDeps, probeConnection, readinessProbes } from '../../src/api/server';
import { listenForAppChanges } from '../../src/modules/apps';
import { PAYMENT_POLL_SCHEDULE_MS, PaymentSweeper, sweepTickMs } from '../../src/modules/orders';
import { scaleDuration } from '../../src/platform/durations';
import { attemptCounter } from './attempts';
import type { AuthDeps } from '../../src/modules/apps/authenticate';
import type { ApiServices } from '../../src/api/services';
import type { ActivitiesDeps as ActivityDeps } from '../../src/activities';
import type { Scope } from '../../src/modules/apps/rules';
import type { AppCredentials } from '../../src/modules/apps/repository';
import { connectDatabase, databaseUrlFor, type Database } from '../../src/platform/db';
import { channelDescriptor, createChannelRegistry, type ChannelFactory } from '../../src/channels/registry';
import { sandboxChannelFactory } from '../../src/channels/sandbox';
import { createSandboxRouter } from '../../sandbox';
import { SandboxControls } from '../../sandbox/controls';
import { Background } from '../../sandbox/background';
import {
  OFFLINE_UPSTREAMS,
  type AnyOfflineUpstream,
  type ListedUpstream,
  type OfflineUpstream,
  type RunningUpstream,
} from '../../sandbox/upstreams';
import { loadConfig } from '../../src/config';
import { freePort } from './ports';
import { createLogger, type Logger } from '../../src/platform/logger';
import { WinstonTemporalLogger } from '../../src/platform/temporal';
import { bundleWorkflows, createWorker } from '../../src/worker';
import type { Tracing } from '../../src/platform/tracing';
import { globalState } from './state';
import { parsePayloadKeys, type Keyring } from '../../src/platform/crypto/keyring';
import { sealedDataConverter } from '../../src/platform/data-converter';
import { EncryptionCodec } from '../../src/platform/payload-codec';
import { responseConformance } from './openapi-conformance';

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export interface TestDatabase {
  name: string;
  url: string;
  db: Database;
  drop(): Promise<void>;
}

/** A database of this test file's own, already migrated (cloned from the template). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const state = globalState();
  const name = `${state.template}_${randomBytes(5).toString('hex')}`;
  const admin = new PgClient({ connectionString: state.adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${state.template}"`);
  } finally {
    await admin.end();
  }
  const url = databaseUrlFor(state.adminUrl, name);
  const db = connectDatabase(url, { poolMax: 5 });
  return {
    name,
    url,
    db,
    async drop() {
      await db.close();
      const a = new PgClient({ connectionString: state.adminUrl });
      await a.connect();
      try {
        await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** A logger whose JSON lines are kept in memory, so tests can read what was logged. */
export function captureLogger(level = 'debug'): { logger: Logger; lines: () => string[] } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => {
    const text = c.toString();
    chunks.push(text);
    // A 500 nobody expected is worth seeing where it happened, even when a test counts only
    // answers (the races): the error and its stack, as the API logged them.
    if (text.includes('"message":"unexpected error"')) process.stderr.write(`[api] ${text}`);
  });
  const logger = createLogger({ level, stream, defaultMeta: { service: 'durapay-test' } });
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

let runtimeInstalled = false;
function quietRuntime(logger: Logger): void {
  if (runtimeInstalled) return;
  try {
    Runtime.install({ logger: new WinstonTemporalLogger(logger) });
  } catch {
    // Already installed by an earlier test file in this process.
  }
  runtimeInstalled = true;
}

type KeysOf<U> = U extends OfflineUpstream<string, infer K, RunningUpstream, object> ? K : never;
type RunningOf<U> = U extends OfflineUpstream<string, unknown, infer S, object> ? S : never;
type OwnOptionsOf<U> = U extends OfflineUpstream<string, unknown, RunningUpstream, infer O> ? O : never;

/** What a test may say of a channel it adds against its offline upstream. */
export interface UpstreamStackOptions {
  /** Multiplies the upstream's delays; 0.01 for WeChat Pay and 0.001 for the others unless set. */
  timeScale?: number;
  /** How long a slow refund stays processing at the upstream, before timeScale; 200 ms unless set. */
  refundDelayMs?: number;
  /**
   * Settings of the channel's adapter that no variable sets, over what its variables say
   * (WeChat Pay: `certificateRefreshGapMs`, so that a rotated certificate is fetched at once).
   */
  adapter?: Record<string, unknown>;
}

/**
 * For every channel with an offline upstream (wechatpay, alipay): adds the channel, against its
 * upstream mounted in this stack's API at its path (/wechatpay, /alipay), with the adapter its
 * settings give, as the configuration reads them.
 */
type StackUpstreamOptions = {
  [U in ListedUpstream as U['code']]?: UpstreamStackOptions & OwnOptionsOf<U>;
};

/** A channel's offline upstream in a stack: its keys, where it is mounted, and the upstream (to read its state). */
type StackUpstreams = {
  [U in ListedUpstream as U['code']]?: { keys: KeysOf<U>; baseUrl: string; sandbox: RunningOf<U> };
};

/** Delays of the WeChat Pay sandbox's refunds and callbacks, which its tests wait on, run at 1/100. */
const UPSTREAM_TIME_SCALE: Record<string, number> = { wechatpay: 0.01 };

export interface StackOptions extends StackUpstreamOptions {
  rateLimit?: { perSecond: number; burst: number };
  /** Unscaled gaps between notification attempts, and one attempt's deadline. */
  notifications?: { retryScheduleMs: number[]; timeoutMs: number };
  timeScale?: number;
  guardAddresses?: boolean;
  sandboxRefundDelayMs?: number;
  /** Emulates a channel whose per-order limit is below 10^12. */
  sandboxMaxAmount?: number;
  /**
   * Traces the stack: the API's requests, its Temporal client and the worker (whose workflows are
   * then bundled with the tracing interceptors, once per test file), into `installTracing`'s
   * destination. The caller installs it first and shuts it down after `stop`.
   */
  tracing?: Tracing;
  /** The stack's payload keys (DURAPAY_PAYLOAD_KEYS form); the test run's shared ones by default. */
  payloadKeys?: string;
  /** From payment to profit sharing, before scaling (production's 60 s by default). */
  profitShareDelayMs?: number;
  /** How long a paid order idles before its run ends, before scaling (production's 10 minutes by default). */
  orderIdleEndMs?: number;
  /** How long a barcode payment is followed before it is reversed, before scaling (production's 60 s by default). */
  barcodeWaitMs?: number;
  /** How long the sandbox's `confirms_later` buyer takes to confirm (its simulator's 1 s by default). */
  sandboxBuyerConfirmMs?: number;
  /**
   * The limit on callbacks that fail verification, per source address (every test's callbacks
   * come from 127.0.0.1), and the clock it refills by: a test that holds the clock still counts
   * exactly what the limit lets through.
   */
  callbackRateLimit?: { perSecond: number; now?: () => number };
}

let tracingBundle: Promise<string> | undefined;

/** The workflows bundled with the tracing interceptors (the diagnostic ones too), once per test file. */
export function tracingWorkflowBundle(): Promise<string> {
  return (tracingBundle ??= bundleWorkflows(createLogger({ level: 'warn' }), {
    diagnostics: true,
    tracing: true,
  }));
}

/**
 * One channel call's deadline in tests: production's (API_REQUEST_TIMEOUT_MS less 2 s), so that
 * the races run with the timing they will meet.
 */
const CHANNEL_TIMEOUT_MS = 8_000;

/**
 * A channel's adapters from its settings given as variables (WECHATPAY_*), read by the channel's
 * own settings and configured by its descriptor as `npm start` would (deadlines from the API's
 * 10 s), with `adapter` over them.
 */
function channelFromSettings(
  code: string,
  variables: Record<string, string>,
  adapter: Record<string, unknown> = {},
): ChannelFactory {
  const descriptor = channelDescriptor(code);
  const settings = descriptor?.settings?.read((key) => variables[key], process.cwd());
  const core = loadConfig({});
  const factory =
    descriptor && settings !== undefined
      ? descriptor.fromConfig(core, { ...settings, ...adapter }, randomBytes(32))
      : undefined;
  if (!factory) throw new Error(`the ${code} channel is not configured by its upstream's settings`);
  return factory;
}

/** SPEC §6's schedule at 1/10 000 of real time: 0.5 ms … 3.6 s, about 10 s in all. */
export const TEST_TIME_SCALE = 0.0001;

export interface TestStack extends StackUpstreams {
  taskQueue: string;
  /** The key this stack's secrets are encrypted under (pass it as DURAPAY_MASTER_KEY to the CLI). */
  masterKey: Buffer;
  /** The keys that seal this stack's payloads and applicant data; `env` is DURAPAY_PAYLOAD_KEYS. */
  payloadKeys: { keyring: Keyring; env: string };
  /** The codec server's operator token (`/codec/*`). */
  codecToken: string;
  auth: AuthDeps;
  services: ApiServices;
  /** The secret the sandbox simulator and its adapter share (to sign callbacks in tests). */
  sandboxSecret: string;
  /** What the test steers in the sandbox simulator: statements held back, lost payments released. */
  sandboxControls: SandboxControls;
  /**
   * Resolves once the sandbox simulator has nothing due or running for the order (its callbacks
   * sent and answered, its refunds settled); for every order, without one.
   */
  sandboxIdle(tradeNo?: string): Promise<void>;
  /** How many attempts of an activity type this stack's worker ran for a workflow. */
  activityAttempts(workflowId: string, activityType: string): number;
  /** The dependencies the worker's activities run with (to call an activity function directly). */
  activityDeps: ActivityDeps;
  /** A new app of this stack's database, with its plaintext credentials. */
  createApp(scopes?: Scope[], name?: string): Promise<AppCredentials>;
  database: TestDatabase;
  client: Client;
  connection: Connection;
  worker: Worker;
  /** The payment sweeper beside the worker: polls pending orders in batches. */
  sweeper: PaymentSweeper;
  baseUrl: string;
  server: Server;
  logs: () => string[];
  stop(): Promise<void>;
}

export async function startTestStack(options: StackOptions = {}): Promise<TestStack> {
  const state = globalState();
  const { logger, lines } = captureLogger();
  quietRuntime(createLogger({ level: 'warn' }));
  const taskQueue = uniqueName('tq');
  const database = await createTestDatabase();

  const payloadKeysEnv = options.payloadKeys ?? state.payloadKeys;
  const payloadKeys = parsePayloadKeys(payloadKeysEnv, 'the test payload keys');
  const codecToken = randomBytes(24).toString('base64url');
  const connection = await Connection.connect({ address: state.temporalAddress });
  const client = new Client({
    connection,
    namespace: 'default',
    dataConverter: sealedDataConverter(payloadKeys),
    ...(options.tracing ? { interceptors: options.tracing.clientInterceptors } : {}),
  });
  const nativeConnection = await NativeConnection.connect({ address: state.temporalAddress });
  const masterKey = randomBytes(32);
  // Generous by default so that only the rate-limit tests meet the limit.
  const auth = authDeps(database.db, masterKey, options.rateLimit ?? { perSecond: 10_000, burst: 10_000 });
  // As in the API process: apps cached while their changes are heard.
  const stopListening = listenForAppChanges(database.db, auth.appLookup, logger);
  const notifications = options.notifications ?? loadConfig({}).notifications;
  // The API listens on a port chosen now, so that channel callbacks and the sandbox's URLs
  // can be configured before anything starts.
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  responseConformance().register(baseUrl);
  const sandboxSecret = randomBytes(16).toString('hex');
  // The contracts' calendar runs at the stack's scale, the same for durapay and its upstreams.
  const contractClock = { originMs: Date.now(), scale: options.timeScale ?? TEST_TIME_SCALE };
  // Each offline upstream the test asked for, and its channel's adapter built from the settings
  // that point durapay at it, read and configured as the configuration does.
  const upstreams = (OFFLINE_UPSTREAMS as readonly AnyOfflineUpstream[]).flatMap((upstream) => {
    const asked = (options as Record<string, (UpstreamStackOptions & Record<string, unknown>) | undefined>)[
      upstream.code
    ];
    if (!asked) return [];
    const { timeScale, refundDelayMs, adapter, ...own } = asked;
    const keys = upstream.keys.generate();
    const url = `${baseUrl}${upstream.path}`;
    const running = upstream.create({
      keys,
      publicBaseUrl: url,
      timeScale: timeScale ?? UPSTREAM_TIME_SCALE[upstream.code] ?? 0.001,
      refundDelayMs: refundDelayMs ?? 200,
      logger: logger.child({ component: `${upstream.code}-sandbox` }),
      contractClock,
      ...own,
    });
    const channel = channelFromSettings(upstream.code, upstream.settings(keys, url, undefined, own), adapter);
    return [{ code: upstream.code, path: upstream.path, keys, url, running, channel }];
  });
  const channels = createChannelRegistry([
    sandboxChannelFactory({
      default: {
        baseUrl: `${baseUrl}/sandbox`,
        secret: sandboxSecret,
        timeoutMs: CHANNEL_TIMEOUT_MS,
        maxAmount: options.sandboxMaxAmount,
      },
    }),
    ...upstreams.map((u) => u.channel),
  ]);
  const timeScale = options.timeScale ?? TEST_TIME_SCALE;
  const activityDeps: ActivityDeps = {
    db: database.db,
    logger,
    client,
    taskQueue,
    apps: auth.apps,
    notifications,
    timeScale,
    guardAddresses: options.guardAddresses ?? false,
    channels,
    payloadKeys,
    orders: {
      publicBaseUrl: baseUrl,
      defaultChannel: 'sandbox',
      profitShareDelayMs: options.profitShareDelayMs ?? 60_000,
      orderIdleEndMs: options.orderIdleEndMs ?? 600_000,
      ...(options.barcodeWaitMs === undefined ? {} : { barcodeWaitMs: options.barcodeWaitMs }),
      requestTimeoutMs: 10_000,
    },
  };
  const attempts = attemptCounter();
  const worker = await createWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    activities: activityDeps,
    workflowBundleCode: options.tracing
      ? await tracingWorkflowBundle()
      : fs.readFileSync(state.bundlePath, 'utf8'),
    options: { shutdownGraceTime: '1 second', interceptors: { activity: [attempts.interceptor] } },
    tracing: options.tracing,
  });
  const running = worker.run();
  // Pending orders' polls, as beside every worker process.
  const sweeper = new PaymentSweeper({
    db: database.db,
    client,
    channels,
    logger,
    payloadKeys,
    tickMs: sweepTickMs(PAYMENT_POLL_SCHEDULE_MS.map((ms) => scaleDuration(ms, timeScale))),
  });
  sweeper.start();

  const probe = probeConnection(state.temporalAddress);
  const services: ApiServices = {
    db: database.db,
    client,
    taskQueue,
    notifications,
    timeScale,
    channels,
    publicBaseUrl: baseUrl,
    defaultChannel: 'sandbox',
    profitShareDelayMs: options.profitShareDelayMs ?? 60_000,
    orderIdleEndMs: options.orderIdleEndMs ?? 600_000,
    ...(options.barcodeWaitMs === undefined ? {} : { barcodeWaitMs: options.barcodeWaitMs }),
    requestTimeoutMs: 10_000,
    payloadKeys,
    // The contracts' calendar runs at the stack's scale, the same for durapay and its sandbox.
    contractClock,
  };
  const sandboxControls = new SandboxControls();
  const sandboxBackground = new Background((err) =>
    logger.error('sandbox task failed', { error: err instanceof Error ? err.message : String(err) }),
  );
  const app = createApp({
    logger,
    readiness: readinessProbes(database.db, probe),
    upstreams: Object.fromEntries(upstreams.map((u) => [u.path, u.running.router])),
    auth,
    services,
    // Generous by default so that only the tests of the limit meet it.
    callbackRateLimit: options.callbackRateLimit ?? { perSecond: 10_000 },
    codec: {
      codec: new EncryptionCodec(payloadKeys),
      token: codecToken,
      corsOrigins: [state.temporalUiUrl],
      secureCookie: false,
      logger,
    },
    sandbox: createSandboxRouter({
      db: database.db,
      secret: sandboxSecret,
      publicBaseUrl: baseUrl,
      refundDelayMs: options.sandboxRefundDelayMs ?? 200,
      callbackDelayMs: 500,
      ...(options.sandboxBuyerConfirmMs === undefined
        ? {}
        : { buyerConfirmMs: options.sandboxBuyerConfirmMs }),
      logger: logger.child({ component: 'sandbox' }),
      background: sandboxBackground,
      controls: sandboxControls,
      clock: contractClock,
    }),
  });
  const server = await listenApi(app, port, '127.0.0.1', logger, options.tracing);

  return {
    taskQueue,
    masterKey,
    payloadKeys: { keyring: payloadKeys, env: payloadKeysEnv },
    codecToken,
    auth,
    services,
    sandboxSecret,
    sandboxControls,
    sandboxIdle: (tradeNo) => sandboxBackground.idle(tradeNo),
    // Typed per upstream by StackUpstreams: each entry is the listed upstream's own keys and state.
    ...(Object.fromEntries(
      upstreams.map((u) => [u.code, { keys: u.keys, baseUrl: u.url, sandbox: u.running }]),
    ) as StackUpstreams),
    activityDeps,
    activityAttempts: attempts.count,
    createApp: (scopes = ['payments', 'merchants'], name = 'test') => auth.apps.create(name, scopes),
    database,
    client,
    connection,
    worker,
    sweeper,
    server,
    baseUrl,
    logs: lines,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const u of upstreams) u.running.close();
      sandboxBackground.close();
      await stopListening();
      await sweeper.stop();
      worker.shutdown();
      await running;
      await nativeConnection.close();
      await connection.close();
      await probe.close();
      await database.drop();
    },
  };
}

export interface ExtraApi {
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * The stack's API once more, on a port of its own, with some of its services changed: another
 * task queue (one no worker polls, or a worker process of the test's own), a shorter deadline,
 * a database that is gone.
 */
export async function serveApi(stack: TestStack, services: Partial<ApiServices>): Promise<ExtraApi> {
  const { logger } = captureLogger();
  const app = createApp({
    logger,
    readiness: readinessProbes(services.db ?? stack.database.db, stack.connection),
    auth: stack.auth,
    services: { ...stack.services, ...services },
  });
  const server = await listenApi(app, await freePort(), '127.0.0.1', logger);
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  responseConformance().register(baseUrl);
  return {
    baseUrl,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
