import fs from 'node:fs';
import path from 'node:path';
import type { AppCredentials } from '../modules/apps';

export const DEV_APP_FILE = 'dev-app.json';

/** `.durapay/dev-app.json`: the dev app's credentials, written by the first `npm start`. */
export interface DevAppFile extends AppCredentials {
  name: string;
  base_url: string;
}

export function readDevApp(dataDir: string): DevAppFile | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, DEV_APP_FILE), 'utf8')) as DevAppFile;
  } catch {
    return undefined;
  }
}

/**
 * The app a command signs its requests as: the options given, else DURAPAY_APP_ID and
 * DURAPAY_APP_SECRET, else the dev app saved in the data directory; undefined when none is known.
 */
export function signingApp(
  dataDir: string,
  given: { appId?: string; secret?: string } = {},
): { appId: string; secret: string } | undefined {
  const dev = readDevApp(dataDir);
  const appId = given.appId ?? process.env.DURAPAY_APP_ID ?? dev?.app_id;
  const secret = given.secret ?? process.env.DURAPAY_APP_SECRET ?? dev?.secret;
  return appId && secret ? { appId, secret } : undefined;
}
