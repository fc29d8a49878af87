import { AppRepository, APP_ID_PATTERN, parseScopes } from '../../modules/apps';
import { resolveMasterKey } from '../../platform/crypto/master-key';
import { SecretBox } from '../../platform/crypto/secret-box';
import { boot } from '../boot';
import { fail } from '../config';
import { withDatabase } from '../database';

function withApps<T>(fn: (apps: AppRepository) => Promise<T>): Promise<T> {
  const { config, logger } = boot('cli');
  const box = new SecretBox(resolveMasterKey(config));
  return withDatabase(config, logger, (db) => fn(new AppRepository(db, box)));
}

function checkAppId(appId: string): void {
  if (!APP_ID_PATTERN.test(appId))
    fail(`"${appId}" is not an app id (app_ + 16 lowercase base32 characters)`);
}

/** `durapay apps create`. */
export async function create(opts: { name: string; scopes: string; json?: boolean }): Promise<void> {
  if (opts.name.length < 1 || opts.name.length > 128) fail('--name must be 1-128 characters');
  let scopes;
  try {
    scopes = parseScopes(opts.scopes);
  } catch (err) {
    fail(err);
  }
  const created = await withApps((repo) => repo.create(opts.name, scopes)).catch(fail);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(created)}\n`);
  } else {
    process.stdout.write(
      `app_id          ${created.app_id}\nsecret          ${created.secret}\n` +
        `webhook_secret  ${created.webhook_secret}\nscopes          ${created.scopes.join(',')}\n`,
    );
    console.error('Store the secrets now: they are encrypted at rest and never shown again.');
  }
}

/** `durapay apps list`. */
export async function list(opts: { json?: boolean }): Promise<void> {
  const apps = await withApps((repo) => repo.list()).catch(fail);
  for (const a of apps) {
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
  if (!opts.json && apps.length === 0) console.error('no apps yet: durapay apps create --name NAME');
}

/** `durapay apps disable` and `apps enable`. */
export async function setStatus(appId: string, status: 'active' | 'disabled'): Promise<void> {
  checkAppId(appId);
  const found = await withApps((repo) => repo.setStatus(appId, status)).catch(fail);
  if (!found) fail(`no app ${appId}`);
  console.error(`${appId} is ${status}`);
}

/** `durapay apps rotate-secret`. */
export async function rotateSecret(
  appId: string,
  opts: { webhook?: boolean; json?: boolean },
): Promise<void> {
  checkAppId(appId);
  const which = opts.webhook ? 'webhook_secret' : 'secret';
  const value = await withApps((repo) => repo.rotate(appId, which)).catch(fail);
  if (!value) fail(`no app ${appId}`);
  process.stdout.write(
    opts.json ? `${JSON.stringify({ app_id: appId, [which]: value })}\n` : `${which}  ${value}\n`,
  );
}
