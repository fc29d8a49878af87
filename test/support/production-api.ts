import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runApi } from '../../src/api/server';
import { loadConfig, type Config } from '../../src/config';
import { captureLogger, type TestStack } from './harness';
import { responseConformance } from './openapi-conformance';
import { freePort } from './ports';
import { globalState } from './state';

export interface ProductionApi {
  baseUrl: string;
  config: Config;
  logs: () => string[];
  stop(): Promise<void>;
}

/**
 * The production API process (`durapay api` with NODE_ENV=production), run in this one from the
 * settings `env` adds, against the stack's database and Temporal: what its configuration does,
 * from the variables to the answers.
 */
export async function startProductionApi(
  stack: TestStack,
  env: Record<string, string>,
): Promise<ProductionApi> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-production-api-'));
  const config = loadConfig({
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    DATABASE_URL: stack.database.url,
    TEMPORAL_ADDRESS: globalState().temporalAddress,
    DURAPAY_MASTER_KEY: stack.masterKey.toString('base64'),
    DURAPAY_PAYLOAD_KEYS: stack.payloadKeys.env,
    DURAPAY_DATA_DIR: dataDir,
    ...env,
  });
  const { logger, lines } = captureLogger();
  const api = await runApi(config, logger);
  const baseUrl = `http://127.0.0.1:${config.api.port}`;
  // Where this API has no /metrics route, its 404 is an unknown route's, not the document's.
  responseConformance().register(baseUrl, config.metrics.onApiPort ? undefined : ['/metrics']);
  return {
    baseUrl,
    config,
    logs: lines,
    async stop() {
      await api.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
