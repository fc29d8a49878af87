import type { Command } from 'commander';
import { commands } from './lazy';
import type { SignOptions } from './commands/sign';

/** `durapay apps …`: provisioning against the same database the server uses (SPEC §2); and `durapay sign`. */
export function registerAppCommands(program: Command): void {
  const apps = program.command('apps').description('create and manage client applications');

  apps
    .command('create')
    .description('create an app and print its credentials (shown once)')
    .requiredOption('--name <name>', 'a name for people (1-128 characters)')
    .option('--scopes <list>', 'comma-separated: payments, merchants', 'payments,merchants')
    .option('--json', 'print {"app_id","secret","webhook_secret","scopes"} as one JSON line')
    .action((opts: { name: string; scopes: string; json?: boolean }) => commands.apps().create(opts));

  apps
    .command('list')
    .description('list apps (never their secrets)')
    .option('--json', 'one JSON object per line')
    .action((opts: { json?: boolean }) => commands.apps().list(opts));

  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    apps
      .command(`${name} <appId>`)
      .description(
        `${name} an app (${status === 'disabled' ? 'its requests get 403 permission_denied' : 'again'})`,
      )
      .action((appId: string) => commands.apps().setStatus(appId, status));
  }

  apps
    .command('rotate-secret <appId>')
    .description(
      'replace the signing secret (or, with --webhook, the webhook secret); the old one stops working at once',
    )
    .option('--webhook', 'rotate the webhook_secret instead')
    .option('--json', 'print the new secret as JSON')
    .action((appId: string, opts: { webhook?: boolean; json?: boolean }) =>
      commands.apps().rotateSecret(appId, opts),
    );

  program
    .command('sign')
    .description('print the signature headers of a request, for curl (defaults to the dev app)')
    .option('--app-id <id>', 'app id (default: DURAPAY_APP_ID, else .durapay/dev-app.json)')
    .option('--secret <secret>', 'app secret (default: DURAPAY_APP_SECRET, else .durapay/dev-app.json)')
    .option('--method <method>', 'HTTP method', 'GET')
    .requiredOption('--path <path>', 'path and query string exactly as sent, e.g. /api/v1/pay/query/P1')
    .option('--body <file>', 'file holding the exact body bytes, or - for standard input')
    .option('--format <format>', 'headers (one per line), curl (-H arguments) or json', 'headers')
    .action((opts: SignOptions) => commands.sign().sign(opts));
}
