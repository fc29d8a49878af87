/* eslint-disable @typescript-eslint/no-require-imports -- the one place that loads a command's code when it runs */
/*
 * Each command's code, loaded only when that command runs: the gateway's parts (the API, the
 * worker and its bundler, the database, the simulated upstreams) take seconds to load, and
 * `durapay --help`, `sign` or `keys new` need none of them.
 *
 * `require`, not `import()`: the CLI is CommonJS. In a checkout bin/durapay.js compiles the
 * sources with tsx's CommonJS hook, which sees `require` but not `import()` (that goes to Node's
 * ES module loader, which would neither find `./x.js` among the sources nor compile `./x.ts`).
 * The type-only imports give each loader its module's type and keep the import rules checked.
 */
import type * as Api from './commands/api';
import type * as Apps from './commands/apps';
import type * as Bundle from './commands/bundle';
import type * as Doctor from './commands/doctor';
import type * as Keys from './commands/keys';
import type * as KeysNew from './commands/keys-new';
import type * as Merchants from './commands/merchants';
import type * as Migrate from './commands/migrate';
import type * as Operators from './commands/operators';
import type * as Postgres from './commands/postgres';
import type * as Reconcile from './commands/reconcile';
import type * as Sandbox from './commands/sandbox';
import type * as Sign from './commands/sign';
import type * as Start from './commands/start';
import type * as Try from './commands/try';
import type * as Versions from './commands/versions';
import type * as Worker from './commands/worker';

export const commands = {
  api: (): typeof Api => require('./commands/api'),
  apps: (): typeof Apps => require('./commands/apps'),
  bundle: (): typeof Bundle => require('./commands/bundle'),
  doctor: (): typeof Doctor => require('./commands/doctor'),
  keys: (): typeof Keys => require('./commands/keys'),
  keysNew: (): typeof KeysNew => require('./commands/keys-new'),
  merchants: (): typeof Merchants => require('./commands/merchants'),
  migrate: (): typeof Migrate => require('./commands/migrate'),
  operators: (): typeof Operators => require('./commands/operators'),
  postgres: (): typeof Postgres => require('./commands/postgres'),
  reconcile: (): typeof Reconcile => require('./commands/reconcile'),
  sandbox: (): typeof Sandbox => require('./commands/sandbox'),
  sign: (): typeof Sign => require('./commands/sign'),
  start: (): typeof Start => require('./commands/start'),
  try: (): typeof Try => require('./commands/try'),
  versions: (): typeof Versions => require('./commands/versions'),
  worker: (): typeof Worker => require('./commands/worker'),
};
