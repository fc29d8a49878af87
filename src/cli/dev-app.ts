import fs from 'node:fs';
import path from 'node:path';
import type { Database } from '../platform/db';
import { AppRepository } from '../modules/apps';
import { SecretBox } from '../platform/crypto/secret-box';
import { DEV_APP_FILE, type DevAppFile } from './credentials';

/**
 * On an empty database, creates the `dev` app (both scopes) and writes its credentials to
 * `.durapay/dev-app.json` (mode 0600), so a newcomer can call the API at once. Returns the
 * credentials only when it created them: they are shown once.
 */
export async function ensureDevApp(
  db: Database,
  masterKey: Buffer,
  dataDir: string,
  baseUrl: string,
): Promise<DevAppFile | undefined> {
  const apps = new AppRepository(db, new SecretBox(masterKey));
  if ((await apps.count()) > 0) return undefined;
  const credentials = await apps.create('dev', ['payments', 'merchants']);
  const file: DevAppFile = { name: 'dev', ...credentials, base_url: baseUrl };
  fs.writeFileSync(path.join(dataDir, DEV_APP_FILE), `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  return file;
}
