/* The `durapay` command. Human-facing output goes to stderr; machine output (JSON) to stdout. */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { runApi } from '../api/server';
import { ConfigError, loadConfig, type Config } from '../platform/config';
import { describeDatabaseUrl } from '../platform/db';
import { resolveMasterKey } from '../platform/crypto/master-key';
import { migrateUp } from '../platform/db/migrate';
import { resolvePayloadKeys } from '../platform/crypto/keyring';
import { runningPostmaster, startEmbeddedPostgres } from './dev/embedded-postgres';
import { createLogger, type Logger } from '../platform/logger';
import { connectClient } from '../platform/temporal';
import { bundleWorkflows } from '../worker';
import { runWorkerProcess } from '../worker/main';
import { diagnosticWorkflowId, type DiagnosticResult } from '../diagnostics/messages';
import {
  migrateSandboxUpstream,
  serveAlipaySandbox,
  serveSandboxUpstream,
  serveWechatpaySandbox,
} from '../sandbox-hook';
import { registerAppCommands } from './apps';
import { describeSealed, sealLegacyApplicantData } from './applicant-data';
import { registerKeyCommands } from './keys';
import { withDatabase } from './database';
import { runStart } from './start';

function boot(role: string): { config: Config; logger: Logger } {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`durapay: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  return {
    config,
    logger: createLogger({ level: config.logLevel, defaultMeta: { service: 'durapay', role } }),
  };
}

function fail(err: unknown): never {
  console.error(`durapay: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}

const program = new Command()
  .name('durapay')
  .description('durapay payment gateway')
  .showHelpAfterError()
  .enablePositionalOptions();

program
  .command('start')
  .description('run everything for development: Postgres, Temporal dev server, migrations, worker and API')
  .action(async () => {
    const { config, logger } = boot('supervisor');
    await runStart(config, logger);
  });

program
  .command('api')
  .description('run the HTTP API (needs DATABASE_URL and TEMPORAL_ADDRESS)')
  .action(async () => {
    const { config, logger } = boot('api');
    const api = await runApi(config, logger).catch(fail);
    const stop = async () => {
      logger.info('api stopping');
      await api.stop();
      process.exit(0);
    };
    process.once('SIGINT', () => void stop());
    process.once('SIGTERM', () => void stop());
    process.once('disconnect', () => void stop());
  });

program
  .command('worker')
  .description('run the Temporal worker (needs DATABASE_URL and TEMPORAL_ADDRESS)')
  .action(async () => {
    const { config, logger } = boot('worker');
    await runWorkerProcess(config, logger).catch(fail);
    process.exit(0);
  });

program
  .command('migrate')
  .description(
    "apply pending database migrations (to DATABASE_URL, or to the embedded Postgres), the sandbox upstream's too when it is enabled, then seal applicant data still in plain text",
  )
  .action(async () => {
    const { config, logger } = boot('migrate');
    let keyring;
    try {
      keyring = resolvePayloadKeys(config);
    } catch (err) {
      fail(err);
    }
    await withDatabase(config, logger, async (db, url) => {
      const applied = [
        ...(await migrateUp(db.sequelize, logger)),
        // The tables of the simulated sandbox upstream, which the API mounts when it is enabled.
        ...(await migrateSandboxUpstream(config, db.sequelize, logger)),
      ];
      console.error(
        `${describeDatabaseUrl(url)}: ${applied.length ? applied.join(', ') : 'already up to date'}`,
      );
      // Rows written before applicant data was sealed (0012-sealed-applicant-data) are sealed now.
      console.error(describeSealed(await sealLegacyApplicantData(db, keyring), keyring.current.id));
    }).catch(fail);
  });

program
  .command('postgres')
  .description('run only the embedded Postgres in the foreground and print its URL (for tools and tests)')
  .option('--data-dir <dir>', 'data directory (default: <DURAPAY_DATA_DIR>/postgres)')
  .option('--port <port>', 'port (default: DURAPAY_PG_PORT)')
  .option('--database <name>', 'database to create', 'durapay')
  .action(async (opts: { dataDir?: string; port?: string; database: string }) => {
    const { config, logger } = boot('postgres');
    const pg = await startEmbeddedPostgres({
      dataDir: path.resolve(opts.dataDir ?? path.join(config.dataDir, 'postgres')),
      port: opts.port ? Number(opts.port) : config.database.embeddedPort,
      database: opts.database,
      logger,
    }).catch(fail);
    process.stdout.write(`${JSON.stringify({ url: pg.url })}\n`);
    let stopping = false;
    const stop = async () => {
      stopping = true;
      await pg.stop();
      process.exit(0);
    };
    // A postmaster that dies (killed, out of memory) takes this process with it, so that the
    // supervisor sees the exit and starts Postgres again instead of serving errors.
    const dataDir = path.resolve(opts.dataDir ?? path.join(config.dataDir, 'postgres'));
    setInterval(() => {
      if (stopping || runningPostmaster(dataDir)) return;
      logger.error('the Postgres server process is gone; exiting so that it can be started again', {
        data_dir: dataDir,
      });
      process.exit(1);
    }, 500).unref();
    process.once('SIGINT', () => void stop());
    process.once('SIGTERM', () => void stop());
    process.once('disconnect', () => void stop());
  });

program
  .command('doctor')
  .description('run a diagnostic workflow end to end: worker, timer, database writes')
  .option('--pause-ms <ms>', 'pause between the two steps', '500')
  .action(async (opts: { pauseMs: string }) => {
    const { config } = boot('doctor');
    if (!config.temporal.address)
      fail('set TEMPORAL_ADDRESS (npm start prints it) to the server the worker uses');
    const { client, connection } = await connectClient(
      { address: config.temporal.address, namespace: config.temporal.namespace },
      resolvePayloadKeys(config),
    ).catch(fail);
    const runId = randomUUID();
    const started = Date.now();
    try {
      const result: DiagnosticResult = await client.workflow.execute('diagnosticWorkflow', {
        taskQueue: config.temporal.taskQueue,
        workflowId: diagnosticWorkflowId(runId),
        args: [{ runId, pauseMs: Number(opts.pauseMs) }],
        workflowExecutionTimeout: '1 minute',
      });
      console.error(
        `ok: workflow ${diagnosticWorkflowId(runId)} wrote steps ${result.steps.join(', ')} in ${Date.now() - started} ms`,
      );
    } catch (err) {
      fail(
        `${err instanceof Error ? err.message : String(err)} (the worker serves the diagnostic ` +
          'workflow only when DURAPAY_DIAGNOSTIC_WORKFLOWS is on, the default outside production)',
      );
    } finally {
      await connection.close();
    }
  });

registerAppCommands(program, boot, fail);
registerKeyCommands(program, boot, fail);

program
  .command('sandbox')
  .argument(
    '[channel]',
    'sandbox (the simulated sandbox channel), wechatpay (the offline WeChat Pay v3) or alipay (the offline Alipay gateway)',
    'sandbox',
  )
  .description(
    'run a simulated upstream on its own: the sandbox channel (for SANDBOX_BASE_URL), the offline WeChat Pay v3 sandbox (for WECHATPAY_*) or the offline Alipay gateway (for ALIPAY_*)',
  )
  .option('--port <port>', 'port to listen on (default 8090, wechatpay 8091, alipay 8092)')
  .option(
    '--keys <dir>',
    'wechatpay, alipay: where its keys are kept (default .durapay/wechatpay-sandbox, .durapay/alipay-sandbox)',
  )
  .option(
    '--platform-certificates',
    'wechatpay: name the signing key by platform-certificate serial (for WECHATPAY_PLATFORM_CERTIFICATES=download)',
  )
  .action(async (channel: string, opts: { port?: string; keys?: string; platformCertificates?: boolean }) => {
    const { config, logger } = boot('sandbox');
    if (channel !== 'sandbox' && channel !== 'wechatpay' && channel !== 'alipay') {
      fail('the channel must be sandbox, wechatpay or alipay');
    }
    const port = Number(opts.port ?? { sandbox: '8090', wechatpay: '8091', alipay: '8092' }[channel]);
    if (!Number.isInteger(port) || port < 1 || port > 65535) fail('--port must be a port number');
    if (channel === 'alipay') {
      const gateway = await serveAlipaySandbox(
        config,
        { port, host: '127.0.0.1', keyDir: opts.keys },
        logger,
      ).catch(fail);
      console.error(`offline Alipay gateway on ${gateway.url}/gateway.do`);
      console.error('durapay settings for it (the API and the worker):');
      for (const [key, value] of Object.entries(gateway.settings)) console.error(`  ${key}=${value}`);
      await new Promise((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await gateway.close();
      process.exit(0);
    }
    if (channel === 'wechatpay') {
      const sandbox = await serveWechatpaySandbox(
        config,
        {
          port,
          host: '127.0.0.1',
          keyDir: opts.keys,
          platformIdentity: opts.platformCertificates ? 'certificate' : 'public_key',
        },
        logger,
      ).catch(fail);
      console.error(`offline WeChat Pay v3 sandbox on ${sandbox.url}`);
      console.error('durapay settings for it (the API and the worker):');
      for (const [key, value] of Object.entries(sandbox.settings)) console.error(`  ${key}=${value}`);
      await new Promise((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await sandbox.close();
      process.exit(0);
    }
    const masterKey = resolveMasterKey(config);
    await withDatabase(config, logger, async (db) => {
      const sandbox = await serveSandboxUpstream(
        config,
        masterKey,
        db,
        { port, host: '127.0.0.1' },
        logger.child({ component: 'sandbox' }),
      );
      console.error(
        `sandbox channel on ${sandbox.url} (set SANDBOX_BASE_URL to this for the API and worker)`,
      );
      await new Promise((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await sandbox.close();
    }).catch(fail);
    process.exit(0);
  });

program
  .command('bundle')
  .description(
    'bundle the workflow code into one file for DURAPAY_WORKFLOW_BUNDLE (done in the Docker build)',
  )
  .requiredOption('--out <file>', 'where to write the bundle')
  .option('--diagnostics', 'also bundle the diagnostic (doctor) and benchmark workflows')
  .action(async (opts: { out: string; diagnostics?: boolean }) => {
    const { logger } = boot('bundle');
    const code = await bundleWorkflows(logger, { diagnostics: opts.diagnostics === true }).catch(fail);
    fs.mkdirSync(path.dirname(path.resolve(opts.out)), { recursive: true });
    fs.writeFileSync(opts.out, code);
    console.error(`wrote ${opts.out} (${(code.length / 1024).toFixed(0)} KiB)`);
  });

program.parseAsync(process.argv).catch(fail);
