import type { Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';
import { ConfigError, requireDatabaseUrl, requireTemporalAddress } from '../platform/config';
import { channelsFromConfig } from '../channels/registry';
import { connectDatabase, type Database } from '../platform/db';
import {
  AppCache,
  AppRepository,
  NonceStore,
  RequestAdmission,
  listenForAppChanges,
  type AuthDeps,
} from '../modules/apps';
import { resolveMasterKey } from '../platform/crypto/master-key';
import { SecretBox } from '../platform/crypto/secret-box';
import { resolvePayloadKeys, type Keyring } from '../platform/crypto/keyring';
import { ensurePayloadKeys } from '../platform/crypto/key-registry';
import { resolveCodecToken } from '../platform/crypto/codec-token';
import { sealedDataConverter } from '../platform/data-converter';
import { EncryptionCodec } from '../platform/payload-codec';
import type { Logger } from '../platform/logger';
import { describeTracing, installTracing } from '../platform/tracing';
import { channelSandboxUpstreams, sandboxUpstream } from '../sandbox-hook';
import { ApiMetrics } from '../platform/metrics';
import { createApp } from './app';
import { listenApi } from './http-server';
import type { ReadinessProbes } from './health';

const PROBE_DEADLINE_MS = 2_000;

/**
 * A connection for readiness probes only: no retry interceptor, so a probe reports the state of
 * the server now instead of retrying in the background after its answer was given.
 */
export function probeConnection(address: string): Connection {
  return Connection.lazy({ address, interceptors: [], connectTimeout: PROBE_DEADLINE_MS });
}

export function readinessProbes(db: Database, temporal: Connection): ReadinessProbes {
  return {
    database: async () => {
      await db.sequelize.query('SELECT 1');
    },
    temporal: async () => {
      await temporal.withDeadline(Date.now() + PROBE_DEADLINE_MS, () =>
        temporal.workflowService.getSystemInfo({}),
      );
    },
  };
}

export function authDeps(
  db: Database,
  masterKey: Buffer,
  rateLimit: Config['rateLimit'],
): AuthDeps & { appLookup: AppCache } {
  const apps = new AppRepository(db, new SecretBox(masterKey));
  // Serves entries only while listenForAppChanges hears changes; until then it reads through.
  const appLookup = new AppCache(apps);
  apps.onChange = (appId) => appLookup.invalidate(appId);
  return {
    apps,
    appLookup,
    nonces: new NonceStore(db),
    admission: new RequestAdmission(db, rateLimit.perSecond, rateLimit.burst),
  };
}

export interface RunningApi {
  server: Server;
  stop(): Promise<void>;
}

/**
 * The production API process: Temporal is connected lazily, so it can start before Temporal answers;
 * the database must answer first, for the payload keys to be checked before anything is served.
 */
export async function runApi(config: Config, logger: Logger): Promise<RunningApi> {
  const masterKey = resolveMasterKey(config);
  const payloadKeys = resolvePayloadKeys(config);
  // Before anything calls out: the spans of the first requests have somewhere to go.
  const tracing = config.tracing ? installTracing(config.tracing, 'api', logger) : undefined;
  if (config.tracing) logger.info('tracing on', describeTracing(config.tracing));
  const db = connectDatabase(requireDatabaseUrl(config), { acquireTimeoutMs: 3_000 });
  const temporal = probeConnection(requireTemporalAddress(config));
  const auth = authDeps(db, masterKey, config.rateLimit);
  const stopListening = listenForAppChanges(db, auth.appLookup, logger);
  const business = Connection.lazy({ address: requireTemporalAddress(config) });
  // The offline channel upstreams, when enabled (development hook).
  const upstreams = channelSandboxUpstreams(config, logger);
  const metrics = new ApiMetrics();
  const app = createApp({
    logger,
    metrics,
    metricsAccess: { onApiPort: config.metrics.onApiPort, token: config.metrics.token },
    trustProxy: config.api.trustProxy,
    console: {
      settings: config.console,
      temporalUi: { url: config.temporal.uiUrl, namespace: config.temporal.namespace },
      timeZone: config.reconciliation.timeZone,
    },
    readiness: readinessProbes(db, temporal),
    auth,
    callbackRateLimit: { perSecond: config.callbacks.rateLimitPerSecond },
    services: {
      db,
      client: new Client({
        connection: business,
        namespace: config.temporal.namespace,
        dataConverter: sealedDataConverter(payloadKeys),
        ...(tracing ? { interceptors: tracing.clientInterceptors } : {}),
      }),
      payloadKeys,
      taskQueue: config.temporal.taskQueue,
      notifications: config.notifications,
      timeScale: config.timeScale,
      channels: channelsFromConfig(config, masterKey),
      publicBaseUrl: config.payments.publicBaseUrl,
      defaultChannel: config.payments.defaultChannel,
      profitShareDelayMs: config.payments.profitShareDelayMs,
      orderIdleEndMs: config.payments.orderIdleEndMs,
      barcodeWaitMs: config.payments.barcodeWaitMs,
      requestTimeoutMs: config.api.requestTimeoutMs,
    },
    codec: {
      codec: new EncryptionCodec(payloadKeys),
      token: resolveCodecToken(config),
      corsOrigins: config.codec.corsOrigins,
      secureCookie: config.payments.publicBaseUrl.startsWith('https:'),
      logger,
    },
    // Development hook: the simulated upstream, when the sandbox is enabled.
    sandbox: sandboxUpstream(config, masterKey, db, logger),
    upstreams,
  });
  // Nonces outlive their window by design; sweep expired ones so the table stays small.
  const sweeper = setInterval(() => {
    auth.nonces
      .purgeExpired()
      .catch((err: unknown) => logger.warn('nonce sweep failed', { error: String(err) }));
  }, 60_000);
  sweeper.unref();
  // Before it serves: a request could seal data with a key other processes cannot open.
  await checkPayloadKeys(db, payloadKeys, logger);
  const server = await listenApi(app, config.api.port, config.api.host, logger, tracing);
  logger.info('api listening', { host: config.api.host, port: config.api.port });
  const metricsServer =
    config.metrics.port === undefined
      ? undefined
      : await metrics.serve({
          port: config.metrics.port,
          host: config.api.host,
          token: config.metrics.token,
          logger,
        });
  if (!config.metrics.onApiPort && config.metrics.port === undefined) {
    logger.info('api metrics not served: METRICS_PORT is off and no METRICS_TOKEN is set');
  }
  return {
    server,
    async stop() {
      clearInterval(sweeper);
      await stopListening();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      if (metricsServer) {
        const closed = new Promise<void>((resolve) => metricsServer.close(() => resolve()));
        metricsServer.closeAllConnections();
        await closed;
      }
      await Promise.allSettled([db.close(), temporal.close(), business.close()]);
      await tracing?.shutdown();
    },
  };
}

/**
 * Checks the payload keys against those that sealed data (platform/crypto/key-registry.ts)
 * before the API serves anything it could seal: waits while the database does not answer, and
 * throws (the process stops, saying why) when a key is missing or not the one its id sealed with.
 */
async function checkPayloadKeys(db: Database, keyring: Keyring, logger: Logger): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ensurePayloadKeys(db, keyring);
      logger.info('payload keys checked', { current: keyring.current.id, keys: keyring.ids() });
      return;
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      if (attempt % 10 === 0) {
        logger.warn('waiting for the database to check the payload keys before serving', {
          error: String(err),
        });
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}
