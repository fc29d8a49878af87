import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { ConfigError, DEFAULT_CONSOLE_SETTINGS } from '../../src/platform/config';
import { AUDIT_POLL_SCHEDULE_MS, AUDIT_WINDOW_MS } from '../../src/modules/applications/rules';
import {
  DEFAULT_EXPIRE_MINUTES,
  PAYMENT_POLL_SCHEDULE_MS,
  pollGap,
  REFUND_POLL_WINDOW_MS,
} from '../../src/modules/orders/rules';

describe('loadConfig', () => {
  test('when nothing is set, then the documented defaults apply', () => {
    const config = loadConfig({ HOME: '/home/u' }, '/srv/app');
    expect(config).toMatchObject({
      env: 'development',
      dataDir: path.resolve('/srv/app/.durapay'),
      cacheDir: '/home/u/.cache/durapay',
      logLevel: 'info',
      api: { host: '127.0.0.1', port: 8080, requestTimeoutMs: 10_000 },
      database: { url: undefined, embeddedPort: 54329 },
      temporal: {
        address: undefined,
        namespace: 'default',
        taskQueue: 'durapay',
        devServerPort: 7233,
        uiPort: 8233,
        maxCachedWorkflows: 300,
      },
      timeScale: 1,
    });
  });

  test('when values are set, then they are read and converted', () => {
    const config = loadConfig({
      PORT: '9090',
      DATABASE_URL: 'postgres://u:p@db:5432/durapay',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_TASK_QUEUE: 'payments-eu',
      DURAPAY_TIME_SCALE: '0.001',
      NODE_ENV: 'production',
      XDG_CACHE_HOME: '/var/cache',
      WORKER_MAX_CACHED_WORKFLOWS: '500',
    });
    expect(config.temporal.maxCachedWorkflows).toBe(500);
    expect(config.api.port).toBe(9090);
    expect(config.database.url).toBe('postgres://u:p@db:5432/durapay');
    expect(config.temporal.address).toBe('temporal:7233');
    expect(config.temporal.taskQueue).toBe('payments-eu');
    expect(config.timeScale).toBe(0.001);
    expect(config.env).toBe('production');
    expect(config.cacheDir).toBe('/var/cache/durapay');
  });

  test.each([
    [{}, '127.0.0.1'],
    [{ DURAPAY_ENV: 'test' }, '127.0.0.1'],
    [{ NODE_ENV: 'production' }, '0.0.0.0'],
    [{ DURAPAY_ENV: 'production' }, '0.0.0.0'],
    [{ HOST: '0.0.0.0' }, '0.0.0.0'],
    [{ NODE_ENV: 'production', HOST: '10.0.0.5' }, '10.0.0.5'],
  ])('when the environment is %p, then the API binds %s', (env, host) => {
    expect(loadConfig(env).api.host).toBe(host);
  });

  test("when nothing is set, then every schedule is SPEC's", () => {
    const config = loadConfig({});
    const s = 1_000;
    const m = 60 * s;
    const h = 60 * m;
    // §6: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts), each within 10 s.
    expect(config.notifications).toEqual({
      retryScheduleMs: [5 * s, 5 * m, 30 * m, 2 * h, 5 * h, 10 * h, 10 * h],
      timeoutMs: 10 * s,
    });
    expect(config.notifications.retryScheduleMs.reduce((a, b) => a + b, 0) / h).toBeCloseTo(27.6, 1);
    // §3.2 and §3.5: 10 s, 30 s, 1 min, 2 min, 5 min, then every 5 min; refunds for 24 h.
    expect(PAYMENT_POLL_SCHEDULE_MS).toEqual([10 * s, 30 * s, m, 2 * m, 5 * m]);
    expect(pollGap(PAYMENT_POLL_SCHEDULE_MS, 99)).toBe(5 * m);
    expect(REFUND_POLL_WINDOW_MS).toBe(24 * h);
    // §5.7: 5 s, 10 s, 30 s, 1 min, 5 min, 15 min, then hourly, for up to 30 days.
    expect(AUDIT_POLL_SCHEDULE_MS).toEqual([5 * s, 10 * s, 30 * s, m, 5 * m, 15 * m, h]);
    expect(pollGap(AUDIT_POLL_SCHEDULE_MS, 99)).toBe(h);
    expect(AUDIT_WINDOW_MS).toBe(30 * 24 * h);
    // §3.7: profit sharing 60 s after payment; §3.1: 30-minute expiry, 10 s request deadline.
    expect(config.payments.profitShareDelayMs).toBe(60 * s);
    expect(DEFAULT_EXPIRE_MINUTES).toBe(30);
    expect(config.api.requestTimeoutMs).toBe(10 * s);
    // §9: unverified callbacks 50/s per source address; raw callbacks kept 90 days.
    expect(config.callbacks).toEqual({
      rateLimitPerSecond: 50,
      retentionDays: 90,
      retentionBatchSize: 1_000,
    });
  });

  test('when the callback settings are set, then they are read', () => {
    const config = loadConfig({
      CALLBACK_RATE_LIMIT: '2.5',
      CALLBACK_RETENTION_DAYS: '30',
      CALLBACK_RETENTION_BATCH: '200',
    });
    expect(config.callbacks).toEqual({ rateLimitPerSecond: 2.5, retentionDays: 30, retentionBatchSize: 200 });
  });

  test("when no console setting is set, then the console's defaults are the documented ones, the same the API falls back to", () => {
    const documented = {
      sessionIdleMs: 30 * 60_000,
      sessionMaxMs: 12 * 3_600_000,
      secureCookie: true,
      lockout: { attempts: 5, addressAttempts: 20, windowMs: 15 * 60_000 },
    };
    expect(loadConfig({ DURAPAY_ENV: 'production' }).console).toEqual(documented);
    expect(DEFAULT_CONSOLE_SETTINGS).toEqual(documented);
    expect(loadConfig({ DURAPAY_ENV: 'development' }).console.secureCookie).toBe(false);
    expect(
      loadConfig({ CONSOLE_SESSION_IDLE_MINUTES: '5', CONSOLE_LOCKOUT_MINUTES: '2' }).console,
    ).toMatchObject({ sessionIdleMs: 300_000, lockout: { windowMs: 120_000 } });
  });

  test('when a variable is empty, then it counts as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).api.port).toBe(8080);
  });

  test.each([
    ['PORT', 'eighty', /"PORT" must be a number/],
    ['PORT', '70000', /"PORT" must be less than or equal to 65535/],
    ['DATABASE_URL', 'mysql://x@y/z', /"DATABASE_URL" must be a valid uri with a scheme matching/],
    ['TEMPORAL_ADDRESS', 'no-port', /"TEMPORAL_ADDRESS" must be of the form host:port/],
    ['DURAPAY_TIME_SCALE', '2', /"DURAPAY_TIME_SCALE" must be less than or equal to 1/],
    ['DURAPAY_ENV', 'staging', /"DURAPAY_ENV" must be one of/],
    ['LOG_LEVEL', 'loud', /"LOG_LEVEL" must be one of/],
    [
      'WORKER_MAX_CACHED_WORKFLOWS',
      '0',
      /"WORKER_MAX_CACHED_WORKFLOWS" must be greater than or equal to 100/,
    ],
    ['CALLBACK_RATE_LIMIT', '0', /"CALLBACK_RATE_LIMIT" must be greater than 0/],
    ['CALLBACK_RATE_LIMIT', 'many', /"CALLBACK_RATE_LIMIT" must be a number/],
    ['CALLBACK_RETENTION_DAYS', '0', /"CALLBACK_RETENTION_DAYS" must be greater than or equal to 1/],
    ['CALLBACK_RETENTION_DAYS', '1.5', /"CALLBACK_RETENTION_DAYS" must be an integer/],
    ['CALLBACK_RETENTION_BATCH', '100001', /"CALLBACK_RETENTION_BATCH" must be less than or equal to 100000/],
  ])('when %s is %p, then loading fails with a message naming it', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  test('when a secret-bearing URL is invalid, then the message does not echo its value', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://user:hunter2@db/x' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
  });
});

describe('loadConfig: metrics and proxies', () => {
  test('when nothing is set outside production, then the API port serves /metrics openly, as before', () => {
    expect(loadConfig({}).metrics).toEqual({ onApiPort: true });
    expect(loadConfig({ DURAPAY_ENV: 'test' }).metrics).toEqual({ onApiPort: true });
  });

  test('when nothing is set in production, then /metrics is served on port 9100 only', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).metrics).toEqual({ onApiPort: false, port: 9100 });
  });

  test('when METRICS_TOKEN is set in production, then the API port serves /metrics to it too', () => {
    const token = 'a-metrics-token-long-enough-0123';
    expect(loadConfig({ NODE_ENV: 'production', METRICS_TOKEN: token }).metrics).toEqual({
      onApiPort: true,
      port: 9100,
      token,
    });
    expect(loadConfig({ NODE_ENV: 'production', METRICS_TOKEN: token, METRICS_PORT: 'off' }).metrics).toEqual(
      { onApiPort: true, token },
    );
  });

  test('when METRICS_PORT is set, then it is used in any environment', () => {
    expect(loadConfig({ METRICS_PORT: '9200' }).metrics).toEqual({ onApiPort: true, port: 9200 });
    expect(loadConfig({ NODE_ENV: 'production', METRICS_PORT: 'off' }).metrics).toEqual({
      onApiPort: false,
    });
  });

  test.each([
    [{ METRICS_PORT: '8080' }, /"METRICS_PORT" must differ from "PORT"/],
    [{ PORT: '9100', NODE_ENV: 'production' }, /"METRICS_PORT" must differ from "PORT"/],
    [{ METRICS_PORT: 'none' }, /"METRICS_PORT"/],
    [{ METRICS_TOKEN: 'short-secret' }, /"METRICS_TOKEN" length must be at least 24 characters long/],
    [
      { METRICS_TOKEN: 'has a space in it but long enough' },
      /"METRICS_TOKEN" must be of the form printable ASCII/,
    ],
  ])('when the metrics settings are %p, then loading fails naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
    expect(() => loadConfig(env)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });
});

describe('loadConfig: TRUST_PROXY', () => {
  test.each([
    [{}, false],
    [{ TRUST_PROXY: 'false' }, false],
    [{ TRUST_PROXY: 'off' }, false],
    [{ TRUST_PROXY: '0' }, false],
    [{ TRUST_PROXY: '1' }, 1],
    [{ TRUST_PROXY: '2' }, 2],
    [{ TRUST_PROXY: 'loopback' }, ['loopback']],
    [{ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,loopback' }, ['10.0.0.0/8', '192.168.1.7', 'loopback']],
    [{ TRUST_PROXY: 'uniquelocal,linklocal,fd00::/8,::1' }, ['uniquelocal', 'linklocal', 'fd00::/8', '::1']],
  ])('when the environment is %p, then the API trusts %p', (env, trustProxy) => {
    expect(loadConfig(env).api.trustProxy).toEqual(trustProxy);
  });

  test.each([
    ['true', /"TRUST_PROXY" true would believe any X-Forwarded-For/],
    ['33', /"TRUST_PROXY" must be off, a number of proxies from 1 to 32/],
    [
      '10.0.0.0/33',
      /"TRUST_PROXY": "10.0.0.0\/33" is not an address, a subnet or one of loopback, linklocal, uniquelocal/,
    ],
    ['127.1', /"TRUST_PROXY": "127.1" is not an address/],
    ['proxy.internal', /"TRUST_PROXY": "proxy.internal" is not an address/],
    ['10.0.0.1,,', /"TRUST_PROXY": "" is not an address/],
  ])('when TRUST_PROXY is %p, then loading fails naming it', (value, message) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(message);
  });
});

describe('loadConfig: WeChat Pay', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const merchantPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const platformPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const full = {
    WECHATPAY_SP_MCHID: '1900000100',
    WECHATPAY_SP_APPID: 'wx8888888888888888',
    WECHATPAY_MERCHANT_SERIAL: '3775b6a45acd588826d15e583a95f5dd00000000',
    WECHATPAY_MERCHANT_PRIVATE_KEY: merchantPem,
    WECHATPAY_APIV3_KEY: 'durapayTestApiV3Key0123456789abc',
    WECHATPAY_PUBLIC_KEY_ID: 'PUB_KEY_ID_0114232134912410000000000000',
    WECHATPAY_PUBLIC_KEY: platformPem,
  };

  test('when WECHATPAY_SP_MCHID is not set, then there is no WeChat Pay account', () => {
    expect(loadConfig({}).wechatpay).toBeUndefined();
  });

  test('when every setting is given, then the account is read, the serial upper-cased and the base URL defaulted', () => {
    expect(loadConfig(full).wechatpay).toEqual({
      baseUrl: 'https://api.mch.weixin.qq.com',
      spMchid: '1900000100',
      spAppid: 'wx8888888888888888',
      merchantSerial: '3775B6A45ACD588826D15E583A95F5DD00000000',
      merchantPrivateKey: merchantPem,
      apiV3Key: 'durapayTestApiV3Key0123456789abc',
      publicKeyId: 'PUB_KEY_ID_0114232134912410000000000000',
      publicKey: platformPem,
      platformCertificates: false,
    });
  });

  test('when WECHATPAY_PLATFORM_CERTIFICATES is download, then no public key is needed and certificate mode is on', () => {
    const { WECHATPAY_PUBLIC_KEY_ID: _id, WECHATPAY_PUBLIC_KEY: _key, ...rest } = full;
    const config = loadConfig({ ...rest, WECHATPAY_PLATFORM_CERTIFICATES: 'download' }).wechatpay;
    expect(config).toMatchObject({ platformCertificates: true });
    expect(config?.publicKey).toBeUndefined();
  });

  test('when the API v2 key and the papay plan are set, then recurring contracts are configured; without them, none', () => {
    const key = 'k'.repeat(32);
    expect(
      loadConfig({ ...full, WECHATPAY_APIV2_KEY: key, WECHATPAY_PAPAY_PLAN_ID: '12535' }).wechatpay?.papay,
    ).toEqual({ apiV2Key: key, planId: '12535' });
    expect(loadConfig(full).wechatpay?.papay).toBeUndefined();
  });

  test('when both a public key and certificate download are set, then both are trusted', () => {
    expect(loadConfig({ ...full, WECHATPAY_PLATFORM_CERTIFICATES: 'download' }).wechatpay).toMatchObject({
      publicKeyId: full.WECHATPAY_PUBLIC_KEY_ID,
      platformCertificates: true,
    });
  });

  test('when a key is given on one line with \\n escapes, then it is read as the PEM it is', () => {
    const oneLine = merchantPem.trimEnd().replaceAll('\n', '\\n');
    expect(
      loadConfig({ ...full, WECHATPAY_MERCHANT_PRIVATE_KEY: oneLine }).wechatpay?.merchantPrivateKey,
    ).toBe(merchantPem.trimEnd());
  });

  test('when keys are given as files, then they are read from the files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-wx-'));
    fs.writeFileSync(path.join(dir, 'key.pem'), merchantPem);
    fs.writeFileSync(path.join(dir, 'pub.pem'), platformPem);
    const { WECHATPAY_MERCHANT_PRIVATE_KEY: _k, WECHATPAY_PUBLIC_KEY: _p, ...rest } = full;
    const config = loadConfig(
      { ...rest, WECHATPAY_MERCHANT_PRIVATE_KEY_FILE: 'key.pem', WECHATPAY_PUBLIC_KEY_FILE: 'pub.pem' },
      dir,
    );
    expect(config.wechatpay).toMatchObject({ merchantPrivateKey: merchantPem, publicKey: platformPem });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test.each([
    [
      'a required setting is missing',
      { WECHATPAY_MERCHANT_SERIAL: undefined },
      /"WECHATPAY_MERCHANT_SERIAL" is required/,
    ],
    [
      'the public key id is given without the key',
      { WECHATPAY_PUBLIC_KEY: undefined },
      /"WECHATPAY_PUBLIC_KEY_ID" and "WECHATPAY_PUBLIC_KEY" \(or "WECHATPAY_PUBLIC_KEY_FILE"\) go together/,
    ],
    [
      'neither a public key nor certificate download is set',
      { WECHATPAY_PUBLIC_KEY: undefined, WECHATPAY_PUBLIC_KEY_ID: undefined },
      /unless "WECHATPAY_PLATFORM_CERTIFICATES" is "download"/,
    ],
    [
      'WECHATPAY_PLATFORM_CERTIFICATES is something other than download',
      { WECHATPAY_PLATFORM_CERTIFICATES: 'yes' },
      /WECHATPAY_PLATFORM_CERTIFICATES/,
    ],
    [
      'a key is given both inline and as a file',
      { WECHATPAY_PUBLIC_KEY_FILE: '/nonexistent' },
      /set "WECHATPAY_PUBLIC_KEY" or "WECHATPAY_PUBLIC_KEY_FILE", not both/,
    ],
    [
      'the private key is not a key',
      { WECHATPAY_MERCHANT_PRIVATE_KEY: 'not-a-key-SECRETVALUE' },
      /"WECHATPAY_MERCHANT_PRIVATE_KEY" is not an RSA private key/,
    ],
    [
      'the APIv3 key is not 32 characters',
      { WECHATPAY_APIV3_KEY: 'short-SECRETVALUE' },
      /WECHATPAY_APIV3_KEY/,
    ],
    ['the merchant id is not digits', { WECHATPAY_SP_MCHID: 'abc' }, /WECHATPAY_SP_MCHID/],
    [
      'the merchant private key is given as WeChat Pay public key',
      { WECHATPAY_PUBLIC_KEY: merchantPem },
      /"WECHATPAY_PUBLIC_KEY" is not an RSA public key/,
    ],
    [
      'the APIv3 key is 32 characters but not ASCII',
      { WECHATPAY_APIV3_KEY: '密'.repeat(32) },
      /32 ASCII characters/,
    ],
    [
      'the API v2 key is given without the papay plan',
      { WECHATPAY_APIV2_KEY: 'A'.repeat(22) + 'SECRETVALUE' },
      /"WECHATPAY_APIV2_KEY" \(or "WECHATPAY_APIV2_KEY_FILE"\) and "WECHATPAY_PAPAY_PLAN_ID" go together/,
    ],
    ['the papay plan is given without the API v2 key', { WECHATPAY_PAPAY_PLAN_ID: '12535' }, /go together/],
    [
      'the API v2 key is not 32 characters',
      { WECHATPAY_APIV2_KEY: 'short-SECRETVALUE', WECHATPAY_PAPAY_PLAN_ID: '12535' },
      /"WECHATPAY_APIV2_KEY" must be 32 ASCII characters/,
    ],
    [
      'the papay plan is not digits',
      { WECHATPAY_APIV2_KEY: 'A'.repeat(22) + 'SECRETVALUE', WECHATPAY_PAPAY_PLAN_ID: 'plan-1' },
      /WECHATPAY_PAPAY_PLAN_ID/,
    ],
  ])('when %s, then start-up fails naming the setting, never its value', (_what, change, message) => {
    const env = { ...full, ...change } as Record<string, string | undefined>;
    let error: unknown;
    try {
      loadConfig(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toMatch(/SECRETVALUE|BEGIN/);
  });
});

describe('loadConfig: Alipay', () => {
  const app = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const alipay = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const appPem = app.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const alipayPem = alipay.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const full = {
    ALIPAY_APP_ID: '2021000000000001',
    ALIPAY_PRIVATE_KEY: appPem,
    ALIPAY_PUBLIC_KEY: alipayPem,
  };

  test('when ALIPAY_APP_ID is not set, then there is no Alipay app; when it is, then the gateway defaults to Alipay', () => {
    expect(loadConfig({}).alipay).toBeUndefined();
    expect(loadConfig(full).alipay).toEqual({
      gatewayUrl: 'https://openapi.alipay.com/gateway.do',
      appId: '2021000000000001',
      privateKey: appPem,
      alipayPublicKey: alipayPem,
    });
  });

  test("when the keys come as the bare base64 of Alipay's key tool (PKCS#1 or PKCS#8), then they are read as PEM", () => {
    const bare = (der: Buffer) => der.toString('base64');
    const pkcs1 = bare(app.privateKey.export({ type: 'pkcs1', format: 'der' }));
    const pkcs8 = bare(app.privateKey.export({ type: 'pkcs8', format: 'der' }));
    const spki = bare(alipay.publicKey.export({ type: 'spki', format: 'der' }));
    for (const privateKey of [pkcs1, pkcs8]) {
      expect(
        loadConfig({ ...full, ALIPAY_PRIVATE_KEY: privateKey, ALIPAY_PUBLIC_KEY: spki }).alipay,
      ).toMatchObject({
        privateKey: appPem,
        alipayPublicKey: alipayPem,
      });
    }
  });

  test.each([
    [
      'the private key is missing',
      { ALIPAY_PRIVATE_KEY: undefined },
      /"ALIPAY_PRIVATE_KEY" \(or "ALIPAY_PRIVATE_KEY_FILE"\) is required/,
    ],
    [
      'the private key is not a key',
      { ALIPAY_PRIVATE_KEY: 'SECRETVALUE' },
      /"ALIPAY_PRIVATE_KEY" is not an RSA private key/,
    ],
    [
      'the app private key is given as Alipay public key',
      { ALIPAY_PUBLIC_KEY: appPem },
      /"ALIPAY_PUBLIC_KEY" is not an RSA public key/,
    ],
    ['the app id is not digits', { ALIPAY_APP_ID: 'app' }, /ALIPAY_APP_ID/],
    ['the seller id is not a PID', { ALIPAY_SELLER_ID: '1234' }, /ALIPAY_SELLER_ID/],
  ])('when %s, then start-up fails naming the setting, never its value', (_what, change, message) => {
    let error: unknown;
    try {
      loadConfig({ ...full, ...change } as Record<string, string | undefined>);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toMatch(/SECRETVALUE|BEGIN/);
  });
});

describe('loadConfig: tracing', () => {
  test('when no OTEL variable is set, then tracing is off', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
  });

  test.each([
    ['http://collector:4318', 'http://collector:4318/v1/traces'],
    ['http://collector:4318/', 'http://collector:4318/v1/traces'],
    ['https://otel.example.com/otlp', 'https://otel.example.com/otlp/v1/traces'],
  ])(
    'when OTEL_EXPORTER_OTLP_ENDPOINT is %s, then spans go to %s as protobuf from "durapay"',
    (endpoint, url) => {
      expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }).tracing).toEqual({
        tracesUrl: url,
        protocol: 'http/protobuf',
        serviceName: 'durapay',
      });
    },
  );

  test('when the traces endpoint and protocol are set beside the general ones, then they win, the endpoint as given', () => {
    const tracing = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://general:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom/path',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'durapay-eu',
    }).tracing;
    expect(tracing).toEqual({
      tracesUrl: 'http://traces:4318/custom/path',
      protocol: 'http/json',
      serviceName: 'durapay-eu',
    });
  });

  test('when only the general protocol is set, then the traces use it', () => {
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
        .tracing?.protocol,
    ).toBe('http/json');
  });

  test("when OTEL_TRACES_EXPORTER is otlp and no endpoint is set, then spans go to the spec's default collector", () => {
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing?.tracesUrl).toBe(
      'http://localhost:4318/v1/traces',
    );
  });

  test.each([
    [{ OTEL_SDK_DISABLED: 'true' }],
    [{ OTEL_SDK_DISABLED: 'TRUE' }],
    [{ OTEL_TRACES_EXPORTER: 'none' }],
  ])('when an endpoint is set but %p, then tracing is off', (off) => {
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces', ...off }).tracing,
    ).toBeUndefined();
  });

  test('when OTEL_SDK_DISABLED is false, then an endpoint turns tracing on', () => {
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'false' }).tracing,
    ).toBeDefined();
  });

  test.each([
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', /"OTEL_EXPORTER_OTLP_PROTOCOL" must be one of/],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'grpc', /"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" must be one of/],
    ['OTEL_TRACES_EXPORTER', 'console', /"OTEL_TRACES_EXPORTER" must be one of/],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', /"OTEL_EXPORTER_OTLP_ENDPOINT" must be a valid uri/],
    ['OTEL_SDK_DISABLED', 'maybe', /"OTEL_SDK_DISABLED" must be a boolean/],
  ])('when %s is %p, then loading fails with a message naming it', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  test('when an endpoint with credentials is invalid, then the message does not echo them', () => {
    expect(() =>
      loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://user:hunter2@collector:4317' }),
    ).toThrow(expect.objectContaining({ message: expect.not.stringContaining('hunter2') }));
  });
});
