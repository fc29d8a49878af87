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
  createWechatpaySandbox,
  loadOrCreateWechatpaySandboxKeys,
  loadWechatpaySandboxKeys,
  wechatpaySettings,
} from '../../sandbox/wechatpay';
import {
  alipaySettings,
  createAlipaySandbox,
  loadAlipaySandboxKeys,
  loadOrCreateAlipaySandboxKeys,
} from '../../sandbox/alipay';
import { sandboxSecret } from '../channels/sandbox';
import type { Config } from '../platform/config';
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

/** Where development keeps the offline WeChat Pay sandbox's keys (0600, reused across starts). */
function wechatpayKeyDir(config: Config): string {
  return path.join(config.dataDir, 'wechatpay-sandbox');
}

/**
 * `npm start` in development without a WeChat Pay account: the settings that point the API and
 * the worker at the offline WeChat Pay sandbox the API mounts at /wechatpay (keys made once).
 * Nothing in production, nor when WECHATPAY_SP_MCHID names a real account.
 */
export function wechatpayDevelopmentEnv(config: Config): Record<string, string> {
  if (config.env === 'production' || !config.sandbox.enabled || config.wechatpay) return {};
  const dir = wechatpayKeyDir(config);
  const keys = loadOrCreateWechatpaySandboxKeys(dir);
  return {
    ...wechatpaySettings(keys, `${config.payments.publicBaseUrl}/wechatpay`, dir),
    WECHATPAY_SANDBOX_ENABLED: 'true',
  };
}

/** The offline WeChat Pay sandbox to mount at /wechatpay, when WECHATPAY_SANDBOX_ENABLED says so. */
export function wechatpaySandboxUpstream(config: Config, logger: Logger): RequestHandler | undefined {
  if (!config.sandbox.wechatpay) return undefined;
  const keys = loadWechatpaySandboxKeys(wechatpayKeyDir(config));
  if (!keys) {
    throw new Error(
      `WECHATPAY_SANDBOX_ENABLED is set but there are no sandbox keys in ${wechatpayKeyDir(config)} (npm start makes them)`,
    );
  }
  return createWechatpaySandbox({
    keys,
    publicBaseUrl: `${config.payments.publicBaseUrl}/wechatpay`,
    timeScale: config.timeScale,
    refundDelayMs: config.sandbox.refundDelayMs,
    logger: logger.child({ component: 'wechatpay-sandbox' }),
  }).router;
}

/**
 * `durapay sandbox wechatpay`: the offline WeChat Pay sandbox alone on its own port, with keys
 * kept in `keyDir` (made on the first run). Answers its URL and the WECHATPAY_* settings that
 * point durapay at it (keys by _FILE, so no secret is printed).
 */
export async function serveWechatpaySandbox(
  config: Config,
  listen: { port: number; host: string; keyDir?: string; platformIdentity?: 'public_key' | 'certificate' },
  logger: Logger,
): Promise<{ url: string; settings: Record<string, string>; close(): Promise<void> }> {
  const keyDir = path.resolve(listen.keyDir ?? wechatpayKeyDir(config));
  const keys = loadOrCreateWechatpaySandboxKeys(keyDir);
  const url = `http://${listen.host}:${listen.port}/wechatpay`;
  const sandbox = createWechatpaySandbox({
    keys,
    publicBaseUrl: url,
    timeScale: config.timeScale,
    refundDelayMs: config.sandbox.refundDelayMs,
    platformIdentity: listen.platformIdentity ?? 'public_key',
    logger: logger.child({ component: 'wechatpay-sandbox' }),
  });
  const app = express();
  app.set('case sensitive routing', true);
  app.disable('x-powered-by');
  app.use('/wechatpay', sandbox.router);
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(listen.port, listen.host, (err?: Error) =>
      err ? reject(err) : resolve(listening),
    );
  });
  return {
    url,
    settings: wechatpaySettings(keys, url, keyDir, listen.platformIdentity ?? 'public_key'),
    async close() {
      sandbox.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

/** Where development keeps the offline Alipay gateway's keys (0600, reused across starts). */
function alipayKeyDir(config: Config): string {
  return path.join(config.dataDir, 'alipay-sandbox');
}

/**
 * `npm start` in development without an Alipay app: the settings that point the API and the
 * worker at the offline Alipay gateway the API mounts at /alipay (keys made once). Nothing in
 * production, nor when ALIPAY_APP_ID names a real app.
 */
export function alipayDevelopmentEnv(config: Config): Record<string, string> {
  if (config.env === 'production' || !config.sandbox.enabled || config.alipay) return {};
  const dir = alipayKeyDir(config);
  const keys = loadOrCreateAlipaySandboxKeys(dir);
  return {
    ...alipaySettings(keys, `${config.payments.publicBaseUrl}/alipay/gateway.do`, dir),
    ALIPAY_SANDBOX_ENABLED: 'true',
  };
}

/** The offline Alipay gateway to mount at /alipay, when ALIPAY_SANDBOX_ENABLED says so. */
export function alipaySandboxUpstream(config: Config, logger: Logger): RequestHandler | undefined {
  if (!config.sandbox.alipay) return undefined;
  const keys = loadAlipaySandboxKeys(alipayKeyDir(config));
  if (!keys) {
    throw new Error(
      `ALIPAY_SANDBOX_ENABLED is set but there are no gateway keys in ${alipayKeyDir(config)} (npm start makes them)`,
    );
  }
  return createAlipaySandbox({
    keys,
    publicBaseUrl: `${config.payments.publicBaseUrl}/alipay`,
    timeScale: config.timeScale,
    refundDelayMs: config.sandbox.refundDelayMs,
    logger: logger.child({ component: 'alipay-sandbox' }),
  }).router;
}

/**
 * The offline channel upstreams the API mounts, by path, as their *_SANDBOX_ENABLED settings
 * say: the offline WeChat Pay v3 at /wechatpay, the offline Alipay gateway at /alipay.
 */
export function channelSandboxUpstreams(config: Config, logger: Logger): Record<string, RequestHandler> {
  const wechatpay = wechatpaySandboxUpstream(config, logger);
  const alipay = alipaySandboxUpstream(config, logger);
  return {
    ...(wechatpay ? { '/wechatpay': wechatpay } : {}),
    ...(alipay ? { '/alipay': alipay } : {}),
  };
}

/**
 * `durapay sandbox alipay`: the offline Alipay gateway alone on its own port, with keys kept in
 * `keyDir` (made on the first run). Answers its URL and the ALIPAY_* settings that point durapay
 * at it (keys by _FILE, so no secret is printed).
 */
export async function serveAlipaySandbox(
  config: Config,
  listen: { port: number; host: string; keyDir?: string },
  logger: Logger,
): Promise<{ url: string; settings: Record<string, string>; close(): Promise<void> }> {
  const keyDir = path.resolve(listen.keyDir ?? alipayKeyDir(config));
  const keys = loadOrCreateAlipaySandboxKeys(keyDir);
  const url = `http://${listen.host}:${listen.port}/alipay`;
  const sandbox = createAlipaySandbox({
    keys,
    publicBaseUrl: url,
    timeScale: config.timeScale,
    refundDelayMs: config.sandbox.refundDelayMs,
    logger: logger.child({ component: 'alipay-sandbox' }),
  });
  const app = express();
  app.set('case sensitive routing', true);
  app.disable('x-powered-by');
  app.use('/alipay', sandbox.router);
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(listen.port, listen.host, (err?: Error) =>
      err ? reject(err) : resolve(listening),
    );
  });
  return {
    url,
    settings: alipaySettings(keys, `${url}/gateway.do`, keyDir),
    async close() {
      sandbox.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
