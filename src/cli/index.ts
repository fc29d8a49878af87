/*
 * The `durapay` command. Human-facing output goes to stderr; machine output (JSON) to stdout.
 * This file is the command table only: each command's code is loaded when it runs (./lazy).
 */
import { Command } from 'commander';
import { registerAppCommands } from './apps';
import { fail } from './config';
import { registerKeyCommands } from './keys';
import { registerOperatorCommands } from './operators';
import { commands } from './lazy';

const program = new Command()
  .name('durapay')
  .description('durapay payment gateway')
  .showHelpAfterError()
  .enablePositionalOptions();

program
  .command('start')
  .description('run everything for development: Postgres, Temporal dev server, migrations, worker and API')
  .action(() => commands.start().start());

program
  .command('api')
  .description('run the HTTP API (needs DATABASE_URL and TEMPORAL_ADDRESS)')
  .action(() => commands.api().api());

program
  .command('worker')
  .description('run the Temporal worker (needs DATABASE_URL and TEMPORAL_ADDRESS)')
  .action(() => commands.worker().worker());

program
  .command('migrate')
  .description(
    "apply pending database migrations (to DATABASE_URL, or to the embedded Postgres), the sandbox upstream's too when it is enabled, then seal applicant data still in plain text",
  )
  .action(() => commands.migrate().migrate());

program
  .command('postgres')
  .description('run only the embedded Postgres in the foreground and print its URL (for tools and tests)')
  .option('--data-dir <dir>', 'data directory (default: <DURAPAY_DATA_DIR>/postgres)')
  .option('--port <port>', 'port (default: DURAPAY_PG_PORT)')
  .option('--database <name>', 'database to create', 'durapay')
  .action((opts: { dataDir?: string; port?: string; database: string }) =>
    commands.postgres().postgres(opts),
  );

program
  .command('doctor')
  .description('run a diagnostic workflow end to end: worker, timer, database writes')
  .option('--pause-ms <ms>', 'pause between the two steps', '500')
  .action((opts: { pauseMs: string }) => commands.doctor().doctor(opts));

registerAppCommands(program);
registerKeyCommands(program);
registerOperatorCommands(program);

program
  .command('merchants')
  .description("manage merchants' channel accounts")
  .command('attach')
  .description(
    "attach merchants' existing channel accounts, each confirmed by its channel first: one from the arguments (durapay merchants attach --app APP m-1 wechatpay sub_mchid=1900000109), or many from a CSV whose header names merchant_id, channel_code and the account fields the channels declare (sub_mchid, smid, …: docs/merchants.md); exits 1 when any row is refused",
  )
  .argument('[account...]', '<merchant_id> <channel_code> field=value…')
  .requiredOption('--app <app_id>', 'the app the merchants belong to')
  .option('--csv <file>', 'a CSV of accounts to attach (- for standard input)')
  .option('--concurrency <n>', 'accounts confirmed at once', '4')
  .option('--json', "print each row's outcome as one JSON line")
  .action((account: string[], opts: { app: string; csv?: string; concurrency: string; json?: boolean }) =>
    commands.merchants().attach(account, opts),
  );

program
  .command('reconcile')
  .description(
    "reconcile a day by hand: each account of the channel that took orders that day (or --account), its statement against durapay's books; follows the runs and prints each summary as a JSON line; exits 1 when a run failed or found mismatches",
  )
  .requiredOption('--channel <code>', 'the channel (wechatpay, alipay, sandbox)')
  .requiredOption('--date <YYYY-MM-DD>', "the day, in China time (the channels' statements)")
  .option('--account <account>', 'only this account (a sub_mchid, smid, user id or sub-merchant number)')
  .option('--no-wait', 'start the runs and return')
  .action((opts: { channel: string; date: string; account?: string; wait: boolean }) =>
    commands.reconcile().reconcile({ ...opts, noWait: !opts.wait }),
  );

program
  .command('versions')
  .description(
    'count, for each patch marker the workflow code declares (`patched()`), the open runs of its workflow type that lack it: a marker with 0 open runs lacking it may be deprecated (docs/operations.md, "Retiring a workflow version")',
  )
  .option(
    '--task-queue <name>',
    'only runs on this task queue (default: every task queue of TEMPORAL_NAMESPACE)',
  )
  .option('--json', 'one JSON object per marker: workflow_type, marker, open_runs_lacking, open_runs')
  .addHelpText(
    'after',
    `
Open runs are the Running runs of the workflow type in TEMPORAL_NAMESPACE at
TEMPORAL_ADDRESS, counted by the server's visibility store. A run lacks a
marker while its TemporalChangeVersion search attribute does not hold it: it
started before the marker's release, or has not reached the code that asks the
marker yet. The count cannot tell which, so it errs on the side of waiting: at
0, no open run can take the old branch, and the marker may be deprecated
(deprecatePatch), then deleted.`,
  )
  .action((opts: { taskQueue?: string; json?: boolean }) => commands.versions().versions(opts));

program
  .command('try')
  .description(
    'create a sandbox order through the running gateway, signed as the dev app, and print its pay_url',
  )
  .option('--amount <fen>', 'amount in fen', '100')
  .option('--subject <text>', 'what the buyer sees', 'durapay try')
  .option(
    '--notify-url <url>',
    'where payment.succeeded is posted (default: http://127.0.0.1:9/durapay-try, where nothing listens)',
  )
  .option('--json', "print the API's data as JSON")
  .option('--url <base>', 'the gateway (default: http://localhost:PORT, PORT being 8080 unless set)')
  .option(
    '--barcode [buyer]',
    'a barcode payment with a sandbox buyer code, followed until paid or closed; buyer: pays, confirms_later (default), never_confirms, insufficient, answer_lost, confirms_at_reverse, reverse_refused, expired',
  )
  .action(
    (opts: {
      amount: string;
      subject: string;
      notifyUrl?: string;
      json?: boolean;
      url?: string;
      barcode?: string | boolean;
    }) => commands.try().tryOrder(opts),
  );

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
  .action((channel: string, opts: { port?: string; keys?: string; platformCertificates?: boolean }) =>
    commands.sandbox().sandbox(channel, opts),
  );

program
  .command('bundle')
  .description(
    'bundle the workflow code into one file for DURAPAY_WORKFLOW_BUNDLE (done in the Docker build)',
  )
  .requiredOption('--out <file>', 'where to write the bundle')
  .option('--diagnostics', 'also bundle the diagnostic (doctor) and benchmark workflows')
  .action((opts: { out: string; diagnostics?: boolean }) => commands.bundle().bundle(opts));

program.parseAsync(process.argv).catch(fail);
