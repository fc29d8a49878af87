// Longer than 300 lines: every core setting durapay reads, its schema and its checks in one place,
// so that a process either starts with a whole, valid configuration or says which variable is wrong.
// A channel's own settings (its schema and reading) are in its folder, src/channels/<code>/config.ts;
// src/config.ts hands them to loadCoreConfig, which validates them with the rest.
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Joi from 'joi';
import { ConfigError, type SettingsSection } from './config-parts';
import { parseDurationList } from './durations';

export { ConfigError } from './config-parts';

export type Environment = 'development' | 'test' | 'production';

/** WORKER_MAX_CACHED_WORKFLOWS when unset: about 660 MiB of worker memory at 10 000 open orders (see docs/performance.md). */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 300;

export interface CoreConfig {
  env: Environment;
  /** Where durapay keeps its development state: embedded Postgres data, Temporal's SQLite file, keys. */
  dataDir: string;
  /** Where built tools (the Temporal CLI) are cached, outside any checkout. */
  cacheDir: string;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  api: {
    host: string;
    port: number;
    /** Deadline for work done inside one API request (channel calls, workflow updates). */
    requestTimeoutMs: number;
    /**
     * The proxies in front of the API whose X-Forwarded-For (and -Proto, -Host) it believes
     * (TRUST_PROXY, Express's `trust proxy`): none (false, the default), how many hops, or their
     * addresses and subnets (`loopback`, `linklocal`, `uniquelocal` name Express's ranges).
     */
    trustProxy: TrustProxy;
  };
  database: {
    /** Set when a real server is configured; absent means "use the embedded Postgres". */
    url?: string;
    embeddedPort: number;
  };
  temporal: {
    /** Set when an existing Temporal server is to be used; absent means "start a dev server". */
    address?: string;
    namespace: string;
    taskQueue: string;
    cliPath?: string;
    devServerPort: number;
    uiPort: number;
    /** The Temporal UI's address, for links from the operator console (TEMPORAL_UI_URL). */
    uiUrl: string;
    /** A prebuilt workflow bundle (see `durapay bundle`); absent means bundle at worker start. */
    workflowBundlePath?: string;
    /**
     * Whether the worker also serves the diagnostic (`durapay doctor`) and benchmark workflows
     * (DURAPAY_DIAGNOSTIC_WORKFLOWS): on by default outside production, off in production.
     */
    diagnosticWorkflows: boolean;
    /**
     * Workflows the worker keeps in memory between their tasks (its sticky cache). It bounds the
     * worker's memory: each cached order costs about a quarter of a MiB (measured with `npm run
     * bench`); a workflow evicted from it replays its history at its next task.
     */
    maxCachedWorkflows: number;
  };
  worker: {
    /**
     * Where the worker serves `GET /metrics` (WORKER_METRICS_PORT, `off` for nowhere), on the
     * API's HOST, for a Prometheus on the operators' network.
     */
    metricsPort?: number;
    /**
     * Failure injection for `npm run chaos` (DURAPAY_CHAOS_HOLDS_DIR; refused in production): the
     * directory where the chaos runner arms activities to be held until it kills the worker
     * (worker/activity-holds.ts).
     */
    chaosHoldsDir?: string;
  };
  /**
   * Where the API serves its `GET /metrics` (SPEC §9). Outside production the API port serves it
   * to anyone, as it always has; in production only with a token, never openly.
   */
  metrics: {
    /** Whether the API port serves `/metrics`: outside production, or with a token. */
    onApiPort: boolean;
    /** A port of its own, on HOST (METRICS_PORT: 9100 in production, none elsewhere; `off` for none). */
    port?: number;
    /** The bearer token `/metrics` asks for wherever the API serves it (METRICS_TOKEN). */
    token?: string;
  };
  /**
   * The key that encrypts app secrets at rest (AES-256-GCM). Required in production; in
   * development and tests a key is generated once into the data directory and reused.
   */
  masterKey?: Buffer;
  /**
   * The keys that seal Temporal payloads and applicant data (AES-256-GCM), current first:
   * DURAPAY_PAYLOAD_KEYS as given, or the file DURAPAY_PAYLOAD_KEYS_FILE names. Required in
   * production; in development and tests a key is generated once into the data directory.
   */
  payloadKeys: { keys?: string; keysFile?: string };
  /**
   * The codec server the Temporal UI decodes payloads through (`/codec/*`): the operator token
   * (DURAPAY_CODEC_TOKEN; without it, nothing is decoded) and the UI origins allowed to call it.
   */
  codec: { token?: string; corsOrigins: string[] };
  notifications: {
    /** Gaps between delivery attempts, unscaled; attempts = gaps + 1 (SPEC §6: 8). */
    retryScheduleMs: number[];
    /** One attempt's deadline: a 2xx must arrive within it. */
    timeoutMs: number;
  };
  payments: {
    /** How this service is reached from outside: channel callbacks and sandbox pay URLs. */
    publicBaseUrl: string;
    defaultChannel: string;
    profitShareDelayMs: number;
    /** How long a paid order with nothing left to wait for keeps its workflow run (SPEC §7). */
    orderIdleEndMs: number;
    /** How long a barcode payment the buyer is confirming is followed before it is reversed (SPEC §14). */
    barcodeWaitMs: number;
  };
  sandbox: {
    enabled: boolean;
    /** Shared by the simulator and its adapter; derived from the master key when unset. */
    secret?: string;
    baseUrl: string;
    refundDelayMs: number;
    maxAmount: number;
    /**
     * The channels whose offline upstream the API mounts (at /wechatpay, /alipay), by code: each
     * <CODE>_SANDBOX_ENABLED set to true. `npm start` sets them for channels without an account.
     */
    upstreams: string[];
  };
  rateLimit: {
    /** Sustained requests per second per app. */
    perSecond: number;
    burst: number;
  };
  callbacks: {
    /**
     * Callbacks failing verification that one source address may send per second, a second's
     * worth at once (CALLBACK_RATE_LIMIT; SPEC §9: 50). Kept by each API process.
     */
    rateLimitPerSecond: number;
    /** Raw callbacks are deleted this many days after they arrived (CALLBACK_RETENTION_DAYS; SPEC §9: 90). */
    retentionDays: number;
    /** Rows one statement of the retention deletes (CALLBACK_RETENTION_BATCH). */
    retentionBatchSize: number;
  };
  /** The daily reconciliation (SPEC §10): when the day before is reconciled, and in which zone. */
  reconciliation: { at: string; timeZone: string };
  /** The operator console (SPEC §12): its sessions and its lockout after failed sign-ins. */
  console: {
    sessionIdleMs: number;
    sessionMaxMs: number;
    /** Whether the session cookie is `Secure`: everywhere but development. */
    secureCookie: boolean;
    lockout: { attempts: number; addressAttempts: number; windowMs: number };
  };
  /**
   * Multiplies every duration a workflow waits (timers, retry schedules). 1 in production;
   * tests use a small value so a 30-minute expiry passes in well under a second.
   */
  timeScale: number;
  /**
   * OpenTelemetry traces (the standard OTEL_* variables): absent, and nothing installed, unless
   * an OTLP endpoint is set or OTEL_TRACES_EXPORTER is `otlp`.
   */
  tracing?: TracingConfig;
}

/** Express's `trust proxy` setting, in the forms durapay accepts: never `true` (see trustProxyConfig). */
export type TrustProxy = false | number | string[];

export interface TracingConfig {
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or the base endpoint + /v1/traces. */
  tracesUrl: string;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
}

function defaultCacheDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'durapay');
}

const port = Joi.number().integer().min(1).max(65535);

/** A comma-separated list of durations (`5s,5m,2h`). */
const durations = () =>
  Joi.string().custom((value: string, helpers) => {
    try {
      parseDurationList(value);
      return value;
    } catch {
      return helpers.error('durations.format');
    }
  });

/** The operator console's variables, with their defaults. */
const CONSOLE_SCHEMA = {
  CONSOLE_SESSION_IDLE_MINUTES: Joi.number().integer().min(1).max(1_440).default(30),
  CONSOLE_SESSION_MAX_HOURS: Joi.number().integer().min(1).max(720).default(12),
  CONSOLE_LOCKOUT_ATTEMPTS: Joi.number().integer().min(1).max(1_000).default(5),
  CONSOLE_LOCKOUT_ADDRESS_ATTEMPTS: Joi.number().integer().min(1).max(100_000).default(20),
  CONSOLE_LOCKOUT_MINUTES: Joi.number().integer().min(1).max(1_440).default(15),
};

/** The console's settings from its validated variables. */
function consoleConfig(num: (key: string) => number, envName: Environment): CoreConfig['console'] {
  return {
    sessionIdleMs: num('CONSOLE_SESSION_IDLE_MINUTES') * 60_000,
    sessionMaxMs: num('CONSOLE_SESSION_MAX_HOURS') * 3_600_000,
    // Sent only over HTTPS outside development: a console on plain http://localhost still signs in.
    secureCookie: envName !== 'development',
    lockout: {
      attempts: num('CONSOLE_LOCKOUT_ATTEMPTS'),
      addressAttempts: num('CONSOLE_LOCKOUT_ADDRESS_ATTEMPTS'),
      windowMs: num('CONSOLE_LOCKOUT_MINUTES') * 60_000,
    },
  };
}

/** The console's settings when no variable sets them, as production reads them. */
export const DEFAULT_CONSOLE_SETTINGS: CoreConfig['console'] = (() => {
  const { value } = Joi.object(CONSOLE_SCHEMA).validate({}) as { value: Record<string, number> };
  return consoleConfig((key) => value[key]!, 'production');
})();

/** A channel's <CODE>_SANDBOX_ENABLED (the sandbox channel's own is SANDBOX_ENABLED). */
const UPSTREAM_ENABLED = /^[A-Z][A-Z0-9]*_SANDBOX_ENABLED$/;

const coreSchema = Joi.object({
  DURAPAY_ENV: Joi.string().valid('development', 'test', 'production'),
  NODE_ENV: Joi.string().allow(''),
  DURAPAY_DATA_DIR: Joi.string(),
  DURAPAY_CACHE_DIR: Joi.string(),
  LOG_LEVEL: Joi.string().valid('error', 'warn', 'info', 'debug').default('info'),
  HOST: Joi.string().hostname(),
  PORT: port.default(8080),
  API_REQUEST_TIMEOUT_MS: Joi.number().integer().min(100).max(120_000).default(10_000),
  TRUST_PROXY: Joi.string(),
  DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
  DURAPAY_PG_PORT: port.default(54329),
  TEMPORAL_ADDRESS: Joi.string().pattern(/^[^\s:]+:\d{1,5}$/, 'host:port'),
  TEMPORAL_NAMESPACE: Joi.string()
    .pattern(/^[A-Za-z0-9._-]{1,255}$/)
    .default('default'),
  TEMPORAL_TASK_QUEUE: Joi.string()
    .pattern(/^[A-Za-z0-9._:-]{1,255}$/)
    .default('durapay'),
  TEMPORAL_CLI_PATH: Joi.string(),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  TEMPORAL_UI_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  ...CONSOLE_SCHEMA,
  WORKER_METRICS_PORT: Joi.alternatives(port, Joi.string().valid('off')).default(9464),
  DURAPAY_CHAOS_HOLDS_DIR: Joi.string(),
  METRICS_PORT: Joi.alternatives(port, Joi.string().valid('off')),
  // A secret a scraper sends; long enough that guessing it is hopeless, as the codec token.
  METRICS_TOKEN: Joi.string()
    .min(24)
    .max(256)
    .pattern(/^[\x21-\x7e]+$/, 'printable ASCII'),
  DURAPAY_WORKFLOW_BUNDLE: Joi.string(),
  // At least 100: without a cache (0) the SDK drops or repeats local activities on eviction,
  // and a cache smaller than the tasks in flight evicts workflows mid-task.
  WORKER_MAX_CACHED_WORKFLOWS: Joi.number()
    .integer()
    .min(100)
    .max(1_000_000)
    .default(DEFAULT_MAX_CACHED_WORKFLOWS),
  DURAPAY_TIME_SCALE: Joi.number().greater(0).max(1).default(1),
  DURAPAY_MASTER_KEY: Joi.string()
    .base64()
    .custom((value: string, helpers) =>
      Buffer.from(value, 'base64').length === 32 ? value : helpers.error('masterKey.length'),
    ),
  DURAPAY_PAYLOAD_KEYS: Joi.string(),
  DURAPAY_PAYLOAD_KEYS_FILE: Joi.string(),
  // Long enough that guessing it is hopeless; `openssl rand -base64 32` gives 44 characters.
  DURAPAY_CODEC_TOKEN: Joi.string()
    .min(24)
    .max(256)
    .pattern(/^[\x21-\x7e]+$/, 'printable ASCII'),
  DURAPAY_CODEC_CORS_ORIGINS: Joi.string(),
  NOTIFY_RETRY_SCHEDULE: durations().default('5s,5m,30m,2h,5h,10h,10h'),
  NOTIFY_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(10_000),
  PUBLIC_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  DEFAULT_CHANNEL: Joi.string()
    .pattern(/^[a-z0-9_]{1,32}$/)
    .default('sandbox'),
  PROFIT_SHARE_DELAY: durations().default('60s'),
  ORDER_IDLE_END: durations().default('10m'),
  BARCODE_WAIT: durations().default('60s'),
  SANDBOX_ENABLED: Joi.boolean(),
  DURAPAY_DIAGNOSTIC_WORKFLOWS: Joi.boolean(),
  SANDBOX_SECRET: Joi.string().min(16),
  SANDBOX_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  SANDBOX_MAX_AMOUNT: Joi.number().integer().min(1).max(1_000_000_000_000).default(1_000_000_000_000),
  SANDBOX_REFUND_DELAY_MS: Joi.number().integer().min(0).max(600_000).default(1_000),
  RATE_LIMIT_PER_SEC: Joi.number().greater(0).max(1_000_000).default(100),
  RATE_LIMIT_BURST: Joi.number().integer().min(1).max(1_000_000).default(200),
  CALLBACK_RATE_LIMIT: Joi.number().greater(0).max(1_000_000).default(50),
  CALLBACK_RETENTION_DAYS: Joi.number().integer().min(1).max(36_500).default(90),
  // Small enough that one DELETE holds its locks briefly, large enough that a day's callbacks go in few.
  CALLBACK_RETENTION_BATCH: Joi.number().integer().min(1).max(100_000).default(1_000),
  // SPEC §10: the channels' statements of the day before are ready by 10:00 in China.
  RECONCILIATION_AT: Joi.string()
    .pattern(/^([01]\d|2[0-3]):[0-5]\d$/)
    .default('10:30'),
  RECONCILIATION_TIME_ZONE: Joi.string().default('Asia/Shanghai'),
  OTEL_SDK_DISABLED: Joi.boolean(),
  OTEL_TRACES_EXPORTER: Joi.string().valid('otlp', 'none'),
  OTEL_EXPORTER_OTLP_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }),
  // OTLP over HTTP only: every collector takes it, and gRPC would be a second transport stack.
  OTEL_EXPORTER_OTLP_PROTOCOL: Joi.string().valid('http/protobuf', 'http/json'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Joi.string().valid('http/protobuf', 'http/json'),
  OTEL_SERVICE_NAME: Joi.string().max(255).default('durapay'),
})
  // A channel's offline upstream, mounted in the API (WECHATPAY_SANDBOX_ENABLED, …).
  .pattern(UPSTREAM_ENABLED, Joi.boolean())
  .unknown(true)
  .messages({
    'string.pattern.name': '{{#label}} must be of the form {{#name}}',
    'durations.format': '{{#label}} must be a comma-separated list of durations like 5s,5m,2h',
    'masterKey.length': '{{#label}} must be the base64 encoding of exactly 32 bytes',
  });

const schemas = new WeakMap<readonly SettingsSection[], Joi.ObjectSchema>();

/** The core schema with the sections' variables (each channel's), made once per list of sections. */
function schemaWith(sections: readonly SettingsSection[]): Joi.ObjectSchema {
  let schema = schemas.get(sections);
  if (!schema) {
    schema = coreSchema.keys(Object.assign({}, ...sections.map(({ settings }) => settings.schema)));
    schemas.set(sections, schema);
  }
  return schema;
}

/**
 * Reads every core setting from the environment once, and each section's own (a channel's:
 * src/config.ts passes them) under its code, validated with the rest. An empty variable counts
 * as unset, so `PORT= npm start` behaves like no PORT at all rather than failing on "".
 */
export function loadCoreConfig<S extends object = object>(
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
  sections: readonly SettingsSection[] = [],
): CoreConfig & S {
  const schema = schemaWith(sections);
  const present: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') present[key] = value;
  }
  const { value, error } = schema.validate(present, { abortEarly: true, convert: true });
  if (error) {
    throw new ConfigError(`invalid configuration: ${error.message}`);
  }
  const v = value as Record<string, string | number | undefined>;
  const str = (key: string): string | undefined => (v[key] === undefined ? undefined : String(v[key]));
  const num = (key: string): number => Number(v[key]);

  const envName: Environment =
    (str('DURAPAY_ENV') as Environment | undefined) ??
    (str('NODE_ENV') === 'production' ? 'production' : str('NODE_ENV') === 'test' ? 'test' : 'development');

  return Object.freeze({
    env: envName,
    dataDir: path.resolve(cwd, str('DURAPAY_DATA_DIR') ?? '.durapay'),
    cacheDir: path.resolve(cwd, str('DURAPAY_CACHE_DIR') ?? defaultCacheDir(env)),
    logLevel: str('LOG_LEVEL') as CoreConfig['logLevel'],
    api: {
      // Loopback unless in production: the development sandbox's checkout pays any order whose
      // trade_no is known, and is for this machine only (HOST=0.0.0.0 exposes it on purpose).
      host: str('HOST') ?? (envName === 'production' ? '0.0.0.0' : '127.0.0.1'),
      port: num('PORT'),
      requestTimeoutMs: num('API_REQUEST_TIMEOUT_MS'),
      trustProxy: trustProxyConfig(str('TRUST_PROXY')),
    },
    database: {
      url: str('DATABASE_URL'),
      embeddedPort: num('DURAPAY_PG_PORT'),
    },
    temporal: {
      address: str('TEMPORAL_ADDRESS'),
      namespace: str('TEMPORAL_NAMESPACE')!,
      taskQueue: str('TEMPORAL_TASK_QUEUE')!,
      cliPath: str('TEMPORAL_CLI_PATH'),
      devServerPort: num('TEMPORAL_PORT'),
      uiPort: num('TEMPORAL_UI_PORT'),
      uiUrl: (str('TEMPORAL_UI_URL') ?? `http://localhost:${num('TEMPORAL_UI_PORT')}`).replace(/\/+$/, ''),
      workflowBundlePath: str('DURAPAY_WORKFLOW_BUNDLE'),
      diagnosticWorkflows:
        v.DURAPAY_DIAGNOSTIC_WORKFLOWS === undefined
          ? envName !== 'production'
          : Boolean(v.DURAPAY_DIAGNOSTIC_WORKFLOWS),
      maxCachedWorkflows: num('WORKER_MAX_CACHED_WORKFLOWS'),
    },
    worker: {
      metricsPort: v.WORKER_METRICS_PORT === 'off' ? undefined : num('WORKER_METRICS_PORT'),
      chaosHoldsDir: chaosHoldsDir(str('DURAPAY_CHAOS_HOLDS_DIR'), envName, cwd),
    },
    metrics: metricsConfig(str, envName, num('PORT')),
    masterKey:
      str('DURAPAY_MASTER_KEY') === undefined ? undefined : Buffer.from(str('DURAPAY_MASTER_KEY')!, 'base64'),
    payloadKeys: { keys: str('DURAPAY_PAYLOAD_KEYS'), keysFile: str('DURAPAY_PAYLOAD_KEYS_FILE') },
    codec: {
      token: str('DURAPAY_CODEC_TOKEN'),
      // The dev server's UI by default: it runs on this machine beside `npm start`.
      corsOrigins: (
        str('DURAPAY_CODEC_CORS_ORIGINS') ??
        `http://localhost:${num('TEMPORAL_UI_PORT')},http://127.0.0.1:${num('TEMPORAL_UI_PORT')}`
      )
        .split(',')
        .map((o) => o.trim().replace(/\/+$/, ''))
        .filter(Boolean),
    },
    notifications: {
      retryScheduleMs: parseDurationList(str('NOTIFY_RETRY_SCHEDULE')!),
      timeoutMs: num('NOTIFY_TIMEOUT_MS'),
    },
    payments: {
      publicBaseUrl: (str('PUBLIC_BASE_URL') ?? `http://127.0.0.1:${num('PORT')}`).replace(/\/+$/, ''),
      defaultChannel: str('DEFAULT_CHANNEL')!,
      profitShareDelayMs: parseDurationList(str('PROFIT_SHARE_DELAY')!)[0]!,
      orderIdleEndMs: parseDurationList(str('ORDER_IDLE_END')!)[0]!,
      barcodeWaitMs: parseDurationList(str('BARCODE_WAIT')!)[0]!,
    },
    sandbox: {
      enabled: v.SANDBOX_ENABLED === undefined ? envName !== 'production' : Boolean(v.SANDBOX_ENABLED),
      secret: str('SANDBOX_SECRET'),
      baseUrl: (
        str('SANDBOX_BASE_URL') ??
        `${(str('PUBLIC_BASE_URL') ?? `http://127.0.0.1:${num('PORT')}`).replace(/\/+$/, '')}/sandbox`
      ).replace(/\/+$/, ''),
      refundDelayMs: num('SANDBOX_REFUND_DELAY_MS'),
      maxAmount: num('SANDBOX_MAX_AMOUNT'),
      upstreams: Object.keys(v)
        .filter((key) => UPSTREAM_ENABLED.test(key) && (v[key] as unknown) === true)
        .map((key) => key.slice(0, -'_SANDBOX_ENABLED'.length).toLowerCase()),
    },
    ...(Object.fromEntries(sections.map(({ code, settings }) => [code, settings.read(str, cwd)])) as S),
    rateLimit: { perSecond: num('RATE_LIMIT_PER_SEC'), burst: num('RATE_LIMIT_BURST') },
    callbacks: {
      rateLimitPerSecond: num('CALLBACK_RATE_LIMIT'),
      retentionDays: num('CALLBACK_RETENTION_DAYS'),
      retentionBatchSize: num('CALLBACK_RETENTION_BATCH'),
    },
    reconciliation: { at: str('RECONCILIATION_AT')!, timeZone: str('RECONCILIATION_TIME_ZONE')! },
    console: consoleConfig(num, envName),
    timeScale: num('DURAPAY_TIME_SCALE'),
    tracing: tracingConfig(str),
  });
}

/**
 * Off unless asked for: an OTLP endpoint, or OTEL_TRACES_EXPORTER=otlp (then the spec's default
 * collector, localhost:4318). OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none turn it off.
 */
function tracingConfig(str: (key: string) => string | undefined): TracingConfig | undefined {
  const base = str('OTEL_EXPORTER_OTLP_ENDPOINT');
  const traces = str('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const exporter = str('OTEL_TRACES_EXPORTER');
  if (str('OTEL_SDK_DISABLED') === 'true' || exporter === 'none') return undefined;
  if (exporter !== 'otlp' && base === undefined && traces === undefined) return undefined;
  return {
    tracesUrl: traces ?? `${(base ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`,
    protocol: (str('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
      str('OTEL_EXPORTER_OTLP_PROTOCOL') ??
      'http/protobuf') as TracingConfig['protocol'],
    serviceName: str('OTEL_SERVICE_NAME')!,
  };
}

/** A worker that can be made to hang on purpose never runs in production. */
function chaosHoldsDir(dir: string | undefined, envName: Environment, cwd: string): string | undefined {
  if (dir === undefined) return undefined;
  if (envName === 'production') {
    throw new ConfigError('invalid configuration: "DURAPAY_CHAOS_HOLDS_DIR" is not allowed in production');
  }
  return path.resolve(cwd, dir);
}

const NAMED_PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY as Express takes it. `true` is refused: Express would then take the first address
 * of X-Forwarded-For, which the client writes itself, so every limit per client address (the
 * codec server's lockout) would be the client's to choose. Each address or subnet is checked
 * here, so that a typo stops the process rather than trusting nobody (or somebody else).
 */
function trustProxyConfig(value: string | undefined): TrustProxy {
  const setting = value?.trim().toLowerCase();
  if (setting === undefined || setting === 'false' || setting === 'off' || setting === '0') return false;
  if (setting === 'true') {
    throw new ConfigError(
      'invalid configuration: "TRUST_PROXY" true would believe any X-Forwarded-For, which a client writes itself; give the number of proxies in front of the API or their addresses',
    );
  }
  if (/^\d+$/.test(setting)) {
    const hops = Number(setting);
    if (hops > 32) {
      throw new ConfigError(
        'invalid configuration: "TRUST_PROXY" must be off, a number of proxies from 1 to 32, or the proxies\' addresses and subnets',
      );
    }
    return hops;
  }
  return setting.split(',').map((raw) => {
    const entry = raw.trim();
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    const validSubnet =
      bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!NAMED_PROXY_RANGES.includes(entry) && (family === 0 || !validSubnet || rest.length > 0)) {
      throw new ConfigError(
        `invalid configuration: "TRUST_PROXY": "${entry.slice(0, 64)}" is not an address, a subnet or one of ${NAMED_PROXY_RANGES.join(', ')}`,
      );
    }
    return entry;
  });
}

/** Production's METRICS_PORT when none is set: the port Prometheus exporters conventionally use. */
export const DEFAULT_PRODUCTION_METRICS_PORT = 9100;

function metricsConfig(
  str: (key: string) => string | undefined,
  env: Environment,
  apiPort: number,
): CoreConfig['metrics'] {
  const token = str('METRICS_TOKEN');
  const setting = str('METRICS_PORT');
  const port =
    setting === 'off'
      ? undefined
      : setting !== undefined
        ? Number(setting)
        : env === 'production'
          ? DEFAULT_PRODUCTION_METRICS_PORT
          : undefined;
  if (port === apiPort) {
    throw new ConfigError(
      `invalid configuration: "METRICS_PORT" must differ from "PORT" (both ${port}): /metrics has a port of its own, or set "METRICS_PORT" to off and "METRICS_TOKEN"`,
    );
  }
  return {
    onApiPort: env !== 'production' || token !== undefined,
    ...(port === undefined ? {} : { port }),
    ...(token === undefined ? {} : { token }),
  };
}

/** Like loadConfig, but for settings a process cannot run without: set after provisioning. */
export function requireDatabaseUrl(config: CoreConfig): string {
  if (!config.database.url) throw new ConfigError('invalid configuration: "DATABASE_URL" is required');
  return config.database.url;
}

export function requireTemporalAddress(config: CoreConfig): string {
  if (!config.temporal.address)
    throw new ConfigError('invalid configuration: "TEMPORAL_ADDRESS" is required');
  return config.temporal.address;
}
