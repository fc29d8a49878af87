/**
 * `npm run sandbox`: the simulated sandbox upstream alone, on a port of its own, configured by
 * its own settings only (a real channel knows nothing of the gateway's). It brings its tables up
 * to date in its own database (recorded in sandbox_migrations), then serves /sandbox until Ctrl-C.
 * Point the gateway at it with SANDBOX_BASE_URL and the same SANDBOX_SECRET.
 *
 * Messages for people go to stderr, log lines (JSON) to stdout, as with `durapay`.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { connectDatabase, describeDatabaseUrl } from '../src/platform/db';
import { createLogger } from '../src/platform/logger';
import { serveSandbox } from './server';

interface Options {
  port: number;
  host: string;
  databaseUrl?: string;
  publicBaseUrl?: string;
  refundDelayMs: number;
  transferConfirmWindowMs: number;
  logLevel: string;
}

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

function integer(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}

const program = new Command()
  .name('npm run sandbox --')
  .description('run the simulated sandbox upstream (the other end of channel_code "sandbox") on its own')
  .addOption(
    new Option('--port <port>', 'port to listen on')
      .env('SANDBOX_PORT')
      .argParser(integer(1, 65535))
      .default(8090),
  )
  .addOption(new Option('--host <host>', 'address to bind').env('SANDBOX_HOST').default('127.0.0.1'))
  .addOption(
    new Option('--database-url <url>', 'Postgres for its tables (required)').env('SANDBOX_DATABASE_URL'),
  )
  .addOption(
    new Option(
      '--public-base-url <url>',
      'where browsers reach it, for pay_url and sign_url (default http://<host>:<port>)',
    ).env('SANDBOX_PUBLIC_BASE_URL'),
  )
  .addOption(
    new Option('--refund-delay-ms <ms>', 'how long a refund stays processing before it settles')
      .env('SANDBOX_REFUND_DELAY_MS')
      .argParser(integer(0, 600_000))
      .default(1_000),
  )
  .addOption(
    new Option(
      '--transfer-confirm-window-ms <ms>',
      'how long an openid payee has to confirm a transfer before it is cancelled',
    )
      .env('SANDBOX_TRANSFER_CONFIRM_WINDOW_MS')
      .argParser(integer(1_000, 7 * 24 * 3_600_000))
      .default(24 * 3_600_000),
  )
  .addOption(
    new Option('--log-level <level>', 'log level')
      .env('LOG_LEVEL')
      .choices(['error', 'warn', 'info', 'debug'])
      .default('info'),
  )
  .addHelpText(
    'after',
    '\nSANDBOX_SECRET (required, environment only) is the secret it shares with the gateway: calls\n' +
      'to /sandbox/v1 and the callbacks it posts are signed with it (Sandbox-Signature).',
  )
  .showHelpAfterError();

async function main(): Promise<void> {
  const options = program.parse(process.argv).opts<Options>();
  const { databaseUrl } = options;
  const secret = process.env.SANDBOX_SECRET;
  if (!databaseUrl) throw new Error('set SANDBOX_DATABASE_URL or --database-url');
  if (!secret) throw new Error('set SANDBOX_SECRET, the secret the gateway signs with too');

  const logger = createLogger({
    level: options.logLevel,
    defaultMeta: { service: 'durapay-sandbox' },
  });
  const db = connectDatabase(databaseUrl);
  const sandbox = await serveSandbox({
    db,
    secret,
    port: options.port,
    host: options.host,
    publicBaseUrl: options.publicBaseUrl,
    refundDelayMs: options.refundDelayMs,
    transferConfirmWindowMs: options.transferConfirmWindowMs,
    logger,
  }).catch(async (err: unknown) => {
    await db.close();
    throw err;
  });
  say(`sandbox upstream on ${sandbox.url} (database ${describeDatabaseUrl(databaseUrl)})`);
  say(`  for the gateway: SANDBOX_BASE_URL=${sandbox.url} and the same SANDBOX_SECRET`);
  say('Press Ctrl-C to stop.');

  const stop = async () => {
    await sandbox.close();
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((err: unknown) => {
  say(`sandbox: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
