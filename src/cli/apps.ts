import fs from 'node:fs';
import type { Command } from 'commander';
import type { Config } from '../platform/config';
import { AppRepository, APP_ID_PATTERN, parseScopes } from '../modules/apps';
import { signRequest } from '../platform/crypto/http-signature';
import type { Logger } from '../platform/logger';
import { resolveMasterKey } from '../platform/crypto/master-key';
import { SecretBox } from '../platform/crypto/secret-box';
import { withDatabase } from './database';
import { readDevApp } from './dev-app';

type Boot = (role: string) => { config: Config; logger: Logger };
type Fail = (err: unknown) => never;

function withApps<T>(boot: Boot, fn: (apps: AppRepository) => Promise<T>): Promise<T> {
  const { config, logger } = boot('cli');
  const box = new SecretBox(resolveMasterKey(config));
  return withDatabase(config, logger, (db) => fn(new AppRepository(db, box)));
}

function checkAppId(appId: string, fail: Fail): void {
  if (!APP_ID_PATTERN.test(appId))
    fail(`"${appId}" is not an app id (app_ + 16 lowercase base32 characters)`);
}

/** `durapay apps …`: provisioning against the same database the server uses (SPEC §2). */
export function registerAppCommands(program: Command, boot: Boot, fail: Fail): void {
  const apps = program.command('apps').description('create and manage client applications');

  apps
    .command('create')
    .description('create an app and print its credentials (shown once)')
    .requiredOption('--name <name>', 'a name for people (1-128 characters)')
    .option('--scopes <list>', 'comma-separated: payments, merchants', 'payments,merchants')
    .option('--json', 'print {"app_id","secret","webhook_secret","scopes"} as one JSON line')
    .action(async (opts: { name: string; scopes: string; json?: boolean }) => {
      if (opts.name.length < 1 || opts.name.length > 128) fail('--name must be 1-128 characters');
      let scopes;
      try {
        scopes = parseScopes(opts.scopes);
      } catch (err) {
        fail(err);
      }
      const created = await withApps(boot, (repo) => repo.create(opts.name, scopes)).catch(fail);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(created)}\n`);
      } else {
        process.stdout.write(
          `app_id          ${created.app_id}\nsecret          ${created.secret}\n` +
            `webhook_secret  ${created.webhook_secret}\nscopes          ${created.scopes.join(',')}\n`,
        );
        console.error('Store the secrets now: they are encrypted at rest and never shown again.');
      }
    });

  apps
    .command('list')
    .description('list apps (never their secrets)')
    .option('--json', 'one JSON object per line')
    .action(async (opts: { json?: boolean }) => {
      const list = await withApps(boot, (repo) => repo.list()).catch(fail);
      for (const a of list) {
        const row = {
          app_id: a.appId,
          name: a.name,
          scopes: a.scopes,
          status: a.status,
          created_at: a.createdAt.toISOString(),
        };
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(row)}\n`
            : `${row.app_id}  ${row.status.padEnd(8)}  ${row.scopes.join(',').padEnd(18)}  ${row.created_at}  ${row.name}\n`,
        );
      }
      if (!opts.json && list.length === 0) console.error('no apps yet: durapay apps create --name NAME');
    });

  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    apps
      .command(`${name} <appId>`)
      .description(
        `${name} an app (${status === 'disabled' ? 'its requests get 403 permission_denied' : 'again'})`,
      )
      .action(async (appId: string) => {
        checkAppId(appId, fail);
        const found = await withApps(boot, (repo) => repo.setStatus(appId, status)).catch(fail);
        if (!found) fail(`no app ${appId}`);
        console.error(`${appId} is ${status}`);
      });
  }

  apps
    .command('rotate-secret <appId>')
    .description(
      'replace the signing secret (or, with --webhook, the webhook secret); the old one stops working at once',
    )
    .option('--webhook', 'rotate the webhook_secret instead')
    .option('--json', 'print the new secret as JSON')
    .action(async (appId: string, opts: { webhook?: boolean; json?: boolean }) => {
      checkAppId(appId, fail);
      const which = opts.webhook ? 'webhook_secret' : 'secret';
      const value = await withApps(boot, (repo) => repo.rotate(appId, which)).catch(fail);
      if (!value) fail(`no app ${appId}`);
      process.stdout.write(
        opts.json ? `${JSON.stringify({ app_id: appId, [which]: value })}\n` : `${which}  ${value}\n`,
      );
    });

  program
    .command('sign')
    .description('print the signature headers of a request, for curl (defaults to the dev app)')
    .option('--app-id <id>', 'app id (default: DURAPAY_APP_ID, else .durapay/dev-app.json)')
    .option('--secret <secret>', 'app secret (default: DURAPAY_APP_SECRET, else .durapay/dev-app.json)')
    .option('--method <method>', 'HTTP method', 'GET')
    .requiredOption('--path <path>', 'path and query string exactly as sent, e.g. /api/v1/pay/query/P1')
    .option('--body <file>', 'file holding the exact body bytes, or - for standard input')
    .option('--format <format>', 'headers (one per line), curl (-H arguments) or json', 'headers')
    .action(
      (opts: {
        appId?: string;
        secret?: string;
        method: string;
        path: string;
        body?: string;
        format: string;
      }) => {
        const { config } = boot('cli');
        const dev = readDevApp(config.dataDir);
        const appId = opts.appId ?? process.env.DURAPAY_APP_ID ?? dev?.app_id;
        const secret = opts.secret ?? process.env.DURAPAY_APP_SECRET ?? dev?.secret;
        if (!appId || !secret)
          fail('give --app-id and --secret (or run npm start once to create the dev app)');
        if (!opts.path.startsWith('/')) fail('--path must start with /');
        if (!['headers', 'curl', 'json'].includes(opts.format))
          fail('--format must be headers, curl or json');
        let body: Buffer | undefined;
        try {
          body = opts.body === undefined ? undefined : fs.readFileSync(opts.body === '-' ? 0 : opts.body);
        } catch (err) {
          fail(err);
        }
        const headers = signRequest({
          method: opts.method.toUpperCase(),
          target: opts.path,
          body,
          keyId: appId,
          secret,
        });
        const names: Record<string, string> = {
          'content-digest': 'Content-Digest',
          'signature-input': 'Signature-Input',
          signature: 'Signature',
        };
        const pairs = Object.entries(headers).map(([k, v]) => [names[k] ?? k, v] as const);
        if (opts.format === 'json') {
          process.stdout.write(`${JSON.stringify(Object.fromEntries(pairs))}\n`);
        } else if (opts.format === 'curl') {
          const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
          process.stdout.write(`${pairs.map(([k, v]) => `-H ${quote(`${k}: ${v}`)}`).join(' ')}\n`);
        } else {
          process.stdout.write(pairs.map(([k, v]) => `${k}: ${v}\n`).join(''));
        }
      },
    );
}
