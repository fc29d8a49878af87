/**
 * The development hook: the one file of the gateway that reaches the simulated sandbox upstream
 * in sandbox/ (a tool beside the gateway, with its own tables, migrations and start command).
 * Everything else in src/ knows the sandbox only as a channel at SANDBOX_BASE_URL, through its
 * adapter in src/channels/sandbox/. Development (`npm start`) mounts the upstream in the API at
 * /sandbox; production mounts it only when SANDBOX_ENABLED says so.
 */
import type { Server } from 'node:http';
import path from 'node:path';
import express, { type RequestHandler } from 'express';
import type { Sequelize } from 'sequelize';
import { createSandboxRouter, migrateSandbox, serveSandbox, type SandboxServer } from '../../sandbox';
import {
  OFFLINE_UPSTREAMS,
  offlineUpstream,
  upstreamEnabledVariable,
  type AnyOfflineUpstream,
} from '../../sandbox/upstreams';
import { sandboxSecret } from '../channels/sandbox';
import type { Config } from '../config';
import { processClock } from '../platform/clock';
import type { Database } from '../platform/db';
import { scaleDuration } from '../platform/durations';
import type { Logger } from '../platform/logger';

function upstreamSettings(config: Config, masterKey: Buffer) {
  return {
    // The same secret the adapter signs with: configured, or derived from the master key.
    secret: sandboxSecret(config, masterKey),
    refundDelayMs: scaleDuration(config.sandbox.refundDelayMs, config.timeScale),
  };
}

/**
 * Brings the upstream's tables up to date when the sandbox is enabled (they are the sandbox's,
 * recorded in its own migration table); answers the migrations run.
 */
export async function migrateSandboxUpstream(
  config: Config,
  sequelize: Sequelize,
  logger?: Logger,
): Promise<string[]> {
  return config.sandbox.enabled ? migrateSandbox(sequelize, logger) : [];
}

/**
 * The upstream to mount at /sandbox in the API, or undefined when the sandbox is off. Its first
 * request waits for the upstream's migrations (run again after a failure), so that the API still
 * starts before Postgres answers and a database migrated only for the gateway still works.
 */
export function sandboxUpstream(
  config: Config,
  masterKey: Buffer,
  db: Database,
  logger: Logger,
): RequestHandler | undefined {
  if (!config.sandbox.enabled) return undefined;
  const sandboxLogger = logger.child({ component: 'sandbox' });
  let migrated: Promise<unknown> | undefined;
  const router = createSandboxRouter({
    db,
    ...upstreamSettings(config, masterKey),
    publicBaseUrl: config.payments.publicBaseUrl,
    logger: sandboxLogger,
    clock: processClock(config.timeScale),
  });
  return (req, res, next) => {
    migrated ??= migrateSandbox(db.sequelize, sandboxLogger).catch((err: unknown) => {
      migrated = undefined;
      throw err;
    });
    migrated.then(() => router(req, res, next), next);
  };
}

/** `durapay sandbox`: the upstream alone on its own port, with the gateway's settings. */
export function serveSandboxUpstream(
  config: Config,
  masterKey: Buffer,
  db: Database,
  listen: { port: number; host: string; publicBaseUrl?: string },
  logger: Logger,
): Promise<SandboxServer> {
  return serveSandbox({ db, ...upstreamSettings(config, masterKey), ...listen, logger });
}

export { offlineUpstream, upstreamEnabledVariable } from '../../sandbox/upstreams';

/** The channels that have an offline upstream: wechatpay, alipay. */
export const upstreamCodes = (): string[] => OFFLINE_UPSTREAMS.map((u) => u.code);

/** Where development keeps an offline upstream's keys (0600, reused across starts). */
function keyDir(config: Config, upstream: AnyOfflineUpstream): string {
  return path.join(config.dataDir, `${upstream.code}-sandbox`);
}

/**
 * `npm start` in development: for every channel that has an offline upstream and no real
 * account configured, the settings that point the API and the worker at that upstream, mounted
 * in the API at its path (keys made once), and its <CODE>_SANDBOX_ENABLED. Nothing in production.
 */
export function developmentEnv(config: Config): Record<string, string> {
  if (config.env === 'production' || !config.sandbox.enabled) return {};
  const configured = config as unknown as Record<string, unknown>;
  const env: Record<string, string> = {};
  for (const upstream of OFFLINE_UPSTREAMS as readonly AnyOfflineUpstream[]) {
    if (configured[upstream.code] !== undefined) continue;
    const dir = keyDir(config, upstream);
    const keys = upstream.keys.loadOrCreate(dir);
    Object.assign(env, upstream.settings(keys, `${config.payments.publicBaseUrl}${upstream.path}`, dir), {
      [upstreamEnabledVariable(upstream.code)]: 'true',
    });
  }
  return env;
}

/**
 * The offline channel upstreams the API mounts, by path, as their <CODE>_SANDBOX_ENABLED
 * settings say: the offline WeChat Pay v3 at /wechatpay, the offline Alipay gateway at /alipay.
 */
export function channelSandboxUpstreams(config: Config, logger: Logger): Record<string, RequestHandler> {
  const mounted: Record<string, RequestHandler> = {};
  for (const code of config.sandbox.upstreams) {
    const upstream = offlineUpstream(code);
    const variable = upstreamEnabledVariable(code);
    if (!upstream) {
      const known = OFFLINE_UPSTREAMS.map((u) => u.code).join(', ');
      throw new Error(`${variable} names no offline upstream (there are: ${known})`);
    }
    const dir = keyDir(config, upstream);
    const keys = upstream.keys.load(dir);
    if (!keys)
      throw new Error(`${variable} is set but there are no sandbox keys in ${dir} (npm start makes them)`);
    mounted[upstream.path] = upstream.create({
      keys,
      publicBaseUrl: `${config.payments.publicBaseUrl}${upstream.path}`,
      timeScale: config.timeScale,
      refundDelayMs: config.sandbox.refundDelayMs,
      logger: logger.child({ component: `${upstream.code}-sandbox` }),
      durapayUrl: config.payments.publicBaseUrl,
      contractClock: processClock(config.timeScale),
    }).router;
  }
  return mounted;
}

/**
 * `durapay sandbox <code>`: a channel's offline upstream alone on its own port, with keys kept in
 * `keyDir` (made on the first run). Answers its URL and the channel settings that point durapay
 * at it (keys by _FILE, so no secret is printed).
 */
export async function serveChannelSandbox(
  config: Config,
  upstream: AnyOfflineUpstream,
  listen: { port: number; host: string; keyDir?: string; options?: Record<string, unknown> },
  logger: Logger,
): Promise<{ url: string; settings: Record<string, string>; close(): Promise<void> }> {
  const dir = path.resolve(listen.keyDir ?? keyDir(config, upstream));
  const keys = upstream.keys.loadOrCreate(dir);
  const url = `http://${listen.host}:${listen.port}${upstream.path}`;
  const options = listen.options ?? {};
  const running = upstream.create({
    keys,
    publicBaseUrl: url,
    timeScale: config.timeScale,
    refundDelayMs: config.sandbox.refundDelayMs,
    logger: logger.child({ component: `${upstream.code}-sandbox` }),
    contractClock: processClock(config.timeScale),
    ...options,
  });
  const app = express();
  app.set('case sensitive routing', true);
  app.disable('x-powered-by');
  app.use(upstream.path, running.router);
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(listen.port, listen.host, (err?: Error) =>
      err ? reject(err) : resolve(listening),
    );
  });
  return {
    url,
    settings: upstream.settings(keys, url, dir, options),
    async close() {
      running.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
