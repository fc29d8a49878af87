/**
 * Provisions the real infrastructure once per test run: the Temporal CLI and server (built once
 * and cached), a Postgres (TEST_DATABASE_URL / DATABASE_URL, else an embedded one), a migrated
 * template database that each test file clones, a Temporal dev server with durapay's search
 * attributes and its UI, and the workflow bundle that every test worker reuses.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadConfig } from '../../src/config';
import { connectDatabase, databaseUrlFor } from '../../src/platform/db';
import { migrateUp } from '../../src/platform/db/migrate';
import { migrateSandbox } from '../../sandbox';
import { createLogger } from '../../src/platform/logger';
import { spawnEmbeddedPostgres } from '../../src/cli/dev/embedded-postgres';
import { devServerTuningArgs, ensureTemporalCli } from '../../src/cli/dev/temporal-cli';
import { ensureTemporalServer } from '../../src/cli/dev/temporal-server';
import { bundleWorkflows } from '../../src/worker';
import { ensureConsoleBuilt } from '../../src/platform/console-build';
import { writeConsoleApi } from '../../src/cli/dev/console-api';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/platform/workflow/definitions';
import { compileCheckout } from './compiled';
import { freePort } from './ports';
import { newPayloadKeyEntry } from '../../src/platform/crypto/keyring';
import type { GlobalState } from './state';

export default async function globalSetup(): Promise<void> {
  const say = (line: string) => process.stderr.write(`[setup] ${line}\n`);
  const started = Date.now();
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durapay-test-'));
  // Under root, Postgres runs as the `postgres` user, which must be able to reach its data dir.
  fs.chmodSync(workDir, 0o755);
  const config = loadConfig();

  // The CLI (its dev server runs most tests) and the Temporal server with its schema tool (the
  // cluster test runs the production topology) build side by side the first time; so does the
  // operator console that the API serves at /console, when its sources changed.
  const [cliPath] = await Promise.all([
    ensureTemporalCli({ cliPath: config.temporal.cliPath, cacheDir: config.cacheDir }, say),
    ensureTemporalServer(config.cacheDir, say),
    ensureConsoleBuilt(say, undefined, writeConsoleApi),
  ]);

  let adminUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
  let pg: GlobalState['pg'];
  if (!adminUrl) {
    say('starting an embedded Postgres for the tests');
    const spawned = await spawnEmbeddedPostgres({
      dataDir: path.join(workDir, 'postgres'),
      port: await freePort(),
      database: 'postgres',
    });
    pg = { pid: spawned.process.pid! };
    adminUrl = spawned.url;
  }

  const template = `durapay_tpl_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${template}"`);
  await admin.end();
  const db = connectDatabase(databaseUrlFor(adminUrl, template));
  await migrateUp(db.sequelize);
  // Every test file's API mounts the simulated sandbox upstream, whose tables are its own.
  await migrateSandbox(db.sequelize);
  await db.close();

  // The Temporal UI too, where operators find workflows by search attribute (the browser tests).
  const uiPort = await freePort();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cliPath },
      ui: true,
      uiPort,
      searchAttributes: SEARCH_ATTRIBUTE_KEYS,
      // Suggest continue-as-new after 120 events (the default is 4 096), so that the paid-order
      // tests (20 concurrent refunds and more) also prove that an order survives it.
      extraArgs: [
        '--log-level',
        'error',
        '--dynamic-config-value',
        'limit.historyCount.suggestContinueAsNew=120',
        ...devServerTuningArgs(),
      ],
    },
  });

  // The processes tests start (workers, the CLI, the tools' stacks) run the checkout compiled once.
  const compiledAt = Date.now();
  const compiled = compileCheckout(path.join(workDir, 'compiled'));
  say(`compiled ${compiled.files} files for the processes the tests start in ${Date.now() - compiledAt} ms`);

  const bundlePath = path.join(workDir, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, await bundleWorkflows(createLogger({ level: 'warn' }), { diagnostics: true }));

  const state: GlobalState = {
    workDir,
    adminUrl,
    template,
    temporalAddress: env.address,
    temporalUiUrl: `http://127.0.0.1:${uiPort}`,
    payloadKeys: newPayloadKeyEntry('test-1'),
    bundlePath,
    cliPath,
    compiled: { root: compiled.root, bin: compiled.bin },
    pg,
  };
  // Test files run in worker processes that inherit this environment.
  process.env.DURAPAY_TEST_STATE = JSON.stringify(state);
  (globalThis as Record<string, unknown>).__durapayEnv = env;
  say(`ready in ${((Date.now() - started) / 1000).toFixed(1)}s (Temporal ${env.address})`);
}
