import type { Server } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { type Config, requireDatabaseUrl, requireTemporalAddress } from '../platform/config';
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
import type { Logger } from '../platform/logger';
import { describeTracing, installTracing } from '../platform/tracing';
import { alipaySandboxUpstream, sandboxUpstream, wechatpaySandboxUpstream } from '../sandbox-hook';
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

/** The production API process: connects lazily, so it can start before its dependencies answer. */
export async function runApi(config: Config, logger: Logger): Promise<RunningApi> {
  const masterKey = resolveMasterKey(config);
  // Before anything calls out: the spans of the first requests have somewhere to go.
  const tracing = config.tracing ? installTracing(config.tracing, 'api', logger) : undefined;
  if (config.tracing) logger.info('tracing on', describeTracing(config.tracing));
  const db = connectDatabase(requireDatabaseUrl(config), { acquireTimeoutMs: 3_000 });
  const temporal = probeConnection(requireTemporalAddress(config));
  const auth = authDeps(db, masterKey, config.rateLimit);
  const stopListening = listenForAppChanges(db, auth.appLookup, logger);
  const business = Connection.lazy({ address: requireTemporalAddress(config) });
  const wechatpayUpstream = wechatpaySandboxUpstream(config, logger);
  const alipayUpstream = alipaySandboxUpstream(config, logger);
  const app = createApp({
    logger,
    readiness: readinessProbes(db, temporal),
    auth,
    services: {
      db,
      client: new Client({
        connection: business,
        namespace: config.temporal.namespace,
        ...(tracing ? { interceptors: tracing.clientInterceptors } : {}),
      }),
      taskQueue: config.temporal.taskQueue,
      notifications: config.notifications,
      timeScale: config.timeScale,
      channels: channelsFromConfig(config, masterKey),
      publicBaseUrl: config.payments.publicBaseUrl,
      defaultChannel: config.payments.defaultChannel,
      profitShareDelayMs: config.payments.profitShareDelayMs,
      requestTimeoutMs: config.api.requestTimeoutMs,
    },
    // Development hook: the simulated upstream, when the sandbox is enabled.
    sandbox: sandboxUpstream(config, masterKey, db, logger),
    upstreams: {
      ...(wechatpayUpstream ? { '/wechatpay': wechatpayUpstream } : {}),
      ...(alipayUpstream ? { '/alipay': alipayUpstream } : {}),
    },
  });
  // Nonces outlive their window by design; sweep expired ones so the table stays small.
  const sweeper = setInterval(() => {
    auth.nonces
      .purgeExpired()
      .catch((err: unknown) => logger.warn('nonce sweep failed', { error: String(err) }));
  }, 60_000);
  sweeper.unref();
  const server = await listenApi(app, config.api.port, config.api.host, logger, tracing);
  logger.info('api listening', { host: config.api.host, port: config.api.port });
  return {
    server,
    async stop() {
      clearInterval(sweeper);
      await stopListening();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.allSettled([db.close(), temporal.close(), business.close()]);
      await tracing?.shutdown();
    },
  };
}
