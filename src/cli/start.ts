import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../config';
import { describeConfiguredChannels } from '../channels/registry';
import { connectDatabase, describeDatabaseUrl } from '../platform/db';
import { migrateUp } from '../platform/db/migrate';
import {
  developmentEnv,
  migrateSandboxUpstream,
  offlineUpstream,
  upstreamEnabledVariable,
} from '../sandbox-hook';
import { spawnEmbeddedPostgres } from './dev/embedded-postgres';
import { waitForReady } from '../platform/net';
import { DURAPAY_BIN } from '../platform/paths';
import { isAlive } from '../platform/process';
import type { Logger } from '../platform/logger';
import { resolveMasterKey } from '../platform/crypto/master-key';
import { resolvePayloadKeys } from '../platform/crypto/keyring';
import { describeSealed, sealLegacyApplicantData } from './applicant-data';
import { DEV_APP_FILE, readDevApp } from './credentials';
import { ensureDevApp } from './dev-app';
import { ensureTemporalCli, startDevServer } from './dev/temporal-cli';
import { codecTokenFile, resolveCodecToken } from '../platform/crypto/codec-token';
import { Supervised } from './dev/supervise';

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A dev server left running by a supervisor that was killed outright is stopped before a new one starts. */
function stopStaleDevServer(pidFile: string): void {
  try {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (pid > 0 && cmdline.includes('start-dev') && isAlive(pid)) {
      say(`Stopping a Temporal dev server left over from an earlier run (pid ${pid})`);
      process.kill(pid, 'SIGKILL');
    }
  } catch {
    // No pid file, or the process is gone: nothing to clean up.
  }
}

/**
 * Node flags the supervisor hands on to the worker and the API: profiling and heap size, so that
 * `node --cpu-prof bin/durapay.js start` profiles every process (NODE_OPTIONS may not carry
 * --cpu-prof). Flags that would clash between processes, like --inspect's port, are not passed.
 */
export function inheritedNodeFlags(execArgv: readonly string[]): string[] {
  return execArgv.filter((flag) => /^--(cpu-prof|heap-prof|max-old-space-size)/.test(flag));
}

/**
 * The all-in-one development supervisor behind `npm start`: Postgres (embedded unless
 * DATABASE_URL), a Temporal dev server (unless TEMPORAL_ADDRESS), migrations, then the worker
 * and the API as child processes. A child that crashes is restarted with backoff, each time
 * with a line saying so, up to a limit, past which the stack stops with the reason. Ctrl-C
 * stops them in order: API and worker first, so in-flight work finishes against a live server
 * and database, then Temporal, then Postgres.
 */
export async function runStart(config: Config, logger: Logger): Promise<void> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const devPidFile = path.join(config.dataDir, 'temporal-dev.pid');
  let pg: Supervised | undefined;
  let dev: Supervised | undefined;
  let devUiUrl: string | undefined;
  const children: Supervised[] = [];
  let stopping = false;

  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    say('Stopping durapay …');
    await Promise.all(children.map((c) => c.stop()));
    if (dev) {
      await dev.stop();
      fs.rmSync(devPidFile, { force: true });
    }
    if (pg) await pg.stop();
    say('Stopped.');
    process.exit(exitCode);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  const giveUp = (reason: string) => {
    say(`durapay is stopping: ${reason}.`);
    void stopAll(1);
  };

  try {
    let databaseUrl = config.database.url;
    if (!databaseUrl) {
      say(`Starting embedded Postgres on 127.0.0.1:${config.database.embeddedPort} …`);
      let url = '';
      pg = new Supervised({
        name: 'embedded Postgres',
        launch: async () => {
          const spawned = await spawnEmbeddedPostgres({
            dataDir: path.join(config.dataDir, 'postgres'),
            port: config.database.embeddedPort,
            database: 'durapay',
          });
          url = spawned.url;
          return spawned.process;
        },
        say,
        giveUp,
        stopGraceMs: 30_000,
      });
      await pg.start();
      databaseUrl = url;
    }

    let temporalAddress = config.temporal.address;
    if (!temporalAddress) {
      const cliPath = await ensureTemporalCli(
        { cliPath: config.temporal.cliPath, cacheDir: config.cacheDir },
        say,
      );
      stopStaleDevServer(devPidFile);
      say(`Starting the Temporal dev server on 127.0.0.1:${config.temporal.devServerPort} …`);
      dev = new Supervised({
        name: 'Temporal dev server',
        // The same port and SQLite file each time: workflows, timers and history survive a crash.
        launch: async () => {
          const started = await startDevServer({
            cliPath,
            port: config.temporal.devServerPort,
            uiPort: config.temporal.uiPort,
            dbFile: path.join(config.dataDir, 'temporal.sqlite'),
            logFile: path.join(config.dataDir, 'temporal.log'),
            namespace: config.temporal.namespace,
            // The UI decodes sealed payloads through the API's codec server, on the host it is
            // printed with (a session cookie is kept per host).
            codecEndpoint: `http://localhost:${config.api.port}/codec`,
          });
          fs.writeFileSync(devPidFile, String(started.process.pid));
          temporalAddress = started.address;
          devUiUrl = started.uiUrl;
          return started.process;
        },
        say,
        giveUp,
        stopGraceMs: 10_000,
      });
      await dev.start();
    }

    const apiUrl = `http://localhost:${config.api.port}`;
    // Made here, before the API reads it, so that its file can be named below.
    const codecToken = resolveCodecToken(config);
    const masterKey = resolveMasterKey(config);
    // Made here (in development, once into the data directory) before the worker and API read it.
    const payloadKeys = resolvePayloadKeys(config);
    const db = connectDatabase(databaseUrl);
    let createdDevApp;
    try {
      const applied = [
        ...(await migrateUp(db.sequelize, logger)),
        // Development hook: the simulated sandbox upstream's own tables, in the same database.
        ...(await migrateSandboxUpstream(config, db.sequelize, logger)),
      ];
      say(`Database ${describeDatabaseUrl(databaseUrl)}: ${applied.length} migration(s) applied`);
      // Rows written before applicant data was sealed (0012-sealed-applicant-data) are sealed now.
      const sealed = await sealLegacyApplicantData(db, payloadKeys);
      if (sealed.merchants + sealed.applications > 0) say(describeSealed(sealed, payloadKeys.current.id));
      createdDevApp = await ensureDevApp(db, masterKey, config.dataDir, apiUrl);
    } finally {
      await db.close();
    }

    // Development hook: the offline WeChat Pay and Alipay upstreams, when no real account is configured.
    const offline = developmentEnv(config);
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      DURAPAY_ENV: config.env,
      ...offline,
    };
    for (const role of ['worker', 'api'] as const) {
      const child = new Supervised({
        name: role === 'api' ? 'API' : 'worker',
        // Own process group (detached), so a terminal's Ctrl-C reaches only the supervisor,
        // which then stops the children in order; the IPC channel lets them notice if it dies.
        launch: async () =>
          spawn(process.execPath, [...inheritedNodeFlags(process.execArgv), DURAPAY_BIN, role], {
            env,
            detached: true,
            stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          }),
        say,
        giveUp,
        stopGraceMs: 15_000,
      });
      await child.start();
      children.push(child);
    }

    await waitForReady(`http://127.0.0.1:${config.api.port}/readyz`, {
      timeoutMs: 120_000,
      child: children[1]!.process,
      what: 'the API',
    });
    say('');
    say('durapay is running');
    say(`  API           ${apiUrl}   (readiness: ${apiUrl}/readyz)`);
    // The operator console (docs/console.md); it has no operator until one is made at the command line.
    say(
      `  Console       ${apiUrl}/console   (first operator: npx durapay operators create --username NAME --role admin)`,
    );
    if (devUiUrl) say(`  Temporal UI   ${devUiUrl}`);
    else say(`  Temporal      ${temporalAddress}`);
    if (codecToken !== undefined) {
      say(
        `  Codec server  ${apiUrl}/codec/login   (sign in to read payloads in the UI; token ${config.codec.token !== undefined ? 'from DURAPAY_CODEC_TOKEN' : `in ${codecTokenFile(config)}`})`,
      );
    }
    say(
      `  Postgres      ${pg ? `embedded, data in ${path.join(config.dataDir, 'postgres')}` : describeDatabaseUrl(databaseUrl)}`,
    );
    // Each channel as the API and the worker see it: the offline upstream's settings included.
    for (const { code, label, where } of describeConfiguredChannels(
      loadConfig({ ...process.env, ...offline }),
    )) {
      const upstream = offline[upstreamEnabledVariable(code)] ? offlineUpstream(code) : undefined;
      say(`  ${label.padEnd(14)}${upstream ? `${upstream.shortTitle} at ` : ''}${where}`);
    }
    const devAppPath = path.join(config.dataDir, DEV_APP_FILE);
    if (createdDevApp) {
      say('');
      say('Created the app "dev" (scopes payments, merchants). Its secrets are shown this once:');
      say(`  app_id          ${createdDevApp.app_id}`);
      say(`  secret          ${createdDevApp.secret}`);
      say(`  webhook_secret  ${createdDevApp.webhook_secret}`);
      say(`  (also saved in ${devAppPath}; \`npx durapay sign\` uses it by default)`);
    } else {
      const dev = readDevApp(config.dataDir);
      if (dev) say(`  Dev app       ${dev.app_id} (credentials in ${devAppPath})`);
    }
    say('Press Ctrl-C to stop.');
    say('');
  } catch (err) {
    say(`durapay could not start: ${err instanceof Error ? err.message : String(err)}`);
    await stopAll(1);
  }
}
