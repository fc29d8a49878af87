/**
 * Which offline channel upstreams the API mounts: each <CODE>_SANDBOX_ENABLED names a channel of
 * the upstream list, read by the configuration and mounted by the development hook; `npm start`
 * points every channel without an account at its upstream.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/platform/config';
import { createLogger } from '../../src/platform/logger';
import { channelSandboxUpstreams, developmentEnv } from '../../src/sandbox-hook';

const logger = createLogger({ level: 'error' });
let dataDir: string;

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-upstreams-'));
});
afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('when <CODE>_SANDBOX_ENABLED variables are set, then the configuration lists the channels set to true', () => {
  const config = loadConfig({ WECHATPAY_SANDBOX_ENABLED: 'true', ALIPAY_SANDBOX_ENABLED: 'false' });
  expect(config.sandbox.upstreams).toEqual(['wechatpay']);
  expect(loadConfig({}).sandbox.upstreams).toEqual([]);
});

test('when a <CODE>_SANDBOX_ENABLED is not a boolean, then the configuration refuses it by name', () => {
  expect(() => loadConfig({ ALIPAY_SANDBOX_ENABLED: 'sometimes' })).toThrow(ConfigError);
  expect(() => loadConfig({ ALIPAY_SANDBOX_ENABLED: 'sometimes' })).toThrow(/ALIPAY_SANDBOX_ENABLED/);
});

test('when a <CODE>_SANDBOX_ENABLED names a channel without an offline upstream, then mounting says which exist', () => {
  const config = loadConfig({ DURAPAY_DATA_DIR: dataDir, PAYPAL_SANDBOX_ENABLED: 'true' });
  expect(() => channelSandboxUpstreams(config, logger)).toThrow(
    'PAYPAL_SANDBOX_ENABLED names no offline upstream (there are: wechatpay, alipay)',
  );
});

test('when an upstream is enabled before its keys were made, then mounting says where they are missing', () => {
  const config = loadConfig({ DURAPAY_DATA_DIR: dataDir, WECHATPAY_SANDBOX_ENABLED: 'true' });
  expect(() => channelSandboxUpstreams(config, logger)).toThrow(
    `WECHATPAY_SANDBOX_ENABLED is set but there are no sandbox keys in ${path.join(dataDir, 'wechatpay-sandbox')}`,
  );
});

test('when development starts without channel accounts, then every upstream is enabled, its keys made, and its settings read back into the configuration', () => {
  const base = { DURAPAY_DATA_DIR: dataDir, PUBLIC_BASE_URL: 'http://127.0.0.1:8080' };
  const env = developmentEnv(loadConfig(base));
  expect(env).toMatchObject({ WECHATPAY_SANDBOX_ENABLED: 'true', ALIPAY_SANDBOX_ENABLED: 'true' });
  const config = loadConfig({ ...base, ...env });
  expect(config.sandbox.upstreams).toEqual(['wechatpay', 'alipay']);
  expect(config.wechatpay?.baseUrl).toBe('http://127.0.0.1:8080/wechatpay');
  expect(config.alipay?.gatewayUrl).toBe('http://127.0.0.1:8080/alipay/gateway.do');
  // The keys are now there, so both mount at their paths.
  expect(Object.keys(channelSandboxUpstreams(config, logger))).toEqual(['/wechatpay', '/alipay']);
  // Secrets by file, never in the variables.
  expect(Object.keys(env).filter((k) => /PRIVATE_KEY$|APIV3_KEY$/.test(k))).toEqual([]);
});

test('when a channel has a real account, then development leaves it alone and mounts only the others', () => {
  const base = { DURAPAY_DATA_DIR: dataDir, PUBLIC_BASE_URL: 'http://127.0.0.1:8080' };
  const first = developmentEnv(loadConfig(base));
  // A real Alipay app (its settings as the offline one wrote them stand in for it).
  const alipay = Object.fromEntries(
    Object.entries(first).filter(([k]) => k.startsWith('ALIPAY_') && k !== 'ALIPAY_SANDBOX_ENABLED'),
  );
  const env = developmentEnv(loadConfig({ ...base, ...alipay }));
  expect(env.WECHATPAY_SANDBOX_ENABLED).toBe('true');
  expect(Object.keys(env).filter((k) => k.startsWith('ALIPAY_'))).toEqual([]);
  expect(
    developmentEnv(
      loadConfig({
        ...base,
        DURAPAY_ENV: 'production',
        DURAPAY_MASTER_KEY: Buffer.alloc(32, 1).toString('base64'),
      }),
    ),
  ).toEqual({});
});
